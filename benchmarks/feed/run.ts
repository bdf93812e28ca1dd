/**
 * Feeder benchmarks, each against a baseline measured in the same run, printed as a table:
 *
 *   throughput  200k generated 1 KB puts from a file into a minimal pipelined HTTP sink, vs autocannon posting
 *               the same body with the same connections and pipelining. Target: feeder/autocannon >= 1.0.
 *   memory      peak RSS feeding 1 GB of input vs 100 MB. Target: ratio <= 1.2 and < 200 MB. And the CLI's peak
 *               RSS (`feed --workers 1`, the built dist/) for 1,000 and 200,000 1 KB docs. Target: <= 100 MB.
 *   workers     the CLI's `feed --workers 1, 2, N` (N the cores) into the sink: docs/s, and CPU per document of
 *               the whole feeder process (user+sys) vs autocannon's CPU per request. The sink runs on the same
 *               cores, so on a small machine the sink and the feeder share the ceiling.
 *   reader      reading and cutting 200 MB of JSONL into routed operations (no sending), vs the bare file read
 *               and vs readline + JSON.parse per line (the naive reader). Informative, no target.
 *   transform   100k 1 KB puts into the sink with `transform` an identity module vs without (best of 3,
 *               alternating): what the transform stage costs. With BASELINE_REPO=<checkout> (e.g. the main branch
 *               before the transform was added), also this checkout's feed without a transform vs that one's:
 *               the raw-bytes path must not have slowed. Informative, no target.
 *   overload    the simulator with queueLimit 64 and a service rate it saturates at: the adaptive feeder vs
 *               --inflight 64. Targets: throughput >= 0.9 x, < 5 % of requests 429, 90 % of steady rate in 2 s.
 *
 * Usage: npx tsx benchmarks/feed/run.ts [throughput|memory|overload ...] [--docs N]
 * Everything goes to 127.0.0.1 and runs in bounded time; generated inputs live in a temp dir, deleted after.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { readFileSync, writeFileSync } from 'node:fs';
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { readSources } from '../../src/feed/source.js';
import { parseOperation } from '../../src/document/operation.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const autocannonCli = createRequire(import.meta.url).resolve('autocannon/autocannon.js');
const args = process.argv.slice(2);
const docsFlag = args.indexOf('--docs');
const throughputDocs = docsFlag >= 0 ? Number(args[docsFlag + 1]) : 200_000;
const picked = args.filter((a, i) => !a.startsWith('--') && (docsFlag < 0 || i !== docsFlag + 1));
const which = new Set(
  picked.length > 0 ? picked : ['reader', 'throughput', 'memory', 'workers', 'transform', 'overload'],
);
const connections = 8;
const pipelining = 16;
const work = mkdtempSync(join(tmpdir(), 'vb-bench-feed-'));
const rows: {
  bench: string;
  figure: string;
  value: string;
  baseline: string;
  ratio: string;
  target: string;
  ok: string;
}[] = [];
const children: ChildProcess[] = [];

function row(
  bench: string,
  figure: string,
  value: number,
  baseline: number | undefined,
  unit: string,
  target: string,
  ok: boolean,
) {
  rows.push({
    bench,
    figure,
    value: `${round(value)} ${unit}`,
    baseline: baseline === undefined ? '' : `${round(baseline)} ${unit}`,
    ratio: baseline === undefined ? '' : (value / baseline).toFixed(3),
    target,
    ok: ok ? 'yes' : 'NO',
  });
}

function round(n: number): string {
  return n >= 100 ? n.toFixed(0) : n.toFixed(2);
}

async function generate(path: string, count: number, size: number): Promise<void> {
  const out = createWriteStream(path);
  const pad = 'x'.repeat(Math.max(0, size - 80));
  for (let i = 0; i < count; i++) {
    const line = `{"put":"id:ns:music::doc-${i}","fields":{"title":"t${i}","n":${i},"text":"${pad}"}}\n`;
    if (!out.write(line)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

/** Starts a tsx child that prints its URL on its first stdout line. */
async function startServer(script: string, arg?: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(here, script), ...(arg ? [arg] : [])], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  children.push(child);
  let buf = '';
  for await (const chunk of child.stdout) {
    buf += chunk;
    if (buf.includes('\n')) break;
  }
  return { url: buf.trim(), child };
}

