import { afterEach, describe, expect, it } from 'vitest';
import { DocumentClient, isVespaBulkError, type DocumentResponse } from '../../src/index.js';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { startFaultFront, type Cut, type Exchange, type FaultFront } from '../support/fault-front.js';
import { cutOf, faultsOf, type Fault } from '../support/cut-points.js';
import { runInProcess } from '../support/in-process-cli.js';
import { overProtocols, protocolFlag } from '../support/protocols.js';

/**
 * Single documents through the fault front, which breaks the first answer to each request after its headers (right
 * after them, inside the JSON, right before its closing brace, after its last byte without the end), every way each
 * protocol's answers break. A get whose answer is cut is an error or is sent again, never a cut document handed back
 * as a 200 (`DocumentClient.get`, and the `get` command, which prints it); a put is sent again and answered whole;
 * an increment, not safe to send twice, is an error, applied once.
 */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const documents = 8;

async function seeded(): Promise<DocumentServer> {
  const server = await startDocumentServer({ port: 0 });
  cleanups.push(() => server.close());
  server.store.seed(
    Array.from({ length: documents }, (_, i) => ({
      id: `id:ns:music::g${i}`,
      fields: { title: `a title long enough to cut ${i}`, n: i },
    })),
  );
  return server;
}

/** The places to cut a single document's answer at, the one for request `k` of them. */
function placeOf(fault: Fault, body: Buffer, k: number): { name: string; at: number } {
  const places = [
    { name: 'right after the headers', at: 0 },
    { name: 'inside the JSON', at: Math.floor(body.length / 2) },
    { name: 'right before the closing brace', at: body.length - 1 },
    // After the last byte, without the end: only a fault that does not end the answer cleanly makes that a cut.
    ...(fault.clean || fault.framing === 'content-length'
      ? []
      : [{ name: 'after the last byte, without the end', at: body.length }]),
  ];
  return places[k % places.length];
}

/** A front that cuts the first answer to each request `which` picks, the n-th such at the n-th place. */
async function frontCutting(
  server: DocumentServer,
  fault: Fault,
  which: (x: Exchange) => boolean,
): Promise<FaultFront & { places: Map<string, string> }> {
  const places = new Map<string, string>();
  let n = 0;
  const front = await startFaultFront(server.url, {
    script: (x): Cut | undefined => {
      if (!which(x) || x.arrival !== 1) return undefined;
      const place = placeOf(fault, x.body, n++);
      places.set(x.key, place.name);
      return cutOf(fault, place.at, n % 3 === 0 ? 'apart' : 'together');
    },
  });
  cleanups.push(() => front.close());
  return Object.assign(front, { places });
}

const keyOf = (method: string, i: number): string => `${method} /document/v1/ns/music/docid/g${i}`;

