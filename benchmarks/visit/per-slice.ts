/**
 * The row of issue 33 "visit": a whole export of N documents from an endpoint that spends `--cost-us` (100 µs) per
 * document per slice, the CLI's defaults against `--slices N` for fixed counts, all in one run. Each slice streams
 * at most 1/cost documents/s (10,000/s) on its own, and slices in parallel scale until the machine's CPU is the limit:
 * the simulator (its own process, benchmarks/visit/seeded-sim.ts) gets `--cost-us` per document and more visitor lanes
 * than there are slices, so a request never waits for another's lane, only for its own documents' time.
 *
 * Each visit is the built CLI (`visit bench/music -o /dev/null`) under GNU time, to the end of the corpus; the rounds
 * rotate the order of the runs. With `--base REV`, the defaults of the CLI built from REV run in the same rounds
 * (`defaults (REV)`): before and after a change, against the same fixed counts. Prints, per run, the median round's
 * seconds (the summary's clock, from the first request) and documents/s, the median over rounds of its documents/s
 * as a ratio to the best fixed count's in the same round, and the CPU (user + system) per 1,000 documents of the
 * exporter, less that of the CLI's start and exit (`--version`, each round), and as a ratio to `--slices 1`'s where it
 * ran: what a slice costs beyond its documents.
 *   npx tsx benchmarks/visit/per-slice.ts [--documents 100000] [--cost-us 100] [--slices 1,2,4,8,16,32,64]
 *                                    [--rounds 3] [--base REV] [--filler 400]
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildCommit, type CommitBuild } from '../lib/baseline-build.js';
import { median, medianBy, printTable, startChildServer } from '../lib/child.js';
import { buildDist, cliOf, fmt, takeGnuTime } from '../lib/cli-feed.js';

const { values } = parseArgs({
  options: {
    documents: { type: 'string', default: '100000' },
    'cost-us': { type: 'string', default: '100' },
    slices: { type: 'string', default: '1,2,4,8,16,32,64' },
    rounds: { type: 'string', default: '3' },
    base: { type: 'string' },
    filler: { type: 'string', default: '400' },
  },
});
const documents = Number(values.documents);
const rounds = Number(values.rounds);
const fixed = values.slices.split(',').map(Number);
const here = fileURLToPath(new URL('.', import.meta.url));

interface Visit {
  seconds: number;
  rate: number;
  cpuSeconds: number;
}

/** One visit by `cli` into /dev/null, to the end; its summary's own clock and the process's CPU. */
async function visit(cli: string, url: string, args: string[], work: string): Promise<Visit> {
  const report = join(work, `.time-${Date.now()}.txt`);
  const child = spawn(
    '/usr/bin/time',
    ['-f', '%U %S %M', '-o', report, process.execPath, cli, 'visit', 'bench/music', ...args, '-t', url],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  const { cpuSeconds } = takeGnuTime(report);
  const summary = JSON.parse(out) as Record<string, number>;
  if (code !== 0 || summary['visit.document.count'] !== documents)
    throw new Error(`visit ${args.join(' ')} exited ${code} with ${summary['visit.document.count']} of ${documents}`);
  return { seconds: summary['visit.seconds'], rate: summary['visit.document.rate'], cpuSeconds };
}

/** The CPU of the CLI's start and exit alone (`--version`): taken off each visit's, which it would otherwise blur. */
function startupCpu(cli: string, work: string): number {
  const report = join(work, `.time-${Date.now()}.txt`);
  spawnSync('/usr/bin/time', ['-f', '%U %S %M', '-o', report, process.execPath, cli, '--version'], { stdio: 'ignore' });
  return takeGnuTime(report).cpuSeconds;
}

interface Run {
  label: string;
  cli: string;
  args: string[];
  fixed?: number;
}

const load = (): string => loadavg()[0].toFixed(1);
const loadBefore = load();
const work = mkdtempSync(join(tmpdir(), 'vb-visit-per-slice-'));
let base: CommitBuild | undefined;
const sim = await startChildServer(join(here, 'seeded-sim.ts'), [], {
  VISIT_BENCH_DOCUMENTS: String(documents),
  VISIT_BENCH_COST_US: values['cost-us'],
  // More lanes than slices: each request pays its own documents' time and never waits for another's.
  VISIT_BENCH_PARALLELISM: '1024',
  VISIT_BENCH_FILLER_BYTES: values.filler,
  VISIT_BENCH_GROUPS: '256',
});
try {
  await buildDist();
  if (values.base !== undefined) base = await buildCommit(values.base);
  const common = ['-o', '/dev/null', '--quiet'];
  const runs: Run[] = [
    { label: 'defaults', cli: cliOf(), args: common },
    ...(base === undefined ? [] : [{ label: `defaults (${values.base})`, cli: base.cli, args: common }]),
    ...fixed.map((n) => ({ label: `--slices ${n}`, cli: cliOf(), args: [...common, '--slices', String(n)], fixed: n })),
  ];
  const results = runs.map((): Visit[] => []);
  const startups: number[] = [];
  for (let r = 0; r < rounds; r++) {
    startups.push(startupCpu(cliOf(), work));
    for (let k = 0; k < runs.length; k++) {
      const j = (k + r) % runs.length;
      results[j].push(await visit(runs[j].cli, sim.url, runs[j].args, work));
    }
  }
  const startup = median(startups);
  const fixedRuns = runs.map((run, j) => ({ run, j })).filter(({ run }) => run.fixed !== undefined);
  const best = fixedRuns.reduce((a, b) =>
    median(results[b.j].map((v) => v.rate)) > median(results[a.j].map((v) => v.rate)) ? b : a,
  );
  const one = fixedRuns.find(({ run }) => run.fixed === 1);
  const cpuPerK = (v: Visit): number => ((v.cpuSeconds - startup) * 1e6) / documents;
  const rows = runs.map((run, j) => {
    const typical = medianBy(results[j], (v) => v.rate);
    return {
      visit: run.label + (j === best.j ? ' (best fixed)' : ''),
      seconds: fmt(typical.seconds, 2),
      'docs/s': fmt(typical.rate),
      'each round, s': results[j].map((v) => fmt(v.seconds, 2)).join(' '),
      'vs best fixed': fmt(median(results[j].map((v, r) => v.rate / results[best.j][r].rate)), 2),
      'CPU ms / 1k docs': fmt(median(results[j].map(cpuPerK)), 1),
      ...(one !== undefined && {
        'CPU vs --slices 1': fmt(median(results[j].map((v, r) => cpuPerK(v) / cpuPerK(results[one.j][r]))), 2),
      }),
    };
  });
  printTable(
    `visit of ${documents} documents (~${Number(values.filler) + 130} bytes), ${values['cost-us']} µs per document per slice; ` +
      `${rounds} rotated rounds; CPU less the CLI's start (${fmt(startup, 2)} s); load ${loadBefore} -> ${load()}`,
    rows,
  );
} finally {
  base?.remove();
  await sim.stop();
  rmSync(work, { recursive: true, force: true });
}