async function stopServer(s: { child: ChildProcess }): Promise<void> {
  s.child.stdin!.end();
  await once(s.child, 'exit');
}

interface ChildResult {
  summary: Record<string, any>;
  maxRssMB: number;
  series: number[];
}

async function feedInChild(
  source: string,
  options: Record<string, unknown>,
  script = join(here, 'feed-child.ts'),
): Promise<ChildResult> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, JSON.stringify({ source, options })], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const [code] = await once(child, 'exit');
  if (code !== 0) throw new Error(`feed child exited ${code}`);
  return JSON.parse(out) as ChildResult;
}

/**
 * autocannon in a process of its own, as the feeder is: both start cold, and neither shares a core with the
 * bench's own bookkeeping. (Run in this process, autocannon would be warmed by the rounds before it.)
 */
async function autocannonInChild(
  url: string,
  body: string,
): Promise<{ requests: { total: number }; duration: number }> {
  const child = spawn(
    process.execPath,
    // A fixed duration, not `amount`: autocannon notices that an amount is done only at its next one-second
    // tick, which would understate its rate by up to a second's worth.
    [
      autocannonCli,
      '--json',
      '-c',
      String(connections),
      '-p',
      String(pipelining),
      '-d',
      '5',
      '-m',
      'POST',
      '-H',
      'content-type=application/json',
      '-b',
      body,
      url,
    ],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  children.push(child);
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const [code] = await once(child, 'exit');
  if (code !== 0) throw new Error(`autocannon exited ${code}`);
  return JSON.parse(out) as { requests: { total: number }; duration: number };
}

const repo = fileURLToPath(new URL('../..', import.meta.url));

interface TimedResult {
  stdout: string;
  maxRssMB: number;
  /** User + system CPU seconds of the process. */
  cpuSeconds: number;
}

/**
 * Runs `node ARGS` under GNU time, which reports the child's own peak RSS and CPU (what `/usr/bin/time -v` shows
 * a user), without the bench's bookkeeping in the figures.
 */
async function timedNode(nodeArgs: string[], stdio: 'pipe' | 'ignore' = 'pipe'): Promise<TimedResult> {
  const report = join(work, `time-${children.length}.txt`);
  const child = spawn('/usr/bin/time', ['-f', '%M %U %S', '-o', report, process.execPath, ...nodeArgs], {
    stdio: ['ignore', stdio, 'ignore'],
  });
  children.push(child);
  let out = '';
  child.stdout?.on('data', (d) => (out += d));
  const [code] = await once(child, 'exit');
  if (code !== 0 && code !== 1) throw new Error(`node ${nodeArgs.join(' ')} exited ${code}`);
  const [kb, user, sys] = readFileSync(report, 'utf8').trim().split('\n').pop()!.split(' ').map(Number);
  return { stdout: out, maxRssMB: kb / 1024, cpuSeconds: user + sys };
}

/** The built CLI (dist/, as installed), built first so that the figures are of the current sources. */
let built = false;
async function cliFeed(
  url: string,
  input: string,
  workers: number,
): Promise<TimedResult & { summary: Record<string, any> }> {
  if (!built) {
    const b = spawn(process.execPath, [join(repo, 'scripts/build.mjs')], { stdio: 'ignore', cwd: repo });
    const [code] = await once(b, 'exit');
    if (code !== 0) throw new Error('build failed');
    built = true;
  }
  const r = await timedNode([
    join(repo, 'dist/cli/main.js'),
    'feed',
    '--workers',
    String(workers),
    '--target',
    url,
    '--connections',
    String(connections),
    '--pipelining',
    String(pipelining),
    input,
  ]);
  return { ...r, summary: JSON.parse(r.stdout) as Record<string, any> };
}

async function reader(): Promise<void> {
  const input = join(work, 'reader.jsonl');
  await generate(input, 200_000, 1024);
  const mb = statSync(input).size / 1e6;
  const time = async (fn: () => Promise<void>) => {
    let best = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 2; i++) {
      const t0 = performance.now();
      await fn();
      best = Math.min(best, (performance.now() - t0) / 1000);
    }
    return mb / best;
  };
  let sink = 0;
  const bare = await time(async () => {
    for await (const chunk of createReadStream(input, { highWaterMark: 256 * 1024 })) sink += (chunk as Buffer).length;
  });
  const naive = await time(async () => {
    for await (const line of createInterface({ input: createReadStream(input), crlfDelay: Infinity })) {
      if (line.length > 0) sink += (JSON.parse(line) as { put: string }).put.length;
    }
  });
  const ours = await time(async () => {
    for await (const batch of readSources(input))
      for (const item of batch.items) sink += parseOperation(item.bytes).path.length;
  });
  rm(input);
  row('reader', 'operations read and routed, MB/s vs bare file read', ours, bare, 'MB/s', '', true);
  row('reader', 'operations read and routed, MB/s vs readline + JSON.parse', ours, naive, 'MB/s', '', sink > 0);
}

