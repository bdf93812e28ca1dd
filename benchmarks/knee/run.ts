/**
 * Where the default in-flight limit sits against a cluster's knee (issue 42). For each topology: a sweep of fixed
 * `--inflight` levels, the defaults and the official Go CLI (`shared/vespa-cli`), alternating over the rounds, all
 * against the real container's HTTP server (Jetty 12, shared/jetty-endpoint). Printed per topology:
 *
 *   the sweep's best throughput; the knee (the fewest in flight reaching 0.95 of it) and its average latency;
 *   the defaults' throughput as a ratio to the best, their average latency as a ratio to the knee's, their 429 share
 *   and the worst second's p99 at the start as a ratio to the knee's latency; the official CLI's the same way.
 *
 * The goal on each: throughput >= 0.95 of the best, latency <= 1.25 x the knee's, 429 share <= 0.1 %, 0 failed.
 *
 * Topologies (the issue's numbering; 4-6, the balanced cluster, nginx and the faults, are not here yet):
 *   1  unlimited  only latency bounds it: 10 ms per operation
 *   2  bounded    32 slots x 2 ms (16,000/s) + a queue of 256, then 429
 *   3  embedding  8 slots x 100 ms (80/s) + a queue of 64: an application that embeds at feed time
 *
 * Usage: npx tsx benchmarks/knee/run.ts [1 2 3] [--rounds N] [--seconds S] [--base REV]
 * Runs the built CLI (dist/, built first) with --workers 1; all traffic stays on 127.0.0.1. With --base, the
 * defaults of the CLI built from commit REV take their turn too (a row "defaults at REV"): before and after in one run.
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildDist, fmt, generatePuts, runCliFeed } from '../lib/cli-feed.js';
import { buildCommit, type CommitBuild } from '../lib/baseline-build.js';
import { findShared } from '../lib/shared.js';
import { jettyScript, startJetty, type JettyEndpoint } from '../jetty/endpoint.js';

interface Topology {
  id: string;
  name: string;
  delayMs: number;
  slots: number;
  queue: number;
  /** The fixed levels of the sweep. */
  levels: number[];
}

const topologies: Topology[] = [
  { id: '1', name: 'unlimited, 10 ms', delayMs: 10, slots: 0, queue: 256, levels: [64, 128, 256, 384, 512, 768, 1024] },
  {
    id: '2',
    name: 'bounded, 32 x 2 ms + queue 256',
    delayMs: 2,
    slots: 32,
    queue: 256,
    levels: [16, 24, 32, 40, 48, 64, 96, 128, 192],
  },
  {
    id: '3',
    name: 'embedding, 8 x 100 ms + queue 64',
    delayMs: 100,
    slots: 8,
    queue: 64,
    levels: [4, 6, 8, 10, 12, 16, 24],
  },
];

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
// The words that are no flag's value (`--rounds 2` is not topology 2).
const picked = args.filter((a, i) => !a.startsWith('--') && !(i > 0 && args[i - 1].startsWith('--')));
const rounds = Number(flag('--rounds') ?? 2);
/** About how long each feed lasts at the topology's best rate. */
const seconds = Number(flag('--seconds') ?? 6);
const baseRev = flag('--base');
let base: CommitBuild | undefined;
const work = mkdtempSync(join(tmpdir(), 'vb-bench-knee-'));

interface Figures {
  rate: number;
  avgMs: number;
  p99: number;
  share429: number;
  failed: number;
}

