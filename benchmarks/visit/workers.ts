/**
 * Whether `visit --workers N` pays: export time of N documents (~1 KB) to a .gz file (`-o FILE.gz`) and to a .gz
 * file per slice (`--output-dir DIR --gzip`) with 1 and 2 workers (and whatever `--workers` lists), against the
 * seeded simulator in its own process, each export a child process of the compiled CLI (dist/, as installed: run
 * `npm run build` first). Prints seconds, documents/s and the ratio to 1 worker of the same output (median of the
 * rounds). On a 2-core machine the simulator shares the cores with the exporter.
 *   npm run build && npx tsx benchmarks/visit/workers.ts [--documents 100000] [--workers 1,2] [--slices 4] [--rounds 2]
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { median, printTable, startChildServer } from '../lib/child.js';

const { values } = parseArgs({
  options: {
    documents: { type: 'string', default: '100000' },
    workers: { type: 'string', default: '1,2' },
    slices: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '2' },
    'cost-us': { type: 'string', default: '0' },
  },
});
const documents = Number(values.documents);
const here = fileURLToPath(new URL('.', import.meta.url));
const cli = join(here, '../../dist/cli/main.js');
if (!existsSync(cli)) throw new Error('dist/ is missing: run npm run build first');

function exportOnce(url: string, args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [cli, 'visit', 'bench/music', '-t', url, '--quiet', ...args],
      { maxBuffer: 64 << 20, timeout: 600_000 },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`exporter failed: ${err.message}\n${stderr}`));
        const summary = JSON.parse(stdout) as Record<string, number>;
        if (summary['visit.document.count'] !== documents)
          return reject(new Error(`exported ${summary['visit.document.count']}, expected ${documents}`));
        resolve(summary['visit.seconds']);
      },
    );
  });
}

const sim = await startChildServer(join(here, 'seeded-sim.ts'), [], {
  VISIT_BENCH_DOCUMENTS: String(documents),
  VISIT_BENCH_COST_US: values['cost-us'],
});
const dir = mkdtempSync(join(tmpdir(), 'vb-visit-workers-'));
try {
  const out = join(dir, 'export.jsonl.gz');
  const outDir = join(dir, 'slices');
  const outputs: Array<{ name: string; args: string[]; path: string }> = [
    { name: '-o FILE.gz', args: ['-o', out], path: out },
    { name: '--output-dir --gzip', args: ['--output-dir', outDir, '--gzip'], path: outDir },
  ];
  // Warms the simulator (and the page cache) once.
  await exportOnce(sim.url, ['--slices', values.slices, '-o', out]);
  rmSync(out, { force: true });
  const rows: Array<Record<string, string | number>> = [];
  for (const output of outputs) {
    const times: number[] = [];
    for (const n of values.workers.split(',').map(Number)) {
      const seconds: number[] = [];
      for (let r = 0; r < Number(values.rounds); r++) {
        seconds.push(await exportOnce(sim.url, ['--slices', values.slices, '--workers', String(n), ...output.args]));
        rmSync(output.path, { recursive: true, force: true });
      }
      const s = median(seconds);
      times.push(s);
      rows.push({
        output: output.name,
        run: `--workers ${n}`,
        'seconds (median)': s.toFixed(2),
        'docs/s': Math.round(documents / s),
        'speed vs 1 worker': (times[0] / s).toFixed(2),
      });
    }
  }
  printTable(
    `Export of ${documents} documents (~1 KB), compressed, --slices ${values.slices}, visit cost ${values['cost-us']} µs; median of ${values.rounds}`,
    rows,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
  await sim.stop();
}
