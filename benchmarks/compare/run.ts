/**
 * `vespa-bulk compare` of two clusters against the two plain visits it replaces (the established check is a visit of
 * each side): two simulators in their own processes, seeded directly with `--docs` documents of about 1 KB each (the
 * second with every `--change-every`-th document changed), then, as users run them (one esbuild bundle, under GNU
 * time), both `vespa-bulk visit -o /dev/null` at once and `vespa-bulk compare`, `--rounds` times, alternating which
 * goes first. Printed: wall time and peak RSS of each, and compare's as a ratio to the two visits' (wall: the later
 * visit's end; RSS: the two visit processes together, and one visit).
 *
 *   npx tsx benchmarks/compare/run.ts [--docs 1000000] [--change-every 1000] [--rounds 1] [--partitions 256] [--timeout 600]
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { median, printTable, startChildServer } from '../lib/child.js';
import { bundleCli } from '../visit/bundle.js';

const { values } = parseArgs({
  options: {
    docs: { type: 'string', default: '1000000' },
    'change-every': { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '1' },
    partitions: { type: 'string', default: '256' },
    timeout: { type: 'string', default: '600' },
  },
});
const docs = Number(values.docs);
const changeEvery = Number(values['change-every']);
const rounds = Number(values.rounds);
const timeoutMs = Number(values.timeout) * 1000;
const here = fileURLToPath(new URL('.', import.meta.url));

interface Run {
  seconds: number;
  maxRssMB: number;
  cpuSeconds: number;
  stdout: string;
}

/** One CLI run under GNU time; resolves with its wall time, peak RSS and CPU (exit 1 is a comparison that differs, not a failure). */
function timed(bundle: string, args: string[]): Promise<Run> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    execFile(
      '/usr/bin/time',
      ['-v', process.execPath, bundle, ...args, '--quiet'],
      { maxBuffer: 64 << 20, timeout: timeoutMs },
      (err, stdout, stderr) => {
        if (err && err.code !== 1)
          return reject(new Error(`${args[0]} failed: ${err.message}\n${stderr.slice(-2000)}`));
        const field = (re: RegExp): number => Number(re.exec(stderr)?.[1] ?? NaN);
        resolve({
          seconds: (performance.now() - started) / 1000,
          maxRssMB: field(/Maximum resident set size \(kbytes\): (\d+)/) / 1024,
          cpuSeconds: field(/User time \(seconds\): ([\d.]+)/) + field(/System time \(seconds\): ([\d.]+)/),
          stdout,
        });
      },
    );
  });
}

const dir = mkdtempSync(join(tmpdir(), 'vb-compare-bench-'));
const sims = await Promise.all([
  startChildServer(join(here, 'seeded-sim.ts'), [], { COMPARE_BENCH_DOCUMENTS: String(docs) }),
  startChildServer(join(here, 'seeded-sim.ts'), [], {
    COMPARE_BENCH_DOCUMENTS: String(docs),
    COMPARE_BENCH_CHANGE_EVERY: String(changeEvery),
  }),
]);
try {
  const bundle = bundleCli(dir);
  const visits = async (): Promise<{ seconds: number; rss: number[]; cpu: number }> => {
    const started = performance.now();
    const both = await Promise.all(
      sims.map((s) => timed(bundle, ['visit', 'bench/music', '-t', s.url, '-o', '/dev/null'])),
    );
    for (const v of both) {
      const n = Number((JSON.parse(v.stdout) as Record<string, unknown>)['visit.document.count']);
      if (n !== docs) throw new Error(`visited ${n} documents, expected ${docs}`);
    }
    return {
      seconds: (performance.now() - started) / 1000,
      rss: both.map((v) => v.maxRssMB),
      cpu: both.reduce((n, v) => n + v.cpuSeconds, 0),
    };
  };
  const comparison = async (): Promise<Run> => {
    const run = await timed(bundle, [
      'compare',
      sims[0].url,
      sims[1].url,
      'bench/music',
      '--partitions',
      values.partitions,
      '--temp-dir',
      dir,
    ]);
    const summary = JSON.parse(run.stdout) as { same: number; differing: number; onlyInA: number; onlyInB: number };
    const expected = changeEvery > 0 ? Math.ceil(docs / changeEvery) : 0;
    if (summary.differing !== expected || summary.same !== docs - expected || summary.onlyInA + summary.onlyInB !== 0) {
      throw new Error(`compare found ${JSON.stringify(summary)}, expected ${expected} differing of ${docs}`);
    }
    return run;
  };
  // Warm-up: the simulators render each document once and cache it; the first to visit should not pay for that.
  await visits();
  const rows: Array<Record<string, string | number>> = [];
  const m = {
    visitSeconds: [] as number[],
    compareSeconds: [] as number[],
    visitRss: [] as number[],
    oneVisitRss: [] as number[],
    compareRss: [] as number[],
    visitCpu: [] as number[],
    compareCpu: [] as number[],
  };
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? ['visits', 'compare'] : ['compare', 'visits'];
    for (const what of order) {
      if (what === 'visits') {
        const v = await visits();
        m.visitSeconds.push(v.seconds);
        m.visitRss.push(v.rss[0] + v.rss[1]);
        m.oneVisitRss.push(Math.max(...v.rss));
        m.visitCpu.push(v.cpu);
        rows.push({
          round: round + 1,
          run: 'two visits (at once)',
          seconds: v.seconds.toFixed(1),
          'docs/s (both sides)': Math.round((2 * docs) / v.seconds),
          'peak RSS MB': v.rss.map((r) => r.toFixed(0)).join(' + '),
          'CPU s': v.cpu.toFixed(1),
        });
      } else {
        const c = await comparison();
        m.compareSeconds.push(c.seconds);
        m.compareRss.push(c.maxRssMB);
        m.compareCpu.push(c.cpuSeconds);
        rows.push({
          round: round + 1,
          run: 'compare',
          seconds: c.seconds.toFixed(1),
          'docs/s (both sides)': Math.round((2 * docs) / c.seconds),
          'peak RSS MB': c.maxRssMB.toFixed(0),
          'CPU s': c.cpuSeconds.toFixed(1),
        });
      }
    }
  }
  printTable(
    `compare of two clusters of ${docs} documents (~1 KB; every ${changeEvery}th differs) against two plain visits of them`,
    rows,
  );
  const ratio = (a: number[], b: number[]): string => (median(a) / median(b)).toFixed(2);
  printTable('compare as a ratio to the two visits (medians)', [
    { figure: 'wall time', ratio: ratio(m.compareSeconds, m.visitSeconds) },
    { figure: 'CPU time', ratio: ratio(m.compareCpu, m.visitCpu) },
    { figure: 'peak RSS vs both visit processes', ratio: ratio(m.compareRss, m.visitRss) },
    { figure: 'peak RSS vs one visit process', ratio: ratio(m.compareRss, m.oneVisitRss) },
  ]);
} finally {
  await Promise.all(sims.map((s) => s.stop()));
  rmSync(dir, { recursive: true, force: true });
}
