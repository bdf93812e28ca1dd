/**
 * The feeder against the real container's HTTP server (Jetty 12, as Vespa sets up its connector; see
 * endpoint.ts), the figures that count for a user's cluster. Each scenario's figures are printed as ratios to a
 * baseline measured in the same run:
 *
 *   unlimited  a cluster so large that only the time per operation bounds it (0, 2 and 10 ms): ops/s, p99 and
 *              the feeder's CPU per operation for --protocol auto, h2 and http1.1 with defaults, against the
 *              old defaults' transport (HTTP/1.1, 8 connections x 32 pipelined) as the baseline. Targets: at
 *              10 ms, auto >= 20,000 ops/s with p99 < 50 ms; at 0 ms (a null endpoint), h2's CPU per operation
 *              <= 1.2 x the baseline's. At 2 and 10 ms also the layouts the defaults were chosen against
 *              (HTTP/2 with 2 connections x 512 streams and 8 x 128, HTTP/1.1 pipelining 2).
 *   bounded    32 operations at the content nodes at once (2 and 10 ms each: capacity 16,000 and 3,200/s), 256
 *              more in the handler's queue, then 429: the best rate of a sweep of fixed in-flight limits is the
 *              capacity (the baseline); auto, h2 and http1.1 with defaults against it. Target: auto >= 0.9 x
 *              capacity with < 1 % of the answers 429.
 *
 *   workers    unlimited at 10 ms: --workers 2 (and the cores, when more) against --workers 1 (the default): ops/s,
 *              CPU per operation and peak RSS of the whole process. A second worker is the default only where it gains.
 *
 * Usage: npx tsx benchmarks/jetty/run.ts [unlimited|bounded|workers ...] [--docs N] [--delays 0,2,10] [--rounds N]
 * Runs the built CLI (dist/, built first) with --workers 1 under GNU time; all traffic stays on 127.0.0.1.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildDist, generatePuts, runCliFeed } from '../lib/cli-feed.js';
import { jettyScript, startJetty, type JettyEndpoint } from './endpoint.js';

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const flagValues = new Set(['--docs', '--delays', '--rounds'].map((f) => flag(f)).filter((v) => v !== undefined));
const picked = args.filter((a) => !a.startsWith('--') && !flagValues.has(a));
const which = new Set(picked.length > 0 ? picked : ['unlimited', 'bounded', 'workers']);
const docs = Number(flag('--docs') ?? 200_000);
const delays = (flag('--delays') ?? '0,2,10').split(',').map(Number);
const rounds = Number(flag('--rounds') ?? 1);
const work = mkdtempSync(join(tmpdir(), 'vb-bench-jetty-'));
const warmDocs = Math.min(docs, 50_000);
const warmInput = join(work, 'warm.jsonl');

interface Run {
  rate: number;
  maxRssMB: number;
  p99: number;
  cpuUsPerOp: number;
  serverCpuUsPerOp: number;
  share429: number;
  limit: number;
  protocol: string;
  connections: number;
  perConnectionMax: number;
}

interface Row {
  scenario: string;
  variant: string;
  run: Run;
  baseline?: Run;
  target?: string;
  ok?: boolean;
}

const rows: Row[] = [];

/** The JVM's user+system CPU seconds, from /proc. */
function jvmCpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

/** One feed of `input` by the built CLI under GNU time, with `flags`. */
async function feed(endpoint: JettyEndpoint, input: string, count: number, flags: string[]): Promise<Run> {
  await endpoint.reset();
  const jvmBefore = jvmCpuSeconds(endpoint.pid);
  const workers = flags.includes('--workers') ? [] : ['--workers', '1'];
  const r = await runCliFeed({ target: endpoint.url, input, count, flags: [...workers, ...flags], cwd: work });
  if (r.code !== 0 && r.code !== 1) throw new Error(`feed ${flags.join(' ')} exited ${r.code}`);
  const jvm = jvmCpuSeconds(endpoint.pid) - jvmBefore;
  const stats = await endpoint.stats();
  return {
    rate: r.rate,
    maxRssMB: r.maxRssMB,
    p99: r.p99,
    cpuUsPerOp: r.cpuUsPerOp,
    serverCpuUsPerOp: (jvm * 1e6) / count,
    share429: r.share429,
    limit: r.limit,
    protocol: r.protocol,
    connections: stats.connections,
    perConnectionMax: stats.perConnectionMaxInProgress,
  };
}

