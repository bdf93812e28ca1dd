/**
 * "Not slower than before" for a change that should not touch speed (a restructure, a rename): this tree's built
 * CLI against `--base`'s (a commit built in a temporary worktree), on the same machine in the same run, against one
 * simulator (`serve` of this tree, in its own process), so only the client differs. Each round runs every command
 * with both CLIs, alternating which goes first:
 *
 *   feed        `feed -q` of N generated ~1 KB puts: documents/s, CPU (user+sys) per document, peak RSS
 *   visit       `visit ns/music -o /dev/null` of the same N documents: documents/s, CPU per document, peak RSS
 *   speedtest   `feed --speedtest 1000 --speedtest-duration S` (dry-run puts, nothing stored): operations/s, CPU per
 *               operation (the issue's row: `vespa feed --speedtest` against `serve`)
 *   --help      `vespa-bulk --help`: CPU and wall seconds
 *   feed --help `vespa-bulk feed --help`: CPU and wall seconds
 *
 * Prints each figure's median over rounds for both, and this tree's over the base's (the median of the per-round
 * ratios). With --sink the feed goes to a minimal HTTP/1.1 sink (benchmarks/feed/sink-server.ts) instead, so that the
 * client's own cost is most of what is measured. Everything goes to 127.0.0.1 and runs in bounded time.
 *
 *   npx tsx benchmarks/regression/run.ts [--base main] [--documents 50000] [--rounds 3] [--help-runs 5] [--only feed,visit]
 *                                        [--sink] [--speedtest-seconds 10]
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildCommit } from '../lib/baseline-build.js';
import { median, printTable } from '../lib/child.js';
import { buildDist, cliOf, fmt, generatePuts, runCliFeed, takeGnuTime } from '../lib/cli-feed.js';
import { serve } from '../lib/serve-cli.js';
import { onTeardown } from '../lib/teardown.js';
import { timed } from '../lib/timed-command.js';

const { values } = parseArgs({
  options: {
    base: { type: 'string', default: 'main' },
    documents: { type: 'string', default: '50000' },
    rounds: { type: 'string', default: '3' },
    'help-runs': { type: 'string', default: '5' },
    only: { type: 'string' },
    sink: { type: 'boolean', default: false },
    'speedtest-seconds': { type: 'string', default: '10' },
  },
});
const documents = Number(values.documents);
const rounds = Number(values.rounds);
const helpRuns = Number(values['help-runs']);

/** The minimal sink of benchmarks/feed/sink-server.ts: it prints its URL and exits when its stdin closes. */
async function sink(): Promise<{ url: string; stop(): void }> {
  const script = fileURLToPath(new URL('../feed/sink-server.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  const untrack = onTeardown(() => child.kill('SIGKILL'));
  const [first] = (await once(child.stdout, 'data')) as [Buffer];
  return {
    url: first.toString().trim(),
    stop() {
      untrack();
      child.stdin.end();
    },
  };
}

/** What one command cost: the figures a row shows, by name. */
type Figures = Record<string, number>;

/** `cli args` under GNU time: its exit code, its JSON summary (stdout), and the CPU and peak RSS it used. */
async function summaryRun(
  cli: string,
  args: string[],
  cwd: string,
): Promise<{ code: number | null; summary: Record<string, number>; used: ReturnType<typeof takeGnuTime> }> {
  const report = join(cwd, `.time-${args[0]}-${Date.now()}.txt`);
  const child = spawn('/usr/bin/time', ['-f', '%U %S %M', '-o', report, process.execPath, cli, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    cwd,
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, summary: JSON.parse(out) as Record<string, number>, used: takeGnuTime(report) };
}

/** One `visit` by `cli` into /dev/null; documents/s from its summary's own clock. */
async function visit(cli: string, url: string, cwd: string): Promise<Figures> {
  const { code, summary, used } = await summaryRun(
    cli,
    ['visit', 'ns/music', '-t', url, '-o', '/dev/null', '--quiet'],
    cwd,
  );
  if (code !== 0 || summary['visit.document.count'] !== documents)
    throw new Error(`visit by ${cli} exited ${code} with ${summary['visit.document.count']} of ${documents} documents`);
  return {
    'docs/s': summary['visit.document.rate'],
    'CPU µs/doc': (used.cpuSeconds * 1e6) / documents,
    'peak RSS MB': used.maxRssMB,
  };
}

/** `feed --speedtest 1000` by `cli` against `url`: operations/s from its summary, CPU per operation. */
async function speedtest(cli: string, url: string, cwd: string): Promise<Figures> {
  const seconds = values['speedtest-seconds'];
  const args = ['feed', '--speedtest', '1000', '--speedtest-duration', seconds, '-t', url, '--quiet'];
  const { code, summary, used } = await summaryRun(cli, args, cwd);
  const ok = summary['feeder.ok.count'];
  if (code !== 0 || ok === 0) throw new Error(`speedtest by ${cli} exited ${code} with ${ok} ok`);
  return {
    'ops/s': summary['feeder.ok.rate'],
    'CPU µs/op': (used.cpuSeconds * 1e6) / ok,
    'peak RSS MB': used.maxRssMB,
  };
}

/** `args` of `cli` run `helpRuns` times under bash's `time`: median CPU (user+sys) and wall, in ms. */
function helpFigures(cli: string, args: string[], cwd: string): Figures {
  const runs = Array.from({ length: helpRuns }, () => timed([process.execPath, cli, ...args], cwd));
  return { 'CPU ms': median(runs.map((r) => r.cpu * 1000)), 'wall ms': median(runs.map((r) => r.wall * 1000)) };
}

const load = (): string => loadavg()[0].toFixed(1);
const loadBefore = load();
const work = mkdtempSync(join(tmpdir(), 'vb-regression-'));
const before = await buildCommit(values.base);
try {
  await buildDist();
  const input = join(work, 'puts.jsonl');
  await generatePuts(input, documents);
  const server = await serve(cliOf());
  const feedTarget = values.sink ? await sink() : undefined;
  // The visits read what this loads, whichever commands run (--only) and wherever the feeds go (--sink).
  const loaded = await runCliFeed({ target: server.url, input, count: documents, cwd: work });
  if (loaded.ok !== documents) throw new Error(`loading the simulator: ${loaded.ok} of ${documents} ok`);
  const clis = [
    { name: 'this tree', cli: cliOf() },
    { name: `before (${values.base} = ${before.hash.slice(0, 10)})`, cli: before.cli },
  ];
  const commands: Array<[string, (cli: string) => Promise<Figures>]> = [
    [
      'feed',
      async (cli) => {
        const run = await runCliFeed({
          target: feedTarget?.url ?? server.url,
          input,
          count: documents,
          cwd: work,
          cli,
        });
        if (run.ok !== documents) throw new Error(`feed by ${cli}: ${run.ok} of ${documents} ok`);
        return { 'docs/s': run.rate, 'CPU µs/doc': run.cpuUsPerOp, 'peak RSS MB': run.maxRssMB };
      },
    ],
    ['visit', (cli) => visit(cli, server.url, work)],
    ['speedtest', (cli) => speedtest(cli, server.url, work)],
    ['--help', (cli) => Promise.resolve(helpFigures(cli, ['--help'], work))],
    ['feed --help', (cli) => Promise.resolve(helpFigures(cli, ['feed', '--help'], work))],
  ];
  try {
    const rows: Array<Record<string, string>> = [];
    const only = values.only?.split(',');
    for (const [label, run] of commands.filter(([label]) => only === undefined || only.includes(label))) {
      const runs = clis.map((): Figures[] => []);
      for (let r = 0; r < rounds; r++) {
        for (const j of r % 2 === 0 ? [0, 1] : [1, 0]) runs[j].push(await run(clis[j].cli));
      }
      for (const figure of Object.keys(runs[0][0])) {
        const ours = runs[0].map((x) => x[figure]);
        const base = runs[1].map((x) => x[figure]);
        rows.push({
          command: label,
          figure,
          'this tree': fmt(median(ours), figure.includes('MB') || figure.includes('ms') ? 1 : 0),
          before: fmt(median(base), figure.includes('MB') || figure.includes('ms') ? 1 : 0),
          'this / before': fmt(median(ours.map((x, i) => x / base[i])), 2),
          'each round': ours.map((x, i) => fmt(x / base[i], 2)).join(' '),
        });
      }
    }
    printTable(
      `${documents} documents (~1 KB), serve of this tree; ${rounds} alternating rounds; load ${loadBefore} -> ${load()}; ${clis[1].name}`,
      rows,
    );
  } finally {
    await server.stop();
    feedTarget?.stop();
  }
} finally {
  before.remove();
  rmSync(work, { recursive: true, force: true });
}
