/**
 * Where the default in-flight limit sits against a cluster's knee (issue 42). For each topology: a sweep of fixed
 * `--inflight` levels, the defaults and the official Go CLI (`shared/vespa-cli`), alternating over the rounds, all
 * against the real container's HTTP server (Jetty 12: shared/jetty-endpoint, shared/lb-cluster). Printed per
 * topology:
 *
 *   the sweep's best throughput; the knee (the fewest in flight reaching 0.95 of it) and its average latency;
 *   each run's throughput as a ratio to the best, its average latency as a ratio to the knee's, its 429 share
 *   and the worst p99 of its first 5 seconds (from our CLI's --stats) as a ratio to the knee's latency; the
 *   official CLI's the same way (it records no seconds: no start p99). Then whether the defaults met the goal, and
 *   by how much where they did not, and the in-flight limit of each second of each adaptive run.
 *
 * The goal on each: throughput >= 0.95 of the best, latency <= 1.25 x the knee's, 429 share <= 0.1 %, 0 failed,
 * start p99 <= 3 x the knee's latency. Topology 4 also: every node fed (and the rate against the nominal capacity,
 * >= 0.9); 6: the rate before, during and after the fault, and the lowest limit held during it.
 *
 * Topologies (the issue's numbering):
 *   1   unlimited  only latency bounds it: 10 ms per operation
 *   2   bounded    32 slots x 2 ms (16,000/s) + a queue of 256, then 429
 *   3   embedding  8 slots x 100 ms (80/s) + a queue of 64: an application that embeds at feed time
 *   4a  L4, 6 nodes   shared/lb-cluster behind HAProxy in TCP mode: 6 x 3 slots x 4 ms (4,500/s), queue 256 each
 *   4b  L4, 16 nodes  the same with 16 x 1 slot x 4 ms (4,000/s)
 *                  (capacity well below what one client pushes through HAProxy beside the 6 or 16 nodes' JVM on
 *                  2 cores: at 9,000/s nominal the best fixed level reached about 2,000/s on a loaded machine)
 *   5   nginx      Debian's nginx (installed with apt-get when missing) terminating TLS, HTTP/2 to the clients, one
 *                  worker, worker_connections 1024, a new upstream HTTP/1.1 connection per request, in front of
 *                  Jetty unlimited at 10 ms (so only nginx's limits stop a climb); 5xx and proxy pages counted
 *   6a  node kill  4a with node 0 killed at 10 s and started again at 20 s (every run lasts about 30 s)
 *   6b  stall      2 with the Jetty JVM stopped (SIGSTOP) at 10 s for 2 s, as a GC pause (about 30 s a run)
 * 4-6 size their input from an unmeasured warm-up's rate (so each run lasts about --seconds, or --fault-seconds
 * for 6, on whatever the machine gives), 1-3 from their capacity. The official CLI ignores SIGINT, so no run is cut
 * by time: a fault's input is half as large again, for the runs that outrun the warm-up. Its "before" rate leaves
 * out the first 3 s. Where the official CLI needs TLS options (5), a probe of 3 puts first says whether it can
 * feed the target at all (its row is left out, with the reason, where not).
 *
 * Usage: npx tsx benchmarks/knee/run.ts [1 2 3 4a 4b 5 6a 6b | 4 | 6] [--rounds N] [--seconds S]
 *          [--fault-seconds S] [--base REV]
 * Runs the built CLI (dist/, built first) with --workers 1; all traffic stays on 127.0.0.1. With --base, the
 * defaults of the CLI built from commit REV take their turn too (a row "defaults at REV"): before and after in one run.
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildDist, fmt, generatePuts, runCliFeed } from '../lib/cli-feed.js';
import { buildCommit, type CommitBuild } from '../lib/baseline-build.js';
import { findShared } from '../lib/shared.js';
import { jettyScript } from '../jetty/endpoint.js';
import { lowestLimitWithin, rateWithin, startP99, takeSeconds } from './seconds.js';
import { clusterTarget, jettyTarget, nginxTarget, type Observed, type Target } from './targets.js';

interface Topology {
  id: string;
  name: string;
  /** The fixed levels of the sweep. */
  levels: number[];
  /** About what it takes per second: sizes the input (1-3) or the warm-up's (4-6). */
  capacity: number;
  /** Sizes the input from a warm-up's rate: where the client, not the cluster, may be what bounds it. */
  sizeByWarmup?: boolean;
  /** Seconds into each run that its fault begins and ends; the run lasts --fault-seconds. */
  fault?: { label: string; at: number; until: number };
  start(script: string): Promise<Target | string>;
}

