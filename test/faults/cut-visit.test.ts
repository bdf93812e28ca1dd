import { afterEach, describe, expect, it } from 'vitest';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { visit, type VisitedDocument } from '../../src/visit/visit.js';
import { cuttingFront, faultsOf } from '../support/cut-points.js';
import { overProtocols } from '../support/protocols.js';

/**
 * Incomplete is never complete: sliced visits through the fault front, which breaks 70 % of the visit answers after
 * their headers, at the places that matter (right after a continuation line, around the sessionStats line, inside a
 * line...), in every way each protocol has: RST_STREAM with each code, GOAWAY at and below the stream, TCP FIN and
 * RST, and answers that end cleanly but short (END_STREAM early; a `Connection: close` answer cut). Every document
 * arrives exactly once, whole; each broken answer costs a resumption from the slice's last continuation (an answer
 * that ends without its closing lines is cut, not finished); and the visit reports success only because everything
 * came. For the JSONL stream and the plain JSON object (a server without JSONL), streamed and in pages.
 */

const documents = 600;
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function seeded(): Promise<DocumentServer> {
  // A continuation line every 20 documents: several per answer, so the cuts fall between them too.
  const server = await startDocumentServer({ port: 0, visitChunkDocuments: 20 });
  cleanups.push(() => server.close());
  server.store.seed(
    Array.from({ length: documents }, (_, i) => ({ id: `id:ns:music::v${i}`, fields: { title: `t${i}`, n: i } })),
  );
  return server;
}

/** The document's fields, or a failure naming the bytes when they are not a whole document. */
function wholeFields(d: VisitedDocument): unknown {
  try {
    return d.fields;
  } catch {
    throw new Error(`part of a document was delivered as a document: ${d.raw.toString()}`);
  }
}

type Form = 'JSONL, streamed' | 'plain JSON, streamed' | 'plain JSON, pages';

describe.each(overProtocols)(
  'a sliced visit over $protocol whose answers are broken after their headers',
  ({ protocol }) => {
    const forms: Form[] = ['JSONL, streamed', 'plain JSON, streamed', 'plain JSON, pages'];
    // A GOAWAY below the stream breaks every answer on its connection alike: the JSONL stream alone meets it, to keep
    // the file short.
    const cases = faultsOf[protocol].flatMap((fault, f) =>
      forms
        .filter((form) => fault.last !== 'below' || form === 'JSONL, streamed')
        .map((form, k) => ({ fault, form, seed: 100 * f + k + (protocol === 'h2' ? 0 : 5000) })),
    );

    it.each(cases)(
      '$fault.name ($form, seed $seed): every document once, each cut resumed, success only when all came',
      async ({ fault, form, seed }) => {
        const server = await seeded();
        const front = await cuttingFront(server.url, fault, seed, { plainJsonOnly: form !== 'JSONL, streamed' });
        cleanups.push(() => front.close());
        const v = visit({
          endpoint: front.url,
          protocol,
          namespace: 'ns',
          documentType: 'music',
          slices: 4,
          stream: form !== 'plain JSON, pages',
          // Answers of 60 documents (three continuation lines each when streamed): many answers, many cuts.
          wantedDocumentCount: 60,
          requestTimeoutMs: 10_000,
          // A visit that hangs fails here, not at the test's timeout.
          signal: AbortSignal.timeout(10_000),
          retry: { baseDelayMs: 1, maxDelayMs: 10, maxRetries: 40 },
        });
        const ids: string[] = [];
        for await (const d of v) {
          ids.push(d.id);
          // Whole: a cut answer never yields part of a document.
          expect(wholeFields(d), d.id).toEqual({
            title: `t${d.id.slice('id:ns:music::v'.length)}`,
            n: Number(d.id.slice('id:ns:music::v'.length)),
          });
        }
        const report = await v.report;
        const why = `${fault.name}, ${form}: cuts ${JSON.stringify(Object.fromEntries(front.where))}`;
        // Every document exactly once.
        expect(ids.length, why).toBe(documents);
        expect(new Set(ids).size, why).toBe(documents);
        expect([...ids].sort(), why).toEqual(
          server.store
            .all()
            .map((d) => d.id)
            .sort(),
        );
        expect(report.ok, why).toBe(true);
        expect(report.documents, why).toBe(documents);
        expect(report.protocol, why).toBe(protocol);
        // Each broken answer was taken as broken: the slice resumed from its last continuation (a retry), not as if the
        // answer had been whole. (A connection-level fault breaks the other answers on the connection too: more retries.)
        // The faults happened, at several places.
        expect(front.cuts.length, why).toBeGreaterThan(5);
        expect(front.where.size, why).toBeGreaterThan(2);
        const retries = report.slices.reduce((n, s) => n + s.retries, 0);
        expect(retries, why).toBeGreaterThanOrEqual(front.cuts.length);
      },
    );
  },
);
