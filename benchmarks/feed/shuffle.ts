/**
 * `feed --shuffle` against the simulator's per-bucket locks: a corpus exported from one simulator (so in its visit
 * order, grouped by bucket, as `vespa-bulk visit` writes it) fed into another whose content nodes take
 * `latencyMs` per write and process one write per bucket at a time. Docs/s with --shuffle against without, same
 * input, same run, alternating rounds (best of each). Expected: shuffled well above 1.0 (the unshuffled feed has
 * only the few buckets its in-flight window covers busy at once).
 *
 * Usage: npx tsx benchmarks/feed/shuffle.ts [--docs N] [--bucket-bits B] [--latency-ms L] [--rounds R]
 * Bounded: 5,000 documents, 64 buckets, 5 ms per write, 2 rounds by default (about a minute); everything on 127.0.0.1, the
 * corpus in a temp dir deleted after.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDocumentServer } from '../../src/simulator/document-api/document-server.js';
import { exportDocuments } from '../../src/visit/export/index.js';
import { Feeder } from '../../src/feed/feeder.js';

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const docs = flag('docs', 5000);
const bucketBits = flag('bucket-bits', 6);
const latencyMs = flag('latency-ms', 5);
const rounds = flag('rounds', 2);
const work = mkdtempSync(join(tmpdir(), 'vb-bench-shuffle-'));

try {
  const source = await startDocumentServer({ port: 0 });
  source.store.seed(
    Array.from({ length: docs }, (_, i) => ({
      id: `id:ns:music::doc-${i}`,
      fields: { title: `t${i}`, n: i, text: 'x'.repeat(200) },
    })),
  );
  const corpus = join(work, 'export.jsonl');
  await exportDocuments({ endpoint: source.url, namespace: 'ns', documentType: 'music', slices: 1, output: corpus });
  await source.close();

  const feedOnce = async (shuffle: boolean): Promise<{ rate: number; waits: number; ok: number }> => {
    const target = await startDocumentServer({ port: 0, bucketBits, faults: { latencyMs } });
    try {
      const outcome = await new Feeder({ endpoint: target.url, shuffle, failures: false, checkpoint: false }).run(
        corpus,
      );
      return { rate: outcome.summary.okRate, waits: target.stats().bucketLocks.waits, ok: outcome.summary.ok };
    } finally {
      await target.close();
    }
  };
  let plain = { rate: 0, waits: 0, ok: 0 };
  let shuffled = { rate: 0, waits: 0, ok: 0 };
  for (let r = 0; r < rounds; r++) {
    const a = await feedOnce(false);
    if (a.rate > plain.rate) plain = a;
    const b = await feedOnce(true);
    if (b.rate > shuffled.rate) shuffled = b;
  }
  if (plain.ok !== docs || shuffled.ok !== docs)
    throw new Error(`not every document was fed: ${plain.ok}, ${shuffled.ok} of ${docs}`);
  console.log(`${docs} docs in export order, ${2 ** bucketBits} buckets, ${latencyMs} ms per write, best of ${rounds}`);
  console.log('figure                              | value        | baseline     | ratio');
  console.log(
    `docs/s --shuffle vs without         | ${plain.rate === 0 ? '' : shuffled.rate.toFixed(0).padEnd(12)} | ${plain.rate.toFixed(0).padEnd(12)} | ${(shuffled.rate / plain.rate).toFixed(2)}`,
  );
  console.log(
    `writes that waited for their bucket | ${String(shuffled.waits).padEnd(12)} | ${String(plain.waits).padEnd(12)} | ${(shuffled.waits / Math.max(1, plain.waits)).toFixed(2)}`,
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