const topologies: Topology[] = [
  {
    id: '1',
    name: 'unlimited, 10 ms',
    capacity: 30_000,
    levels: [64, 128, 256, 384, 512, 768, 1024],
    start: (s) => jettyTarget(s, 10, 0, 256),
  },
  {
    id: '2',
    name: 'bounded, 32 x 2 ms + queue 256',
    capacity: 16_000,
    levels: [16, 24, 32, 40, 48, 64, 96, 128, 192],
    start: (s) => jettyTarget(s, 2, 32, 256),
  },
  {
    id: '3',
    name: 'embedding, 8 x 100 ms + queue 64',
    capacity: 80,
    levels: [4, 6, 8, 10, 12, 16, 24],
    start: (s) => jettyTarget(s, 100, 8, 64),
  },
  {
    id: '4a',
    name: 'L4 balancer, 6 nodes x 3 slots x 4 ms + queue 256',
    capacity: 4500,
    sizeByWarmup: true,
    levels: [16, 32, 48, 64, 96, 128],
    start: () => clusterTarget(6, 4, 3, 256),
  },
  {
    id: '4b',
    name: 'L4 balancer, 16 nodes x 1 slot x 4 ms + queue 256',
    capacity: 4000,
    sizeByWarmup: true,
    levels: [16, 32, 48, 64, 96, 128],
    start: () => clusterTarget(16, 4, 1, 256),
  },
  {
    id: '5',
    name: 'nginx (TLS, worker_connections 1024) in front of Jetty unlimited at 10 ms',
    capacity: 5000,
    sizeByWarmup: true,
    levels: [32, 64, 128, 256, 512, 1024],
    start: (s) => nginxTarget(s, 10),
  },
  {
    id: '6a',
    name: '4a with node 0 killed at 10 s, started at 20 s',
    capacity: 4500,
    sizeByWarmup: true,
    fault: { label: 'node 0 down', at: 10, until: 20 },
    levels: [32, 64, 128],
    start: () => clusterTarget(6, 4, 3, 256, true),
  },
  {
    id: '6b',
    name: '2 with the JVM stopped for 2 s at 10 s',
    capacity: 16_000,
    sizeByWarmup: true,
    fault: { label: 'stalled', at: 10, until: 12 },
    levels: [32, 64, 128],
    start: (s) => jettyTarget(s, 2, 32, 256, true),
  },
];

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
// The words that are no flag's value (`--rounds 2` is not topology 2); '4' picks 4a and 4b.
const picked = args.filter((a, i) => !a.startsWith('--') && !(i > 0 && args[i - 1].startsWith('--')));
const isPicked = (id: string): boolean => picked.length === 0 || picked.includes(id) || picked.includes(id[0]);
const rounds = Number(flag('--rounds') ?? 2);
/** About how long each feed lasts at the topology's best rate. */
const seconds = Number(flag('--seconds') ?? 6);
/** How long each run of a fault topology lasts: well past the fault's end. */
const faultSeconds = Number(flag('--fault-seconds') ?? 30);
const baseRev = flag('--base');
let base: CommitBuild | undefined;
const work = mkdtempSync(join(tmpdir(), 'vb-bench-knee-'));