async function throughput(): Promise<void> {
  const input = join(work, 'throughput.jsonl');
  await generate(input, throughputDocs, 1024);
  const sink = await startServer('sink-server.ts');
  const body = JSON.stringify({ fields: { title: 't1', n: 1, text: 'x'.repeat(944) } });
  let bestAc = 0;
  let bestFeed = 0;
  let feedSummary: Record<string, any> = {};
  let bestUnbatched = 0;
  // Best of 3 rounds, alternating, so a burst of load from elsewhere on the machine hits both sides alike.
  for (let round = 0; round < 3; round++) {
    const ac = await autocannonInChild(`${sink.url}/document/v1/ns/music/docid/doc-1`, body);
    bestAc = Math.max(bestAc, ac.requests.total / ac.duration);
    const r = await feedInChild(input, { endpoint: sink.url, connections, pipelining });
    if (r.summary['feeder.ok.rate'] > bestFeed) {
      bestFeed = r.summary['feeder.ok.rate'];
      feedSummary = r.summary;
    }
    const unbatched = await feedInChild(input, { endpoint: sink.url, connections, pipelining, batchWrites: false });
    bestUnbatched = Math.max(bestUnbatched, unbatched.summary['feeder.ok.rate']);
  }
  await stopServer(sink);
  rm(input);
  row(
    'throughput',
    `docs/s vs autocannon req/s (c=${connections}, p=${pipelining}, best of 3)`,
    bestFeed,
    bestAc,
    '/s',
    '>= 1.0',
    bestFeed >= bestAc,
  );
  row(
    'throughput',
    'docs/s with write batching vs without (one writev per request)',
    bestFeed,
    bestUnbatched,
    '/s',
    '',
    true,
  );
  row('throughput', 'feeder p50 latency', feedSummary['http.response.latency.millis.p50'], undefined, 'ms', '', true);
  row('throughput', 'feeder final in-flight limit', feedSummary['feeder.inflight.limit'], undefined, '', '', true);
}

async function transform(): Promise<void> {
  const count = 100_000;
  const input = join(work, 'transform.jsonl');
  await generate(input, count, 1024);
  const identity = join(work, 'identity.mjs');
  writeFileSync(identity, 'export default (op) => op;\n');
  const baselineRepo = process.env.BASELINE_REPO;
  const sink = await startServer('sink-server.ts');
  // Wall rate and the feeding process's CPU (user + sys, under GNU time): on a busy machine the CPU per document is
  // the steadier figure of what the transform stage costs.
  const best = {
    none: { rate: 0, cpu: Infinity },
    identity: { rate: 0, cpu: Infinity },
    before: { rate: 0, cpu: Infinity },
  };
  const run = async (
    key: keyof typeof best,
    options: Record<string, unknown>,
    script = join(here, 'feed-child.ts'),
  ): Promise<void> => {
    const r = await timedNode([
      '--import',
      'tsx',
      script,
      JSON.stringify({ source: input, options: { endpoint: sink.url, connections, pipelining, ...options } }),
    ]);
    const summary = (JSON.parse(r.stdout) as ChildResult).summary;
    if (summary['feeder.ok.count'] !== count) throw new Error(`${key}: ${summary['feeder.ok.count']} of ${count} fed`);
    best[key] = {
      rate: Math.max(best[key].rate, summary['feeder.ok.rate']),
      cpu: Math.min(best[key].cpu, r.cpuSeconds),
    };
  };
  // Alternating rounds, best of each, so a burst of load from elsewhere hits every variant alike.
  for (let round = 0; round < 3; round++) {
    await run('none', {});
    await run('identity', { transform: identity });
    if (baselineRepo !== undefined) await run('before', {}, join(baselineRepo, 'benchmarks/feed/feed-child.ts'));
  }
  await stopServer(sink);
  rm(input);
  const us = (cpu: number) => (cpu / count) * 1e6;
  row(
    'transform',
    'docs/s, identity --transform vs without (best of 3)',
    best.identity.rate,
    best.none.rate,
    '/s',
    '',
    true,
  );
  row(
    'transform',
    'CPU us/doc, identity --transform vs without',
    us(best.identity.cpu),
    us(best.none.cpu),
    'us',
    '',
    true,
  );
  if (baselineRepo !== undefined) {
    row(
      'transform',
      `docs/s without --transform vs ${baselineRepo}`,
      best.none.rate,
      best.before.rate,
      '/s',
      '>= 0.95',
      best.none.rate >= 0.95 * best.before.rate,
    );
    row(
      'transform',
      `CPU us/doc without --transform vs ${baselineRepo}`,
      us(best.none.cpu),
      us(best.before.cpu),
      'us',
      '<= 1.05',
      best.none.cpu <= 1.05 * best.before.cpu,
    );
  }
}

