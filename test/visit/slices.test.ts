import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { visit } from '../../src/visit/visit.js';
import type { VisitRun } from '../../src/visit/visitor.js';
import { defaultVisitSlices } from '../../src/visit/options.js';

function music(n: number) {
  return Array.from({ length: n }, (_, i) => ({ id: `id:ns:music::${i}`, fields: { n: i } }));
}

describe('slices by default, and the simulated visit cost', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  async function server(options: Parameters<typeof startDocumentServer>[0] = {}): Promise<DocumentServer> {
    const s = await startDocumentServer({ port: 0, ...options });
    cleanups.push(() => s.close());
    return s;
  }

  it('visits several slices at once when none are asked for, each document once', async () => {
    const s = await server({ visitChunkDocuments: 50 });
    s.store.seed(music(3000));
    let run: VisitRun | undefined;
    const ids: string[] = [];
    const v = visit({ endpoint: s.url, namespace: 'ns', documentType: 'music' }, { onStart: (r) => (run = r) });
    for await (const d of v) ids.push(d.id);
    expect(defaultVisitSlices).toBeGreaterThan(1);
    expect(run!.slices.length).toBe(defaultVisitSlices);
    const report = await v.report;
    expect(report.slices.every((r) => r.status === 'finished' && r.documents > 0)).toBe(true);
    expect(ids.length).toBe(3000);
    expect(new Set(ids).size).toBe(3000);
  });

  it('slices: 1 stays one chain, without the slices parameter', async () => {
    const seen: string[] = [];
    const log = new Writable({
      write: (chunk: Buffer, _encoding, done) => (seen.push(...chunk.toString().split('\n')), done()),
    });
    const s = await server({ requestLog: log });
    s.store.seed(music(100));
    let n = 0;
    for await (const _ of visit({ endpoint: s.url, namespace: 'ns', documentType: 'music', slices: 1 })) n++;
    expect(n).toBe(100);
    const visits = seen.filter((l) => l.includes('GET /document/v1/'));
    expect(visits.length).toBeGreaterThan(0);
    expect(visits.some((l) => l.includes('slices='))).toBe(false);
  });

  it("charges the content nodes' time per document, in parallel over slices", async () => {
    const documents = 2000;
    const costUs = 200;
    const s = await server({ faults: { visitCostUs: costUs, visitParallelism: 4 } });
    s.store.seed(music(documents));
    const timed = async (slices: number): Promise<number> => {
      const started = performance.now();
      let n = 0;
      for await (const _ of visit({ endpoint: s.url, namespace: 'ns', documentType: 'music', slices })) n++;
      expect(n).toBe(documents);
      return performance.now() - started;
    };
    const one = await timed(1);
    const four = await timed(4);
    // A floor, not a speed: one lane cannot iterate the corpus in less than its cost.
    expect(one).toBeGreaterThanOrEqual((documents * costUs) / 1000 - 5);
    expect(four).toBeGreaterThanOrEqual((documents * costUs) / 1000 / 4 - 5);
    process.stderr.write(
      `visit cost ${costUs} µs x ${documents}: 1 slice ${one.toFixed(0)} ms, 4 slices ${four.toFixed(0)} ms\n`,
    );
    expect(s.faults.get().visitCostUs).toBe(costUs);
  });

  it('refuses a visit parallelism that is not a lane count', async () => {
    const s = await server();
    expect(() => s.faults.set({ visitParallelism: 0 })).toThrow(/visitParallelism/);
    expect(() => s.faults.set({ visitCostUs: -1 })).toThrow(/visitCostUs/);
  });
});