interface Figures extends Observed {
  rate: number;
  avgMs: number;
  p99: number;
  share429: number;
  failed: number;
  /** The worst p99 of the first seconds (ours only: from --stats). */
  startP99: number;
  /** 5xx answers, and those of them that were a proxy's page, not Vespa's JSON. */
  count5xx: number;
  proxyPages: number;
  /** With a fault: ops/s before, during and after it, and the lowest in-flight limit held during it. */
  before: number;
  during: number;
  after: number;
  lowLimit: number;
}

/**
 * The in-flight limit of each second of one of our runs (from --stats), kept beside its figures (which are medians
 * of numbers): printed for the adaptive runs, so that where the defaults sat, and when, can be read after the run.
 */
const limitsOf = new WeakMap<Figures, number[]>();

/** When a run's fault began and ended, epoch ms. */
interface FaultSpan {
  begun: number;
  ended: number;
}

/** The official CLI's binary, unpacked by shared/vespa-cli/path. */
function officialCli(): string | undefined {
  const path = findShared('vespa-cli/path', undefined);
  if (path === undefined) return undefined;
  const r = spawnSync(path, [], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

/**
 * Begins the topology's fault its seconds from now and ends it at its end; `settle` (once the run is over) waits
 * for the end, or drops the fault where the run ended before it began.
 */
function scheduleFault(t: Topology, target: Target): { span: FaultSpan; settle: () => Promise<void> } {
  const span: FaultSpan = { begun: Number.NaN, ended: Number.NaN };
  const { fault } = target;
  if (t.fault === undefined || fault === undefined) return { span, settle: async () => undefined };
  const { at, until } = t.fault;
  let cancel = (): void => undefined;
  const done = new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      // Once begun, it ends.
      cancel = () => undefined;
      span.begun = Date.now();
      void fault
        .begin()
        .then(() => new Promise((r) => setTimeout(r, (until - at) * 1000)))
        .then(() => fault.end())
        .then(() => void (span.ended = Date.now()))
        .catch((err: unknown) => console.error(`fault: ${String(err)}`))
        .finally(resolve);
    }, at * 1000);
    cancel = () => {
      clearTimeout(timer);
      resolve();
    };
  });
  return {
    span,
    settle: () => {
      cancel();
      return done;
    },
  };
}

function codes5xx(codes: Record<string, number> | undefined): number {
  return Object.entries(codes ?? {}).reduce((a, [code, n]) => (code.startsWith('5') ? a + n : a), 0);
}

function phases(
  t: Topology,
  span: FaultSpan,
  secs: ReturnType<typeof takeSeconds>,
): Pick<Figures, 'before' | 'during' | 'after' | 'lowLimit'> {
  if (t.fault === undefined || secs.length === 0)
    return { before: Number.NaN, during: Number.NaN, after: Number.NaN, lowLimit: Number.NaN };
  return {
    // Before it, past the start's first seconds (the climb and the client's JIT).
    before: rateWithin(secs, secs[0].from + 3000, span.begun),
    during: rateWithin(secs, span.begun, span.ended),
    after: rateWithin(secs, span.ended, Number.POSITIVE_INFINITY),
    lowLimit: lowestLimitWithin(secs, span.begun, span.ended),
  };
}

async function ours(
  t: Topology,
  target: Target,
  input: string,
  count: number,
  flags: string[],
  cli?: string,
): Promise<Figures> {
  await target.reset();
  const stats = join(work, `stats-${Date.now()}.jsonl`);
  let fault = { span: { begun: Number.NaN, ended: Number.NaN }, settle: async () => undefined } as ReturnType<
    typeof scheduleFault
  >;
  let r: Awaited<ReturnType<typeof runCliFeed>>;
  try {
    r = await runCliFeed({
      target: target.url,
      input,
      count,
      flags: ['--workers', '1', '--stats', stats, ...target.flags, ...flags],
      cwd: work,
      onStart: () => (fault = scheduleFault(t, target)),
      ...(cli !== undefined && { cli }),
    });
  } finally {
    // Also when the run failed: no fault may begin after the target is gone.
    await fault.settle();
  }
  const secs = takeSeconds(stats);
  const figures: Figures = {
    rate: r.rate,
    avgMs: r.summary['http.response.latency.millis.avg'] as number,
    p99: r.p99,
    share429: r.share429,
    failed: r.failed,
    startP99: startP99(secs),
    count5xx: codes5xx(r.summary['http.response.code.counts']),
    proxyPages: r.summary['http.response.proxy.page.count'] ?? 0,
    ...phases(t, fault.span, secs),
    ...(await target.observe()),
  };
  limitsOf.set(
    figures,
    secs.map((s) => s.inflightLimit),
  );
  return figures;
}

