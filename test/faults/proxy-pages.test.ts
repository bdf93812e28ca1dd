import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DocumentClient, feed, type OperationResult } from '../../src/index.js';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { bulkOperation, type BulkSummary } from '../../src/visit/bulk.js';
import { startFaultFront, type Exchange, type Page } from '../support/fault-front.js';
import { expectSpoke, overProtocols } from '../support/protocols.js';
import { failureLines, failureReasons, quickRetries, tempDir, writeJsonl, type Op } from './harness.js';

/**
 * A proxy between the client and the container that passes a write on, the container applies it, and the proxy then
 * answers with a page of its own, 502 or 503 (its upstream went away, it timed out on the answer). Vespa's handler
 * never answers either (vespa-facts.md), so the client cannot tell such an answer from one whose write was never
 * done: an operation safe to repeat is sent again and succeeds; an increment or a conditional write is not sent
 * again (it would apply twice, or read as a condition not met), and ends in the failure output with a reason that
 * says it may have been applied. See `retryDelay` (http/retry-delay.ts).
 */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const titles: Record<number, string> = {
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Temporarily Unavailable',
};

const pageOf = (status: number): Page => ({
  status,
  contentType: 'text/html',
  body: Buffer.from(
    `<html><head><title>${status} ${titles[status]}</title></head><body><center><h1>${status}</h1></center><hr><center>nginx</center></body></html>\n`,
  ),
});

const perKind = 40;

function corpus(): { ops: Op[]; seeded: Array<{ id: string; fields: Record<string, unknown> }> } {
  const ops: Op[] = [];
  const seeded: Array<{ id: string; fields: Record<string, unknown> }> = [];
  for (let k = 0; k < perKind; k++) {
    ops.push({ put: `id:ns:music::p${k}`, fields: { title: `t${k}`, n: k } });
    ops.push({ update: `id:ns:music::a${k}`, create: true, fields: { n: { assign: k } } });
    ops.push({ update: `id:ns:music::c${k}`, fields: { n: { increment: 1 } } });
    ops.push({ put: `id:ns:music::t${k}`, condition: 'music.n == 0', fields: { n: 1 } });
    seeded.push({ id: `id:ns:music::c${k}`, fields: { n: 0 } }, { id: `id:ns:music::t${k}`, fields: { n: 0 } });
  }
  return { ops, seeded };
}

const idOf = (op: Op): string => (op.put ?? op.update ?? op.remove) as string;
const unsafe = (op: Op): boolean => op.condition !== undefined || JSON.stringify(op.fields ?? {}).includes('increment');
const isWrite = (x: Exchange): boolean => x.method !== 'GET';

