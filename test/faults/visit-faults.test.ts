import { afterEach, describe, expect, it } from 'vitest';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { visit } from '../../src/visit/visit.js';
import { overProtocols } from '../support/protocols.js';

/** Sliced visits against a simulator that misbehaves, over each protocol: every document arrives exactly once. */
describe.each(overProtocols)('visit over $protocol survives', ({ protocol }) => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function seeded(
    documents: number,
    faults: Parameters<DocumentServer['faults']['set']>[0],
  ): Promise<DocumentServer> {
    const server = await startDocumentServer({ port: 0, visitChunkDocuments: 40 });
    cleanups.push(() => server.close());
    server.store.seed(
      Array.from({ length: documents }, (_, i) => ({ id: `id:ns:music::v${i}`, fields: { title: `t${i}`, n: i } })),
    );
    server.faults.set(faults);
    return server;
  }

  async function visitedIds(server: DocumentServer, stream: boolean): Promise<{ ids: string[]; retries: number }> {
    const v = visit({
      endpoint: server.url,
      protocol,
      namespace: 'ns',
      documentType: 'music',
      slices: 4,
      stream,
      ...(stream ? {} : { wantedDocumentCount: 40 }),
      requestTimeoutMs: 400,
      retry: { baseDelayMs: 5, maxDelayMs: 100, maxRetries: 20 },
    });
    const ids: string[] = [];
    for await (const d of v) {
      ids.push(d.id);
      // The fields arrive whole: a cut or mangled answer never yields half a document.
      expect(d.fields?.title).toBe(`t${d.id.slice('id:ns:music::v'.length)}`);
    }
    const report = await v.report;
    expect(report.ok).toBe(true);
    expect(report.protocol).toBe(protocol);
    return { ids, retries: report.slices.reduce((n, s) => n + s.retries, 0) };
  }

  function expectEachOnce(ids: string[], documents: number): void {
    expect(ids.length).toBe(documents);
    expect(new Set(ids).size).toBe(documents);
    expect([...ids].sort()).toEqual(Array.from({ length: documents }, (_, i) => `id:ns:music::v${i}`).sort());
  }

  const mixed = { errorRate: 0.1, errorStatuses: [429, 502, 503, 504], stallRate: 0.03, garbageRate: 0.07, seed: 77 };

  it('20% mixed faults and cut streams for a whole sliced, streamed visit: every document exactly once', async () => {
    const documents = 3000;
    const server = await seeded(documents, { ...mixed, cutStreamAfterDocuments: 50 });
    const { ids, retries } = await visitedIds(server, true);
    expectEachOnce(ids, documents);
    const injected = server.faults.injected();
    const total = Object.values(injected).reduce((x, y) => x + y, 0);
    expect(total, JSON.stringify(injected)).toBeGreaterThan(5);
    expect(Object.keys(injected).length, JSON.stringify(injected)).toBeGreaterThan(2);
    // Each injected fault, and each cut stream, cost a retry.
    expect(retries).toBeGreaterThan(total);
  });

  it('20% mixed faults for a whole sliced visit in pages (continuation tokens): every document exactly once', async () => {
    const documents = 2000;
    const server = await seeded(documents, { ...mixed, seed: 78 });
    const { ids } = await visitedIds(server, false);
    expectEachOnce(ids, documents);
    expect(server.faults.injected().garbage).toBeGreaterThan(0);
  });
});