/** One `vespa feed` of `input`; killed after `limitSeconds` (it retries an operation that never passes for long). */
async function officialFeed(
  binary: string,
  target: Target,
  input: string,
  limitSeconds: number,
  args: string[] = [],
): Promise<{ summary?: Record<string, any>; err: string; killed: boolean }> {
  const home = join(work, 'vespa-home');
  const child = spawn(binary, ['feed', ...args, '--target', target.url, input], {
    env: { ...process.env, HOME: home, VESPA_CLI_HOME: home, ...target.officialEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let killed = false;
  const limit = setTimeout(() => {
    killed = true;
    child.kill('SIGKILL');
  }, limitSeconds * 1000);
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  await once(child, 'exit');
  clearTimeout(limit);
  try {
    return { summary: JSON.parse(out) as Record<string, any>, err, killed };
  } catch {
    return { err, killed };
  }
}

/**
 * Whether the official CLI feeds the target at all: a few puts first where it needs TLS options (it retries
 * each failing put ten times, and a whole input of them takes many minutes); a reason where it does not.
 */
async function officialProbe(binary: string, target: Target, input: string): Promise<string | undefined> {
  if (Object.keys(target.officialEnv).length === 0) return undefined;
  const few = join(work, 'probe.jsonl');
  writeFileSync(few, readFileSync(input, 'utf8').split('\n').slice(0, 3).join('\n') + '\n');
  const r = await officialFeed(binary, target, few, 60, ['--verbose']);
  if (r.summary !== undefined && r.summary['feeder.ok.count'] > 0) return undefined;
  const first = /got error "([^\n]*)/.exec(r.err)?.[1] ?? r.err.trim().split('\n').pop() ?? '';
  return `it fed none of 3 puts to ${target.url}: ${first.slice(0, 220)}`;
}

async function official(
  t: Topology,
  binary: string,
  target: Target,
  input: string,
  runSeconds: number,
): Promise<Figures | string> {
  await target.reset();
  const fault = scheduleFault(t, target);
  const r = await officialFeed(binary, target, input, Math.max(120, 10 * runSeconds));
  await fault.settle();
  const s = r.summary;
  if (s === undefined) {
    const why = r.killed ? 'killed at its time limit' : r.err.trim().split('\n').slice(-2).join(' ').slice(0, 200);
    return `no summary (${why})`;
  }
  const responses = (s['http.response.count'] as number) || 1;
  return {
    rate: s['feeder.ok.rate'],
    avgMs: s['http.response.latency.millis.avg'],
    p99: Number.NaN,
    share429: (s['http.response.code.counts']?.['429'] ?? 0) / responses,
    failed: s['feeder.error.count'] ?? 0,
    startP99: Number.NaN,
    count5xx: codes5xx(s['http.response.code.counts']),
    proxyPages: Number.NaN,
    before: Number.NaN,
    during: Number.NaN,
    after: Number.NaN,
    lowLimit: Number.NaN,
    ...(await target.observe()),
  };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
/** The median of each figure over the rounds; of the counts of what went wrong, the most. */
function medianOf(runs: Figures[]): Figures {
  const worst = new Set(['failed', 'count5xx', 'proxyPages', 'proxyErrors']);
  const out: Record<string, number> = {};
  for (const key of Object.keys(runs[0])) {
    const xs = runs.map((r) => (r as unknown as Record<string, number>)[key]);
    out[key] = worst.has(key) ? Math.max(...xs) : key === 'fed' ? Math.min(...xs) : median(xs);
  }
  return out as unknown as Figures;
}

/** Where the defaults missed the goal, by how much; empty when they met it. */
function misses(d: Figures, best: number, knee: Figures): string[] {
  const out: string[] = [];
  if (!(d.rate >= 0.95 * best)) out.push(`rate ${fmt(d.rate / best, 2)} of best (< 0.95)`);
  if (!(d.avgMs <= 1.25 * knee.avgMs)) out.push(`latency ${fmt(d.avgMs / knee.avgMs, 2)} x knee (> 1.25)`);
  if (!(d.share429 <= 0.001)) out.push(`429 share ${fmt(d.share429 * 100, 2)} % (> 0.1)`);
  if (d.failed !== 0) out.push(`${d.failed} failed`);
  if (d.startP99 > 3 * knee.avgMs) out.push(`start p99 ${fmt(d.startP99 / knee.avgMs, 1)} x knee latency (> 3)`);
  return out;
}

async function measure(t: Topology, script: string, binary: string | undefined): Promise<void> {
  const target = await t.start(script);
  if (typeof target === 'string') {
    console.log(`\n${t.id}. ${t.name}: skipped: ${target}`);
    return;
  }
  try {
    const mid = String(t.levels[Math.floor(t.levels.length / 2)]);
    const runSeconds = t.fault !== undefined ? faultSeconds : seconds;
    let count = Math.max(200, Math.round(t.capacity * runSeconds));
    const input = join(work, `puts-${t.id}.jsonl`);
    if (t.sizeByWarmup) {
      // The warm-up's own input: about 2 s at capacity; then the runs' input from the rate it reached.
      const warmCount = Math.max(200, Math.min(30_000, Math.round(t.capacity * 2)));
      await generatePuts(input, warmCount);
      const noFault = { ...t, fault: undefined };
      const warm = await ours(noFault, target, input, warmCount, ['--inflight', mid]);
      // A fixed level near the knee outruns the warm-up (which also pays the client's JIT): half as much again,
      // so that a fault's runs still go on well past the fault's end.
      count = Math.max(200, Math.round(warm.rate * runSeconds * (t.fault !== undefined ? 1.5 : 1)));
    } else {
      await generatePuts(input, count);
      // Warm the JVM's paths once, unmeasured.
      await ours(t, target, input, count, ['--inflight', mid]);
    }
    if (t.sizeByWarmup) await generatePuts(input, count);
    const sweep = new Map<number, Figures[]>(t.levels.map((l) => [l, []]));
    const defaults: Figures[] = [];
    const before: Figures[] = [];
    const go: Figures[] = [];
    let goSkipped = binary !== undefined ? await officialProbe(binary, target, input) : undefined;
    for (let round = 0; round < rounds; round++) {
      // Alternating, so a drift of the shared machine falls on all alike.
      defaults.push(await ours(t, target, input, count, []));
      if (base !== undefined) before.push(await ours(t, target, input, count, [], base.cli));
      if (binary !== undefined && goSkipped === undefined) {
        const g = await official(t, binary, target, input, runSeconds);
        if (typeof g === 'string') goSkipped = g;
        else go.push(g);
      }
      for (const level of t.levels)
        sweep.get(level)!.push(await ours(t, target, input, count, ['--inflight', String(level)]));
    }
    const levels = t.levels.map((l) => ({ level: l, ...medianOf(sweep.get(l)!) }));
    const best = Math.max(...levels.map((l) => l.rate));
    const knee = levels.find((l) => l.rate >= 0.95 * best)!;
    const rows = [
      ...levels.map((l) => ({ variant: `--inflight ${l.level}${l === knee ? ' (knee)' : ''}`, ...l })),
      { variant: 'defaults', ...medianOf(defaults) },
      ...(before.length > 0 ? [{ variant: `defaults at ${baseRev}`, ...medianOf(before) }] : []),
      ...(go.length > 0 ? [{ variant: 'official vespa feed', ...medianOf(go) }] : []),
    ];
    console.log(
      `\n${t.id}. ${t.name}: ${count} puts, ${rounds} rounds (median), best ${fmt(best)}/s, knee ${knee.level}` +
        (target.about !== '' ? `\n   ${target.about}` : ''),
    );
    const isCluster = target.nominal !== undefined;
    const isProxy = target.flags.includes('--ca');
    console.table(
      rows.map((r) => ({
        variant: r.variant,
        'ops/s': fmt(r.rate),
        'vs best': fmt(r.rate / best, 2),
        'avg ms': fmt(r.avgMs, 1),
        'avg vs knee': fmt(r.avgMs / knee.avgMs, 2),
        'p99 ms': fmt(r.p99, 1),
        'start p99 vs knee': fmt(r.startP99 / knee.avgMs, 1),
        '429 %': fmt(r.share429 * 100, 2),
        failed: r.failed,
        ...(isCluster && {
          'nodes fed': `${r.fed}/${r.nodes}`,
          'min node %': fmt((r.minShare ?? Number.NaN) * 100, 1),
        }),
        ...(r.restartedCount !== undefined && { 'node 0 after start': r.restartedCount }),
        ...(isProxy && { '5xx': r.count5xx, 'proxy pages': fmt(r.proxyPages), 'nginx errors': r.proxyErrors }),
        ...(t.fault !== undefined && {
          'before/s': fmt(r.before),
          [`${t.fault.label}/s`]: fmt(r.during),
          'after/s': fmt(r.after),
          'low limit': fmt(r.lowLimit),
        }),
      })),
    );
    if (goSkipped !== undefined) console.log(`official vespa feed: left out: ${goSkipped}`);
    const d = medianOf(defaults);
    const missed = misses(d, best, knee);
    console.log(
      `goal (>= 0.95 best, <= 1.25 x knee latency, <= 0.1 % 429, 0 failed, start p99 <= 3 x knee latency): ${
        missed.length === 0 ? 'met' : `NOT met: ${missed.join('; ')}`
      }`,
    );
    if (isCluster) {
      console.log(
        `every node fed: defaults ${d.fed}/${d.nodes} nodes, the smallest ${fmt((d.minShare ?? 0) * 100, 1)} % of requests ` +
          `(even ${fmt(100 / d.nodes!, 1)} %); rate ${fmt(d.rate / target.nominal!, 2)} of the nominal ${target.nominal}/s, ` +
          `${fmt(d.rate / best, 2)} of the sweep's best (goal >= 0.9)`,
      );
    }
    if (t.fault !== undefined) {
      console.log(
        `fault (${t.fault.label} from ${t.fault.at} s to ${t.fault.until} s): defaults ${fmt(d.before)}/s before, ` +
          `${fmt(d.during)}/s during, ${fmt(d.after)}/s after (the knee's ${fmt(knee.before)}, ${fmt(knee.during)}, ` +
          `${fmt(knee.after)}); lowest limit during it ${fmt(d.lowLimit)}`,
      );
    }
    const adaptive = [
      ['defaults', defaults] as const,
      ...(base !== undefined ? [[`defaults at ${baseRev}`, before] as const] : []),
    ];
    for (const [label, runs] of adaptive)
      runs.forEach((run, i) =>
        console.log(`limit by second, ${label}, round ${i + 1}: ${(limitsOf.get(run) ?? []).join(' ')}`),
      );
    for (const line of target.notes()) console.log(line);
  } finally {
    await target.stop();
  }
}

async function main(): Promise<void> {
  const script = jettyScript();
  if (script === undefined) {
    console.log('skipped: no Jetty endpoint (shared/jetty-endpoint/start.sh beside the repository)');
    return;
  }
  await buildDist();
  if (baseRev !== undefined) base = await buildCommit(baseRev);
  const binary = officialCli();
  console.log(
    `${availableParallelism()} cores; Jetty from ${script}; official CLI: ${binary ?? 'not found (its column is left out)'}`,
  );
  for (const t of topologies) if (isPicked(t.id)) await measure(t, script, binary);
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => {
    base?.remove();
    rmSync(work, { recursive: true, force: true });
  });