/** The official CLI's binary, unpacked by shared/vespa-cli/path. */
function officialCli(): string | undefined {
  const path = findShared('vespa-cli/path', undefined);
  if (path === undefined) return undefined;
  const r = spawnSync(path, [], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

async function ours(
  endpoint: JettyEndpoint,
  input: string,
  count: number,
  flags: string[],
  cli?: string,
): Promise<Figures> {
  await endpoint.reset();
  const r = await runCliFeed({
    target: endpoint.url,
    input,
    count,
    flags: ['--workers', '1', ...flags],
    cwd: work,
    ...(cli !== undefined && { cli }),
  });
  return {
    rate: r.rate,
    avgMs: r.summary['http.response.latency.millis.avg'] as number,
    p99: r.p99,
    share429: r.share429,
    failed: r.failed,
  };
}

async function official(binary: string, endpoint: JettyEndpoint, input: string): Promise<Figures> {
  await endpoint.reset();
  const home = join(work, 'vespa-home');
  const child = spawn(binary, ['feed', '--target', endpoint.url, input], {
    env: { ...process.env, HOME: home, VESPA_CLI_HOME: home },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', () => undefined);
  await once(child, 'exit');
  const s = JSON.parse(out) as Record<string, any>;
  const responses = (s['http.response.count'] as number) || 1;
  return {
    rate: s['feeder.ok.rate'],
    avgMs: s['http.response.latency.millis.avg'],
    p99: Number.NaN,
    share429: (s['http.response.code.counts']?.['429'] ?? 0) / responses,
    failed: s['feeder.error.count'] ?? 0,
  };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const medianOf = (runs: Figures[]): Figures => ({
  rate: median(runs.map((r) => r.rate)),
  avgMs: median(runs.map((r) => r.avgMs)),
  p99: median(runs.map((r) => r.p99)),
  share429: median(runs.map((r) => r.share429)),
  failed: Math.max(...runs.map((r) => r.failed)),
});

async function measure(t: Topology, script: string, binary: string | undefined): Promise<void> {
  const endpoint = await startJetty(script, t.delayMs, t.slots, t.queue);
  try {
    const capacity = t.slots > 0 ? (t.slots * 1000) / t.delayMs : 30_000;
    const count = Math.max(200, Math.round(capacity * seconds));
    const input = join(work, `puts-${t.id}.jsonl`);
    await generatePuts(input, count);
    // Warm the JVM's paths once, unmeasured.
    await ours(endpoint, input, count, ['--inflight', String(t.levels[Math.floor(t.levels.length / 2)])]);
    const sweep = new Map<number, Figures[]>(t.levels.map((l) => [l, []]));
    const defaults: Figures[] = [];
    const before: Figures[] = [];
    const go: Figures[] = [];
    for (let round = 0; round < rounds; round++) {
      // Alternating, so a drift of the shared machine falls on all alike.
      defaults.push(await ours(endpoint, input, count, []));
      if (base !== undefined) before.push(await ours(endpoint, input, count, [], base.cli));
      if (binary !== undefined) go.push(await official(binary, endpoint, input));
      for (const level of t.levels)
        sweep.get(level)!.push(await ours(endpoint, input, count, ['--inflight', String(level)]));
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
      `\n${t.id}. ${t.name}: ${count} puts, ${rounds} rounds (median), best ${fmt(best)}/s, knee ${knee.level}`,
    );
    console.table(
      rows.map((r) => ({
        variant: r.variant,
        'ops/s': fmt(r.rate),
        'vs best': fmt(r.rate / best, 2),
        'avg ms': fmt(r.avgMs, 1),
        'avg vs knee': fmt(r.avgMs / knee.avgMs, 2),
        'p99 ms': fmt(r.p99, 1),
        '429 %': fmt(r.share429 * 100, 2),
        failed: r.failed,
      })),
    );
    const d = medianOf(defaults);
    const met =
      d.rate >= 0.95 * best && d.avgMs <= 1.25 * knee.avgMs && d.share429 <= 0.001 && d.failed === 0
        ? 'met'
        : 'NOT met';
    console.log(`goal (>= 0.95 best, <= 1.25 x knee latency, <= 0.1 % 429, 0 failed): ${met}`);
  } finally {
    await endpoint.stop();
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
  for (const t of topologies) if (picked.length === 0 || picked.includes(t.id)) await measure(t, script, binary);
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