/**
 * Jetty's JIT compiles each protocol's code path on first use: a measured run on a cold path costs the JVM 2-3x
 * the CPU per operation (the first h2 run after an HTTP/1.1 baseline fed at 0.6x the second's rate), so every
 * endpoint is fed over both protocols once, unmeasured, before its first figure.
 */
async function warm(endpoint: JettyEndpoint, input: string): Promise<void> {
  for (const protocol of ['h2', 'http1.1']) await feed(endpoint, input, warmDocs, ['--protocol', protocol]);
}

/** The median run of `rounds` by rate. */
async function measure(endpoint: JettyEndpoint, input: string, count: number, flags: string[]): Promise<Run> {
  const runs: Run[] = [];
  for (let i = 0; i < rounds; i++) runs.push(await feed(endpoint, input, count, flags));
  runs.sort((a, b) => a.rate - b.rate);
  return runs[Math.floor(runs.length / 2)];
}

const variants: [string, string[]][] = [
  ['auto (defaults)', []],
  ['--protocol h2', ['--protocol', 'h2']],
  ['--protocol http1.1', ['--protocol', 'http1.1']],
];
/** Other layouts of the same transport, against which the defaults were chosen (unlimited, 2 and 10 ms only). */
const layouts: [string, string[]][] = [
  ['h2, 2 conn x 512 streams', ['--protocol', 'h2', '--connections', '2', '--max-streams', '512']],
  ["h2, 8 conn x 128 streams (the Go CLI's)", ['--protocol', 'h2', '--connections', '8', '--max-streams', '128']],
  ['http1.1, --pipelining 2', ['--protocol', 'http1.1', '--pipelining', '2']],
];
const oldDefaults: [string, string[]] = [
  'HTTP/1.1 8 x 32 pipelined (old defaults)',
  ['--protocol', 'http1.1', '--connections', '8', '--pipelining', '32'],
];

async function unlimited(script: string, input: string): Promise<void> {
  for (const delay of delays) {
    const endpoint = await startJetty(script, delay);
    try {
      await warm(endpoint, warmInput);
      const scenario = `unlimited, ${delay} ms`;
      const baseline = await measure(endpoint, input, docs, oldDefaults[1]);
      rows.push({ scenario, variant: oldDefaults[0], run: baseline, baseline });
      for (const [name, flags] of variants) {
        const run = await measure(endpoint, input, docs, flags);
        const row: Row = { scenario, variant: name, run, baseline };
        if (delay === 10 && name.startsWith('auto')) {
          row.target = '>= 20,000/s, p99 < 50 ms';
          row.ok = run.rate >= 20_000 && run.p99 < 50;
        }
        if (delay === 0 && name.includes('h2')) {
          row.target = 'CPU/op <= 1.2 x baseline';
          row.ok = run.cpuUsPerOp <= 1.2 * baseline.cpuUsPerOp;
        }
        rows.push(row);
      }
      if (delay > 0)
        for (const [name, flags] of layouts)
          rows.push({ scenario, variant: name, run: await measure(endpoint, input, docs, flags), baseline });
    } finally {
      await endpoint.stop();
    }
  }
}

