/**
 * "Not slower than before" for a change that should not touch speed (a restructure, a rename): this tree's built
 * CLI against `--base`'s (a commit built in a temporary worktree), on the same machine in the same run, against one
 * simulator (`serve` of this tree, in its own process), so only the client differs. Each round runs every command
 * with both CLIs, alternating which goes first:
 *
 *   feed        `feed -q` of N generated ~1 KB puts: documents/s, CPU (user+sys) per document, peak RSS
 *   visit       `visit ns/music -o /dev/null` of the same N documents: documents/s, CPU per document, peak RSS
 *   --help      `vespa-bulk --help`: CPU and wall seconds
 *   feed --help `vespa-bulk feed --help`: CPU and wall seconds
 *
 * Prints each figure's median over rounds for both, and this tree's over the base's (the median of the per-round
 * ratios). With --sink the feed goes to a minimal HTTP/1.1 sink (benchmarks/feed/sink-server.ts) instead, so that the
 * client's own cost is most of what is measured. Everything goes to 127.0.0.1 and runs in bounded time.
 *
 *   npx tsx benchmarks/regression/run.ts [--base main] [--documents 50000] [--rounds 3] [--help-runs 5] [--only feed,visit] [--sink]
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildCommit } from '../lib/baseline-build.js';
import { median, printTable } from '../lib/child.js';
import { buildDist, cliOf, fmt, generatePuts, runCliFeed } from '../lib/cli-feed.js';
import { onTeardown } from '../lib/teardown.js';

const { values } = parseArgs({
  options: {
    base: { type: 'string', default: 'main' },
    documents: { type: 'string', default: '50000' },
    rounds: { type: 'string', default: '3' },
    'help-runs': { type: 'string', default: '5' },
    only: { type: 'string' },
    sink: { type: 'boolean', default: false },
  },
});
const documents = Number(values.documents);
const rounds = Number(values.rounds);
const helpRuns = Number(values['help-runs']);

/** `serve` of a built CLI on a free port, without the config server; its URL read from what it prints. */
async function serve(cli: string): Promise<{ url: string; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [cli, 'serve', '--port', '0', '--no-config'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const untrack = onTeardown(() => child.kill('SIGKILL'));
  let err = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /document interface: (\S+)\/document\/v1\//.exec(err);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${err}`)));
  });
  return {
    url,
    async stop() {
      untrack();
      child.kill('SIGTERM');
      if (child.exitCode === null) await once(child, 'exit');
    },
  };
}

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

/** One `visit` by `cli` into /dev/null under GNU time; documents/s from its summary's own clock. */
async function visit(cli: string, url: string, cwd: string): Promise<Figures> {
  const report = join(cwd, `.time-visit-${Date.now()}.txt`);
  const child = spawn(
    '/usr/bin/time',
    [
      '-f',
      '%U %S %M',
      '-o',
      report,
      process.execPath,
      cli,
      'visit',
      'ns/music',
      '-t',
      url,
      '-o',
      '/dev/null',
      '--quiet',
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      cwd,
    },
  );
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  const [user, sys, kb] = readFileSync(report, 'utf8').trim().split('\n').pop()!.split(' ').map(Number);
  rmSync(report, { force: true });
  const summary = JSON.parse(out) as Record<string, number>;
  if (code !== 0 || summary['visit.document.count'] !== documents)
    throw new Error(`visit by ${cli} exited ${code} with ${summary['visit.document.count']} of ${documents} documents`);
  return {
    'docs/s': summary['visit.document.rate'],
    'CPU µs/doc': ((user + sys) * 1e6) / documents,
    'peak RSS MB': kb / 1024,
  };
}

/** `args` of `cli` run `helpRuns` times under bash's `time`: median CPU (user+sys) and wall, in ms. */
function helpFigures(cli: string, args: string[]): Figures {
  const cpu: number[] = [];
  const wall: number[] = [];
  for (let i = 0; i < helpRuns; i++) {
    const r = spawnSync(
      'bash',
      ['-c', 'TIMEFORMAT="%3R %3U %3S"; time "$@" >/dev/null 2>/dev/null', 'bash', process.execPath, cli, ...args],
      { encoding: 'utf8' },
    );
    const m = /(\d+\.\d+) (\d+\.\d+) (\d+\.\d+)\s*$/.exec(r.stderr.trim());
    if (r.status !== 0 || m === null) throw new Error(`${cli} ${args.join(' ')} failed: ${r.stderr}`);
    wall.push(Number(m[1]) * 1000);
    cpu.push((Number(m[2]) + Number(m[3])) * 1000);
  }
  return { 'CPU ms': median(cpu), 'wall ms': median(wall) };
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
    ['--help', (cli) => Promise.resolve(helpFigures(cli, ['--help']))],
    ['feed --help', (cli) => Promise.resolve(helpFigures(cli, ['feed', '--help']))],
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