async function memory(): Promise<void> {
  const small = join(work, '100m.jsonl');
  const big = join(work, '1g.jsonl');
  await generate(small, 100_000, 1024);
  await generate(big, 1_000_000, 1024);
  const sink = await startServer('sink-server.ts');
  const a = await feedInChild(small, { endpoint: sink.url, connections, pipelining });
  const b = await feedInChild(big, { endpoint: sink.url, connections, pipelining });
  await stopServer(sink);
  const sizes = `${(statSync(small).size / 1e6).toFixed(0)} MB vs ${(statSync(big).size / 1e6).toFixed(0)} MB`;
  rm(small);
  rm(big);
  row(
    'memory',
    `peak RSS, 1 GB input vs 100 MB (${sizes})`,
    b.maxRssMB,
    a.maxRssMB,
    'MB',
    '<= 1.2',
    b.maxRssMB <= 1.2 * a.maxRssMB,
  );
  row('memory', 'peak RSS, 1 GB input', b.maxRssMB, undefined, 'MB', '< 200 MB', b.maxRssMB < 200);
  row('memory', '1 GB feed rate', b.summary['feeder.ok.rate'], undefined, '/s', '', true);

  // The CLI as a user runs it: its own imports, V8 flags and young generation included.
  const k1 = join(work, '1k.jsonl');
  const k200 = join(work, '200k.jsonl');
  await generate(k1, 1_000, 1024);
  await generate(k200, 200_000, 1024);
  const cliSink = await startServer('sink-server.ts');
  for (const [name, input, count] of [
    ['1k', k1, 1_000],
    ['200k', k200, 200_000],
  ] as const) {
    const r = await cliFeed(cliSink.url, input, 1);
    row(
      'memory',
      `CLI feed --workers 1 peak RSS, ${name} 1 KB docs`,
      r.maxRssMB,
      undefined,
      'MB',
      '<= 100 MB',
      r.maxRssMB <= 100 && r.summary['feeder.ok.count'] === count,
    );
  }
  await stopServer(cliSink);
  rm(k1);
  rm(k200);
}

async function workers(): Promise<void> {
  const input = join(work, 'workers.jsonl');
  await generate(input, throughputDocs, 1024);
  const sink = await startServer('sink-server.ts');
  const body = JSON.stringify({ fields: { title: 't1', n: 1, text: 'x'.repeat(944) } });
  const ac = await timedNode([
    autocannonCli,
    '--json',
    '-c',
    String(connections),
    '-p',
    String(pipelining),
    '-d',
    '5',
    '-m',
    'POST',
    '-H',
    'content-type=application/json',
    '-b',
    body,
    `${sink.url}/document/v1/ns/music/docid/doc-1`,
  ]);
  const acResult = JSON.parse(ac.stdout) as { requests: { total: number }; duration: number };
  const acUs = (ac.cpuSeconds * 1e6) / acResult.requests.total;
  row(
    'workers',
    `autocannon req/s (c=${connections}, p=${pipelining}), CPU ${round(acUs)} us/req`,
    acResult.requests.total / acResult.duration,
    undefined,
    '/s',
    '',
    true,
  );
  const cores = availableParallelism();
  for (const n of [...new Set([1, 2, cores])]) {
    const r = await cliFeed(sink.url, input, n);
    const us = (r.cpuSeconds * 1e6) / throughputDocs;
    row(
      'workers',
      `feed --workers ${n}: docs/s`,
      r.summary['feeder.ok.rate'],
      undefined,
      '/s',
      '',
      r.summary['feeder.ok.count'] === throughputDocs,
    );
    row(
      'workers',
      `feed --workers ${n}: CPU us/doc (process user+sys) vs autocannon's us/req`,
      us,
      acUs,
      'us',
      '',
      true,
    );
  }
  await stopServer(sink);
  rm(input);
  // The sink is one Node thread on the same cores: it caps every figure above near autocannon's rate.
  row('workers', `cores on this machine (the sink shares them)`, cores, undefined, '', '', true);
}