describe.each(overProtocols)(
  'single documents over $protocol whose answers are broken after their headers',
  ({ protocol }) => {
    it.each(faultsOf[protocol])(
      'DocumentClient.get, $name: the whole document or an error, never a cut one as a 200',
      async (fault) => {
        const server = await seeded();
        const front = await frontCutting(server, fault, (x) => x.method === 'GET');
        const client = new DocumentClient({
          endpoint: front.url,
          protocol,
          retryPolicy: { baseDelayMs: 1, maxDelayMs: 10 },
          requestTimeoutMs: 10_000,
        });
        cleanups.push(() => client.close());
        let answered = 0;
        for (let i = 0; i < documents; i++) {
          const outcome = await client.get(`id:ns:music::g${i}`).then(
            (res: DocumentResponse) => ({ res }),
            (err: unknown) => ({ err }),
          );
          const why = `${fault.name}, g${i} cut ${front.places.get(keyOf('GET', i))}`;
          if ('err' in outcome) {
            expect(isVespaBulkError(outcome.err), `${why}: ${String(outcome.err)}`).toBe(true);
            continue;
          }
          // Answered: the document whole, as the raw bytes say too, after the cut answer was sent again.
          answered++;
          expect(outcome.res.status, why).toBe(200);
          expect(outcome.res.body, why).toEqual({
            pathId: `/document/v1/ns/music/docid/g${i}`,
            id: `id:ns:music::g${i}`,
            fields: { title: `a title long enough to cut ${i}`, n: i },
          });
          expect(JSON.parse(outcome.res.raw.toString()), why).toEqual(outcome.res.body);
          expect(front.seen.get(keyOf('GET', i)), why).toBe(2);
        }
        expect(front.cuts.length).toBe(documents);
        // A get is safe to send again: the client did, every time.
        expect(answered, fault.name).toBe(documents);
      },
    );

    it.each(faultsOf[protocol])(
      'DocumentClient.put and an increment, $name: the put sent again and answered whole, the increment an error and applied once',
      async (fault) => {
        const server = await seeded();
        const front = await frontCutting(server, fault, (x) => x.method === 'POST' || x.method === 'PUT');
        const client = new DocumentClient({
          endpoint: front.url,
          protocol,
          retryPolicy: { baseDelayMs: 1, maxDelayMs: 10 },
          requestTimeoutMs: 10_000,
        });
        cleanups.push(() => client.close());
        for (let i = 0; i < documents; i++) {
          // Even documents get a put (safe), odd ones an increment (not safe: applied twice it would differ).
          const put = i % 2 === 0;
          const outcome = await (put
            ? client.put(`id:ns:music::g${i}`, { title: 'put', n: 100 + i })
            : client.update(`id:ns:music::g${i}`, { n: { increment: 1 } })
          ).then(
            (res: DocumentResponse) => ({ res }),
            (err: unknown) => ({ err }),
          );
          const why = `${fault.name}, ${put ? 'put' : 'increment'} g${i} cut ${front.places.get(keyOf(put ? 'POST' : 'PUT', i))}: ${'res' in outcome ? JSON.stringify(outcome.res.body) : String(outcome.err)}`;
          if (put) {
            expect('res' in outcome ? outcome.res.status : String(outcome.err), why).toBe(200);
            expect('res' in outcome && outcome.res.body, why).toEqual({
              pathId: `/document/v1/ns/music/docid/g${i}`,
              id: `id:ns:music::g${i}`,
            });
            expect(server.store.get(`id:ns:music::g${i}`)!.fields, why).toEqual({ title: 'put', n: 100 + i });
          } else {
            // Applied once, and said to be unknown: an error, not a 200.
            expect(server.store.get(`id:ns:music::g${i}`)!.fields.n, why).toBe(i + 1);
            expect(front.seen.get(keyOf('PUT', i)), why).toBe(1);
            expect('err' in outcome && isVespaBulkError(outcome.err), why).toBe(true);
          }
        }
      },
    );

    it.each(faultsOf[protocol])(
      'the get command, $name: exit 0 printing the whole document, or exit 1 printing none',
      async (fault) => {
        const server = await seeded();
        const front = await frontCutting(server, fault, (x) => x.method === 'GET');
        for (let i = 0; i < 4; i++) {
          const run = await runInProcess(['get', `id:ns:music::g${i}`, '-t', front.url, ...protocolFlag(protocol)]);
          const why = `${fault.name}, g${i} cut ${front.places.get(keyOf('GET', i))}: exit ${run.code}, stdout ${run.stdout}, stderr ${run.stderr}`;
          if (run.code === 0)
            expect(JSON.parse(run.stdout), why).toEqual({
              pathId: `/document/v1/ns/music/docid/g${i}`,
              id: `id:ns:music::g${i}`,
              fields: { title: `a title long enough to cut ${i}`, n: i },
            });
          else {
            expect(run.code, why).toBe(1);
            expect(run.stdout, why).toBe('');
          }
        }
        expect(front.cuts.length, fault.name).toBe(4);
      },
    );
  },
);