describe.each(overProtocols)(
  'behind a proxy that answers 502/503 after its upstream applied the write, over $protocol',
  ({ protocol }) => {
    // 500 as nginx answers when its worker_connections run out: a page of its own, not the service's JSON.
    it.each([500, 502, 503])(
      'feed: every tenth write answered %i; no increment or conditional write applied twice',
      async (status) => {
        const { ops, seeded } = corpus();
        const server = await startDocumentServer({ port: 0 });
        cleanups.push(() => server.close());
        server.store.seed(seeded);
        // The first arrival of every tenth write is applied, then answered with the proxy's page.
        let writes = 0;
        const paged = new Set<string>();
        const front = await startFaultFront(server.url, {
          page: (x) => {
            if (!isWrite(x) || x.arrival !== 1 || ++writes % 10 !== 0) return undefined;
            paged.add(x.key.split('/').pop()!);
            return pageOf(status);
          },
        });
        cleanups.push(() => front.close());
        const { dir, cleanup } = tempDir();
        cleanups.push(cleanup);
        const failures = join(dir, 'failures.jsonl');
        const results = new Map<string, OperationResult>();
        const summary = await feed(writeJsonl(join(dir, 'in.jsonl'), ops), {
          endpoint: front.url,
          protocol,
          failures,
          retryPolicy: quickRetries,
          inflight: 8,
          onResult: (r) => {
            expect(results.has(idOf(ops[r.line - 1]))).toBe(false);
            results.set(idOf(ops[r.line - 1]), r);
          },
        });
        expectSpoke(summary, protocol);
        await front.settled();

        const reasonOf = new Map(failureReasons(failures).map((r) => [r.id as string, r]));
        const failed = failureLines(failures).map((line) => JSON.parse(line) as Op);
        const why = (op: Op): string =>
          `${idOf(op)}: ${JSON.stringify(results.get(idOf(op)))} ${JSON.stringify(reasonOf.get(idOf(op)))}`;
        expect(paged.size).toBe(ops.length / 10);
        for (const op of ops) {
          const id = idOf(op);
          const doc = id.split('::')[1];
          const r = results.get(id);
          expect(r, id).toBeDefined();
          if (!unsafe(op)) {
            // Safe to repeat: sent again, done.
            expect(r!.ok, why(op)).toBe(true);
            continue;
          }
          // Applied exactly once: the proxy's page does not make the client send it again.
          expect(server.store.get(id)!.fields.n, why(op)).toBe(1);
          expect(
            front.forwarded.get(`${op.put !== undefined ? 'POST' : 'PUT'} /document/v1/ns/music/docid/${doc}`),
            why(op),
          ).toBe(1);
          if (!paged.has(doc)) {
            expect(r!.ok, why(op)).toBe(true);
            continue;
          }
          // Its outcome is unknown to the client: failed, with the reason.
          expect(r!.ok, why(op)).toBe(false);
          expect(String(reasonOf.get(id)?.message), why(op)).toMatch(new RegExp(`${status}.*may have been applied`));
        }
        const unsafePaged = ops.filter((op) => unsafe(op) && paged.has(idOf(op).split('::')[1]));
        expect(unsafePaged.length).toBeGreaterThan(0);
        expect(failed.map(idOf).sort()).toEqual(unsafePaged.map(idOf).sort());
        expect(summary.errors).toBe(unsafePaged.length);
        expect(summary.ok + summary.errors).toBe(ops.length);
        // Counted apart from the service's own answers.
        expect(summary.proxyPages).toBe(paged.size);
      },
    );

    /** update-where of `fields` over every document, through the front. */
    function updateWhere(endpoint: string, fields: Record<string, unknown>): Promise<BulkSummary> {
      return bulkOperation({
        endpoint,
        protocol,
        namespace: 'ns',
        documentType: 'music',
        cluster: 'content',
        kind: 'update-where',
        selection: 'true',
        fields,
        retry: { baseDelayMs: 1, maxDelayMs: 10, maxRetries: 40 },
        signal: AbortSignal.timeout(10_000),
      });
    }

    async function seededChunks(): Promise<DocumentServer> {
      const server = await startDocumentServer({ port: 0, clusters: ['content'], visitChunkDocuments: 10 });
      cleanups.push(() => server.close());
      server.store.seed(Array.from({ length: 100 }, (_, i) => ({ id: `id:ns:music::b${i}`, fields: { n: 0 } })));
      return server;
    }

    it.each([502, 503])('update-where: a chunk answered %i after it was applied is not sent again', async (status) => {
      const server = await seededChunks();
      let chunk = 0;
      const front = await startFaultFront(server.url, {
        page: (x) => (isWrite(x) && x.path.includes('selection=') && ++chunk === 3 ? pageOf(status) : undefined),
      });
      cleanups.push(() => front.close());
      const summary = await updateWhere(front.url, { n: { increment: 1 } });
      const ns = server.store.all('content').map((d) => d.fields.n as number);
      expect(
        ns.every((n) => n === 0 || n === 1),
        JSON.stringify(summary),
      ).toBe(true);
      expect(ns.filter((n) => n === 1).length).toBe(30);
      expect(summary.ok).toBe(false);
      expect(summary.error).toMatch(/may have been applied/);
      expect(summary.continuation).toBeDefined();
      expect(summary.retries).toBe(0);
      expect(summary.requests).toBe(3);
    });

    it('update-where of assignments: a chunk answered 503 after it was applied is sent again, and the run ends done', async () => {
      const server = await seededChunks();
      let chunk = 0;
      const front = await startFaultFront(server.url, {
        page: (x) => (isWrite(x) && x.path.includes('selection=') && ++chunk === 3 ? pageOf(503) : undefined),
      });
      cleanups.push(() => front.close());
      const summary = await updateWhere(front.url, { n: { assign: 7 } });
      expect(summary.ok, JSON.stringify(summary)).toBe(true);
      expect(summary.retries).toBe(1);
      expect(server.store.all('content').every((d) => d.fields.n === 7)).toBe(true);
    });

    it.each([502, 503])(
      'DocumentClient: an increment answered %i is returned at once, applied once; a put is sent again',
      async (status) => {
        const server = await startDocumentServer({ port: 0 });
        cleanups.push(() => server.close());
        server.store.seed([{ id: 'id:ns:music::c', fields: { n: 0 } }]);
        const front = await startFaultFront(server.url, {
          page: (x) => (isWrite(x) && x.arrival === 1 ? pageOf(status) : undefined),
        });
        cleanups.push(() => front.close());
        const client = new DocumentClient({
          endpoint: front.url,
          protocol,
          maxRetries: 5,
          retryPolicy: { baseDelayMs: 1, maxDelayMs: 5 },
        });
        cleanups.push(() => client.close());
        const increment = await client.update('id:ns:music::c', { n: { increment: 1 } });
        expect(increment.status).toBe(status);
        expect(front.forwarded.get('PUT /document/v1/ns/music/docid/c')).toBe(1);
        const conditional = await client.put('id:ns:music::c', { n: 5 }, { condition: 'music.n == 1' });
        expect(conditional.status).toBe(status);
        expect(front.forwarded.get('POST /document/v1/ns/music/docid/c')).toBe(1);
        expect(server.store.get('id:ns:music::c')!.fields.n).toBe(5);
        const put = await client.put('id:ns:music::p', { n: 1 });
        expect(put.status).toBe(200);
        expect(front.forwarded.get('POST /document/v1/ns/music/docid/p')).toBe(2);
      },
    );
  },
);