function steadyAndRamp(series: number[]): { steady: number; rampSeconds: number } {
  const perSecond = series.map((n) => n * 10);
  // Steady rate: the mean over the second half, leaving out the last bucket (the tail of the feed).
  const body = perSecond.slice(Math.floor(perSecond.length / 2), -1);
  const steady = body.reduce((s, x) => s + x, 0) / Math.max(1, body.length);
  let rampSeconds = Number.POSITIVE_INFINITY;
  for (let i = 1; i < perSecond.length; i++) {
    // Two consecutive buckets (200 ms), so a lone spike does not count as arrived.
    if ((perSecond[i - 1] + perSecond[i]) / 2 >= 0.9 * steady) {
      rampSeconds = (i + 1) / 10;
      break;
    }
  }
  return { steady, rampSeconds };
}

async function overload(): Promise<void> {
  const docs = 40_000;
  const rate = 5_000;
  const input = join(work, 'overload.jsonl');
  await generate(input, docs, 1024);
  const faults = JSON.stringify({ queueLimit: 64, maxOpsPerSecond: rate });
  const run = async (options: Record<string, unknown>) => {
    const sim = await startServer('sim-server.ts', faults);
    const r = await feedInChild(input, { endpoint: sim.url, connections, pipelining, ...options });
    await stopServer(sim);
    return r;
  };
  const fixed = await run({ inflight: 64 });
  const adaptive = await run({});
  rm(input);
  const f = steadyAndRamp(fixed.series);
  const a = steadyAndRamp(adaptive.series);
  const throttledShare = adaptive.summary['feeder.throttled.count'] / adaptive.summary['http.request.count'];
  row(
    'overload',
    `ok/s adaptive vs --inflight 64 (service rate ${rate}/s, queue 64)`,
    adaptive.summary['feeder.ok.rate'],
    fixed.summary['feeder.ok.rate'],
    '/s',
    '>= 0.9',
    adaptive.summary['feeder.ok.rate'] >= 0.9 * fixed.summary['feeder.ok.rate'],
  );
  row(
    'overload',
    'share of requests answered 429 (adaptive)',
    throttledShare * 100,
    undefined,
    '%',
    '< 5 %',
    throttledShare < 0.05,
  );
  row(
    'overload',
    'time to 90% of steady rate (adaptive)',
    a.rampSeconds,
    f.rampSeconds,
    's',
    '<= 2 s',
    a.rampSeconds <= 2,
  );
  row('overload', 'steady rate adaptive vs fixed', a.steady, f.steady, '/s', '', true);
  row(
    'overload',
    'final in-flight limit (adaptive)',
    adaptive.summary['feeder.inflight.limit'],
    undefined,
    '',
    '',
    true,
  );
  row(
    'overload',
    'p99 latency adaptive vs fixed',
    adaptive.summary['http.response.latency.millis.p99'],
    fixed.summary['http.response.latency.millis.p99'],
    'ms',
    '',
    true,
  );
}

function rm(path: string): void {
  rmSync(path, { force: true });
}

try {
  if (which.has('reader')) await reader();
  if (which.has('throughput')) await throughput();
  if (which.has('memory')) await memory();
  if (which.has('workers')) await workers();
  if (which.has('transform')) await transform();
  if (which.has('overload')) await overload();
} finally {
  rmSync(work, { recursive: true, force: true });
  for (const c of children) if (c.exitCode === null) c.kill();
}

const headers = ['bench', 'figure', 'value', 'baseline', 'ratio', 'target', 'ok'] as const;
const widths = headers.map((h) => Math.max(h.length, ...rows.map((r) => r[h].length)));
const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join(' | ');
console.log(line([...headers]));
console.log(widths.map((w) => '-'.repeat(w)).join('-|-'));
for (const r of rows) console.log(line(headers.map((h) => r[h])));
