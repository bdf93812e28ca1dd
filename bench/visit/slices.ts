/**
 * How many slices `visit` should use when none are asked for: export time with 1, 2, 4, 8 and 16 slices
 * against the simulator with a content node's per-document visit cost (default 20 µs, 16 lanes: content nodes
 * times visitor threads), N documents of about 1 KB, each export a child process of the bundled CLI writing
 * to a file. Prints seconds and documents/s per count, and each as a ratio to 1 slice (median of the rounds).
 *   npx tsx bench/visit/slices.ts [--documents 100000] [--cost-us 20] [--parallelism 16] [--rounds 2]
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { median, printTable, startChildServer } from '../lib/child.js';
import { bundleCli } from './bundle.js';

const { values } = parseArgs({
  options: {
    documents: { type: 'string', default: '100000' },
    'cost-us': { type: 'string', default: '20' },
    parallelism: { type: 'string', default: '16' },
    rounds: { type: 'string', default: '2' },
    slices: { type: 'string', default: '1,2,4,8,16' },
  },
});
const documents = Number(values.documents);
const rounds = Number(values.rounds);
const sliceCounts = values.slices.split(',').map(Number);
const here = fileURLToPath(new URL('.', import.meta.url));

function exportOnce(bundle: string, url: string, args: string[]): Promise<{ seconds: number; documents: number }> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [bundle, 'visit', 'bench/music', '-t', url, '--quiet', ...args], { maxBuffer: 64 << 20, timeout: 600_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`exporter failed: ${err.message}\n${stderr}`));
      const summary = JSON.parse(stdout) as Record<string, number>;
      resolve({ seconds: summary['visit.seconds'], documents: summary['visit.document.count'] });
    });
  });
}

const sim = await startChildServer(join(here, 'seeded-sim.ts'), [], {
  VISIT_BENCH_DOCUMENTS: String(documents),
  VISIT_BENCH_COST_US: values['cost-us'],
  VISIT_BENCH_PARALLELISM: values.parallelism,
});
const dir = mkdtempSync(join(tmpdir(), 'vb-visit-slices-'));
try {
  const bundle = bundleCli(dir);
  const out = join(dir, 'export.jsonl');
  // Warm-up: the simulator serialises each document once and caches it.
  await exportOnce(bundle, sim.url, ['--slices', '16', '-o', out]);
  const measure = async (label: string, args: string[], rows: Array<Record<string, string | number>>): Promise<number> => {
    const seconds: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const ex = await exportOnce(bundle, sim.url, args);
      if (ex.documents !== documents) throw new Error(`${label}: exported ${ex.documents} documents, expected ${documents}`);
      seconds.push(ex.seconds);
      rmSync(out, { force: true });
      rmSync(`${out}.gz`, { force: true });
    }
    const s = median(seconds);
    rows.push({ run: label, 'seconds (median)': s.toFixed(2), 'docs/s': Math.round(documents / s) });
    return s;
  };

  const sliceRows: Array<Record<string, string | number>> = [];
  const sliceSeconds: number[] = [];
  for (const n of sliceCounts) sliceSeconds.push(await measure(`--slices ${n}`, ['--slices', String(n), '-o', out], sliceRows));
  sliceRows.forEach((row, i) => (row['speed vs 1 slice'] = (sliceSeconds[0] / sliceSeconds[i]).toFixed(2)));
  printTable(`Export of ${documents} documents (~1 KB) to a file, visit cost ${values['cost-us']} µs/document, ${values.parallelism} lanes; median of ${rounds}`, sliceRows);
} finally {
  rmSync(dir, { recursive: true, force: true });
  await sim.stop();
}
