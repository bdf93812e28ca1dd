/**
 * Whether compare's memory stays bounded as the corpus grows: `vespa-bulk compare` of two JSONL exports (the second
 * with every 1000th document changed) of `--docs` documents of about 1 KB, then of `--scale` times as many, each as
 * users run it (an esbuild bundle, under GNU time). Printed: wall time, peak RSS and documents/s of each, and the
 * larger run's as a ratio to the smaller's (RSS near 1: bounded; time near `--scale`: linear). No cluster: what is
 * measured is reading, spilling and comparing.
 *
 *   npx tsx benchmarks/compare/exports.ts [--docs 100000] [--scale 4] [--partitions 256]
 */
import { execFile } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { printTable } from '../lib/child.js';
import { bundleCli } from '../visit/bundle.js';

const { values } = parseArgs({
  options: {
    docs: { type: 'string', default: '100000' },
    scale: { type: 'string', default: '4' },
    partitions: { type: 'string', default: '256' },
  },
});
const base = Number(values.docs);
const scale = Number(values.scale);
const filler = 'lorem ipsum dolor sit amet '.repeat(40).slice(0, 900);

async function writeExport(path: string, docs: number, changeEvery: number): Promise<void> {
  const out = createWriteStream(path);
  for (let i = 0; i < docs; i++) {
    const popularity = changeEvery > 0 && i % changeEvery === 0 ? -1 : i % 100;
    const line = `{"put":"id:bench:music::doc-${i}","fields":{"title":"Song number ${i}","year":${1960 + (i % 64)},"popularity":${popularity},"embedding":{"type":"tensor<float>(x[4])","values":[${i % 7},0.5,0.25,1]},"lyrics":"${i} ${filler}"}}\n`;
    if (!out.write(line)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

function timedCompare(
  bundle: string,
  a: string,
  b: string,
  tempDir: string,
): Promise<{ seconds: number; rssMB: number; summary: { same: number; differing: number } }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    execFile(
      '/usr/bin/time',
      [
        '-v',
        process.execPath,
        bundle,
        'compare',
        a,
        b,
        '--partitions',
        values.partitions,
        '--temp-dir',
        tempDir,
        '--quiet',
      ],
      { maxBuffer: 1 << 24, timeout: 600_000 },
      (err, stdout, stderr) => {
        if (err && err.code !== 1) return reject(new Error(`compare failed: ${err.message}\n${stderr.slice(-2000)}`));
        resolve({
          seconds: (performance.now() - started) / 1000,
          rssMB: Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(stderr)?.[1] ?? NaN) / 1024,
          summary: JSON.parse(stdout) as { same: number; differing: number },
        });
      },
    );
  });
}

const dir = mkdtempSync(join(tmpdir(), 'vb-compare-exports-'));
try {
  const bundle = bundleCli(dir);
  const rows: Array<Record<string, string | number>> = [];
  const runs: Array<{ seconds: number; rssMB: number }> = [];
  for (const docs of [base, base * scale]) {
    const [a, b] = [join(dir, `a-${docs}.jsonl`), join(dir, `b-${docs}.jsonl`)];
    await Promise.all([writeExport(a, docs, 0), writeExport(b, docs, 1000)]);
    const run = await timedCompare(bundle, a, b, dir);
    if (run.summary.differing !== Math.ceil(docs / 1000) || run.summary.same !== docs - Math.ceil(docs / 1000))
      throw new Error(`unexpected result ${JSON.stringify(run.summary)}`);
    runs.push(run);
    rows.push({
      documents: docs,
      seconds: run.seconds.toFixed(1),
      'docs/s (both sides)': Math.round((2 * docs) / run.seconds),
      'peak RSS MB': run.rssMB.toFixed(0),
    });
    rmSync(a);
    rmSync(b);
  }
  printTable(
    `compare of two JSONL exports (~1 KB documents, every 1000th differs), ${values.partitions} partitions`,
    rows,
  );
  printTable(`the ${scale}x corpus as a ratio to the smaller`, [
    { figure: 'peak RSS', ratio: (runs[1].rssMB / runs[0].rssMB).toFixed(2) },
    { figure: 'wall time', ratio: (runs[1].seconds / runs[0].seconds).toFixed(2) },
  ]);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