async function bounded(script: string, input: string): Promise<void> {
  for (const delay of delays.filter((d) => d > 0)) {
    const endpoint = await startJetty(script, delay, 32);
    try {
      await warm(endpoint, warmInput);
      const scenario = `bounded, 32 slots x ${delay} ms (${Math.round(32_000 / delay)}/s)`;
      const count = Math.min(docs, Math.round((32_000 / delay) * 6));
      let best: Run | undefined;
      let bestLimit = 0;
      for (const limit of [16, 24, 32, 40, 48, 64, 96, 128]) {
        const run = await measure(endpoint, input, count, ['--protocol', 'h2', '--inflight', String(limit)]);
        if (best === undefined || run.rate > best.rate) {
          best = run;
          bestLimit = limit;
        }
      }
      rows.push({ scenario, variant: `best fixed --inflight (${bestLimit}) of 16-128`, run: best!, baseline: best });
      for (const [name, flags] of variants) {
        const run = await measure(endpoint, input, count, flags);
        const row: Row = { scenario, variant: name, run, baseline: best };
        if (name.startsWith('auto')) {
          row.target = '>= 0.9 x capacity, < 1 % 429';
          row.ok = run.rate >= 0.9 * best!.rate && run.share429 < 0.01;
        }
        rows.push(row);
      }
    } finally {
      await endpoint.stop();
    }
  }
}

async function workers(script: string, input: string): Promise<void> {
  const endpoint = await startJetty(script, 10);
  try {
    await warm(endpoint, warmInput);
    const scenario = 'unlimited, 10 ms, workers';
    const baseline = await measure(endpoint, input, docs, ['--workers', '1']);
    rows.push({ scenario, variant: '--workers 1 (default)', run: baseline, baseline });
    const counts = [...new Set([2, availableParallelism()])].filter((n) => n > 1);
    for (const n of counts)
      rows.push({
        scenario,
        variant: `--workers ${n}`,
        run: await measure(endpoint, input, docs, ['--workers', String(n)]),
        baseline,
      });
  } finally {
    await endpoint.stop();
  }
}

function print(): void {
  const fmt = (n: number, d = 0) => (Number.isFinite(n) ? n.toFixed(d) : '-');
  const table = rows.map((r) => ({
    scenario: r.scenario,
    variant: r.variant,
    'ops/s': fmt(r.run.rate),
    'vs baseline': r.baseline !== undefined ? fmt(r.run.rate / r.baseline.rate, 2) : '',
    'p99 ms': fmt(r.run.p99, 1),
    'CPU µs/op': fmt(r.run.cpuUsPerOp, 1),
    'CPU vs baseline': r.baseline !== undefined ? fmt(r.run.cpuUsPerOp / r.baseline.cpuUsPerOp, 2) : '',
    'Jetty CPU µs/op': fmt(r.run.serverCpuUsPerOp, 1),
    'RSS MB': fmt(r.run.maxRssMB),
    '429 %': fmt(r.run.share429 * 100, 2),
    'limit at end': String(r.run.limit),
    wire: `${r.run.protocol}, ${r.run.connections} conn, <= ${r.run.perConnectionMax}/conn`,
    target: r.target ?? '',
    ok: r.ok === undefined ? '' : r.ok ? 'yes' : 'NO',
  }));
  console.table(table);
}

async function main(): Promise<void> {
  const script = jettyScript();
  if (script === undefined) {
    console.log(
      'skipped: no Jetty endpoint (shared/jetty-endpoint/start.sh beside the repository, or JETTY_ENDPOINT=path/to/start.sh)',
    );
    return;
  }
  await buildDist();
  const input = join(work, 'puts.jsonl');
  await generatePuts(input, docs);
  await generatePuts(warmInput, warmDocs);
  console.log(
    `${docs} puts of ~1 KB, --workers 1 unless said, ${rounds} round(s) each (median), delays ${delays.join(', ')} ms, ${availableParallelism()} cores; Jetty from ${script}`,
  );
  if (which.has('unlimited')) await unlimited(script, input);
  if (which.has('bounded')) await bounded(script, input);
  if (which.has('workers')) await workers(script, input);
  print();
  if (rows.some((r) => r.ok === false)) process.exitCode = 1;
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => rmSync(work, { recursive: true, force: true }));
