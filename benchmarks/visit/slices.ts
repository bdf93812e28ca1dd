/**
 * How many slices a visit should keep in flight: the default (256 slices, as many in flight as raise documents/s)
 * against 1 slice and fixed counts all at once (`--slices N`), and against the default's 256 slices held at as many
 * in flight as the cluster has lanes (`256 slices, N at a time`: what the search should find), for simulated
 * clusters of several sizes, all in one run.
 *
 * The simulator (its own process) gets `--parallelism` visitor lanes (content nodes times their visitor threads), each
 * iterating a document in lanes/`--capacity` seconds, so that every cluster visits `--capacity` documents/s in all
 * (8,000 by default): a small cluster of fast lanes or a large one of slow lanes, below what the two cores here serve,
 * so that the lanes and not the CPU are what more slices in flight win. Documents are small (~140 bytes) and in 256
 * location groups (n=0..255): the simulator sends what it has buffered once 64 KiB are and charges the visit cost 256
 * documents at a time, so larger documents, or a slice's documents strewn over its visit order, would go out before
 * their cost is paid (each request's first 256 for free), which rewards starting requests over keeping lanes busy.
 *
 * Each export runs in its own process (benchmarks/visit/export-child.ts, the library as the CLI calls it) for `--seconds`
 * (the default visit `--adaptive-seconds`, for its climb), writing to a file; the corpus is large enough that none
 * finishes. Between exports the simulator's lanes drain. Prints, per cluster, documents/s over the whole export and
 * over its second half, each as a ratio to 1 slice of the same cluster, and the slices in flight (for the default:
 * the mean, the level at the end and the search's path).
 *   npx tsx benchmarks/visit/slices.ts [--documents 1000000] [--parallelism 4,16,64] [--capacity 8000] [--seconds 15]
 *                                 [--adaptive-seconds 120] [--runs adaptive,1,4,8,16,64,256/lanes,256]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { printTable, startChildServer } from '../lib/child.js';
import { defaultAdaptiveStart } from '../../src/visit/options.js';
import { rateAfter, runExportChild, setFaults, type ExportChildOutcome } from './timed-export.js';

const { values } = parseArgs({
  options: {
    documents: { type: 'string', default: '1000000' },
    parallelism: { type: 'string', default: '4,16,64' },
    capacity: { type: 'string', default: '8000' },
    seconds: { type: 'string', default: '15' },
    'adaptive-seconds': { type: 'string', default: '120' },
    runs: { type: 'string', default: 'adaptive,1,4,8,16,64,256/lanes,256' },
  },
});
const documents = Number(values.documents);
const capacity = Number(values.capacity);
const seconds = Number(values.seconds);
const adaptiveSeconds = Number(values['adaptive-seconds']);
const lanes = values.parallelism.split(',').map(Number);
const runs = values.runs.split(',');
const here = fileURLToPath(new URL('.', import.meta.url));

function exportFor(url: string, output: string, run: string): Promise<ExportChildOutcome> {
  // `adaptive`: the default; `N`: --slices N (all at once); `N/M`: N slices, M at a time.
  const [n, m] = run.split('/').map(Number);
  const options = run === 'adaptive' ? {} : { slices: n, ...(m !== undefined && { inflightSlices: m }) };
  return runExportChild({ endpoint: url, output, seconds: run === 'adaptive' ? adaptiveSeconds : seconds, options });
}

// Small documents (~130 bytes): the simulator sends what it has buffered once 64 KiB are, and charges the visit cost
// 256 documents at a time, so documents of 1 KB would go out before their cost is paid (each request's first 255
// free), which rewards starting requests rather than keeping lanes busy.
const sim = await startChildServer(join(here, 'seeded-sim.ts'), [], {
  VISIT_BENCH_DOCUMENTS: String(documents),
  VISIT_BENCH_COST_US: '0',
  VISIT_BENCH_FILLER_BYTES: '0',
  VISIT_BENCH_GROUPS: '256',
});
const dir = mkdtempSync(join(tmpdir(), 'vb-visit-slices-'));
const summary: Array<Record<string, string | number>> = [];
try {
  const out = join(dir, 'export.jsonl');
  for (const p of lanes) {
    const costUs = Math.round((p * 1e6) / capacity);
    await setFaults(sim.url, { visitParallelism: p, visitCostUs: costUs });
    const rows: Array<Record<string, string | number>> = [];
    let base: { whole: number; steady: number } | undefined;
    // `256/lanes`: the default's slices with as many in flight as the cluster has lanes (what the search should find).
    for (const run of ['1', ...runs.filter((r) => r !== '1')].map((r) => r.replace('lanes', String(p)))) {
      // The requests of the export before go on in the simulator until their next 256 documents are paid for: let
      // the lanes drain (256 chains' worth) before the next export starts.
      await new Promise((r) => setTimeout(r, (256 * 256 * 1000) / capacity));
      const o = await exportFor(sim.url, out, run);
      rmSync(out, { force: true });
      if (run === 'adaptive')
        process.stderr.write(
          `adaptive, ${p} lanes: ${o.inflight.changes.map((c) => `${c.seconds}s ${c.reason} ${c.limit} (${Math.round(c.documentsPerSecond)}/s)`).join(', ')}\n`,
        );
      if (o.finished) process.stderr.write(`note: ${run} finished the corpus before its time; give more --documents\n`);
      const whole = o.documents / o.seconds;
      const steady = rateAfter(o, o.seconds / 2);
      base ??= { whole, steady };
      const label =
        run === 'adaptive'
          ? 'default (adaptive, 256 slices)'
          : run.includes('/')
            ? `${run.split('/')[0]} slices, ${run.split('/')[1]} at a time`
            : `--slices ${run}`;
      const inflight =
        run === 'adaptive'
          ? `mean ${o.inflight.meanRunning.toFixed(1)}, end ${o.inflight.limit}, path ${[defaultAdaptiveStart, ...o.inflight.changes.map((c) => c.limit)].join('>')}`
          : `${o.inflight.limit}`;
      rows.push({
        run: label,
        'docs/s': Math.round(whole),
        'vs 1 slice': (whole / base.whole).toFixed(2),
        'docs/s, 2nd half': Math.round(steady),
        'vs 1 slice, 2nd half': (steady / base.steady).toFixed(2),
        'slices in flight': inflight,
      });
      summary.push({
        lanes: p,
        run: label,
        'vs 1 slice': (whole / base.whole).toFixed(2),
        '2nd half': (steady / base.steady).toFixed(2),
      });
    }
    printTable(
      `${p} lanes x ${costUs} µs/document (${capacity} documents/s in all), ${seconds} s per export (the default: ${adaptiveSeconds} s)`,
      rows,
    );
  }
  printTable(
    `Summary: documents/s as a ratio to 1 slice of the same cluster (whole run; second half), ${documents} documents of ~140 bytes`,
    summary,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
  await sim.stop();
}
