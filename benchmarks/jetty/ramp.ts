/**
 * The adaptive in-flight limit's search against the real container's HTTP server (Jetty 12, endpoint.ts): this
 * checkout's CLI against another commit's (`--base`, the search before a change), interleaved, each `--rounds`
 * times; medians.
 *
 *   ramp     a cluster so large that only the 10 ms per operation bounds it: a short feed (`--docs`, 50,000) and a
 *            long one (`--long`, 200,000). The ratio of the short feed's rate to the long one's is what the climb
 *            costs (1 when the search is at its level at once); "settled" is the seconds from the first request
 *            until the server's rate over 200 ms first reaches 0.9 of the long feed's steady rate (Jetty's request
 *            count read every 20 ms, so both CLIs are timed by the same clock).
 *   bounded  32 operations at the content nodes at once for 2 ms each (capacity 16,000/s), 256 more in the
 *            handler's queue, then 429: the defaults as a ratio to the best fixed `--inflight` of a sweep (16-128,
 *            this checkout), and the share of answers 429. Goal: >= 0.95, no 429.
 *
 * Usage: npx tsx benchmarks/jetty/ramp.ts [ramp|bounded] [--base COMMIT] [--rounds N] [--docs N] [--long N]
 * (base: HEAD~1 unless said; built in a temporary worktree, baseline-build.ts). All traffic stays on 127.0.0.1.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCommit, type CommitBuild } from '../lib/baseline-build.js';
import { buildDist, cliOf, fmt, generatePuts, runCliFeed, type CliFeedRun } from '../lib/cli-feed.js';
import { jettyScript, startJetty, type JettyEndpoint } from './endpoint.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: string): string => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const valued = new Set(['--base', '--rounds', '--docs', '--long'].map((f) => flag(f, '')).filter((v) => v !== ''));
const picked = args.filter((a) => !a.startsWith('--') && !valued.has(a));
const which = new Set(picked.length > 0 ? picked : ['ramp', 'bounded']);
const baseRev = flag('--base', 'HEAD~1');
const rounds = Number(flag('--rounds', '3'));
const shortDocs = Number(flag('--docs', '50000'));
const longDocs = Number(flag('--long', '200000'));
const work = mkdtempSync(join(tmpdir(), 'vb-bench-ramp-'));

interface Run {
  rate: number;
  share429: number;
  p99: number;
  limit: number;
  /** Jetty's request count over time: [ms since the feed started, count]. */
  timeline: Array<[number, number]>;
}

/** One feed by `cli`, with Jetty's count read every 20 ms while it runs. */
async function feed(endpoint: JettyEndpoint, cli: string, input: string, count: number, flags: string[]) {
  await endpoint.reset();
  const timeline: Array<[number, number]> = [];
  let running = true;
  const started = performance.now();
  const poll = (async () => {
    while (running) {
      const n = Number(await (await fetch(`${endpoint.url}/_count`)).text());
      timeline.push([performance.now() - started, n]);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  let r: CliFeedRun;
  try {
    r = await runCliFeed({ target: endpoint.url, input, count, cli, flags: ['--workers', '1', ...flags], cwd: work });
  } finally {
    running = false;
    await poll;
  }
  if (r.code !== 0 && r.code !== 1) throw new Error(`feed ${flags.join(' ')} exited ${r.code}`);
  return { rate: r.rate, share429: r.share429, p99: r.p99, limit: r.limit, timeline } satisfies Run;
}

/** The server's rate between the moments it had seen `from` and `to` of `count` requests (the steady part). */
function steadyRate(run: Run, count: number, from = 0.25, to = 0.9): number {
  const at = (share: number) => run.timeline.find(([, n]) => n >= share * count)!;
  const [t0, n0] = at(from);
  const [t1, n1] = at(to);
  return ((n1 - n0) * 1000) / (t1 - t0);
}

/** Seconds from the first request until the server's rate over 200 ms first reaches `rate`; Infinity if never. */
function settledSeconds(run: Run, rate: number): number {
  const tl = run.timeline;
  const first = tl.findIndex(([, n]) => n > 0);
  if (first < 0) return Number.NaN;
  const start = tl[Math.max(0, first - 1)][0];
  let j = first;
  for (let i = first; i < tl.length; i++) {
    while (j + 1 < i && tl[i][0] - tl[j + 1][0] >= 200) j++;
    const [t0, n0] = tl[j];
    const [t1, n1] = tl[i];
    if (t1 - t0 >= 200 && ((n1 - n0) * 1000) / (t1 - t0) >= rate) return (t1 - start) / 1000;
  }
  return Number.POSITIVE_INFINITY;
}

const median = (xs: number[]): number => {
  // A feed that never settled counts as the slowest, not as missing.
  const s = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s[Math.floor(s.length / 2)];
};

const seconds = (s: number): string => (s === Number.POSITIVE_INFINITY ? 'never' : fmt(s, 2));

interface Cli {
  label: string;
  cli: string;
}

async function ramp(script: string, clis: Cli[]): Promise<void> {
  const short = join(work, 'short.jsonl');
  const long = join(work, 'long.jsonl');
  await generatePuts(short, shortDocs);
  await generatePuts(long, longDocs);
  const endpoint = await startJetty(script, 10);
  try {
    // Jetty's JIT: the first feeds on a fresh JVM are slower, whoever sends them.
    for (const c of clis) await feed(endpoint, c.cli, short, shortDocs, []);
    const results = new Map(clis.map((c) => [c.label, [] as Array<{ short: Run; long: Run; steady: number }>]));
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? clis : [...clis].reverse();
      for (const c of order) {
        const s = await feed(endpoint, c.cli, short, shortDocs, []);
        const l = await feed(endpoint, c.cli, long, longDocs, []);
        results.get(c.label)!.push({ short: s, long: l, steady: steadyRate(l, longDocs) });
      }
    }
    // One steady rate for every CLI (the median of all long feeds): "settled" is then the same level for all.
    const steady = median([...results.values()].flat().map((r) => r.steady));
    console.log(
      `ramp: unlimited, 10 ms per operation; ${shortDocs} vs ${longDocs} puts, ${rounds} rounds, steady rate ${fmt(steady)}/s`,
    );
    const base = results.get(clis[0].label)!;
    const baseShort = median(base.map((r) => r.short.rate));
    console.table(
      clis.map((c) => {
        const rs = results.get(c.label)!;
        const shortRate = median(rs.map((r) => r.short.rate));
        const longRate = median(rs.map((r) => r.long.rate));
        return {
          cli: c.label,
          [`${shortDocs / 1000}k ops/s`]: fmt(shortRate),
          [`${longDocs / 1000}k ops/s`]: fmt(longRate),
          'short / long': fmt(median(rs.map((r) => r.short.rate / r.long.rate)), 2),
          'short vs base': fmt(shortRate / baseShort, 2),
          'settled s (short feeds)': rs.map((r) => seconds(settledSeconds(r.short, 0.9 * steady))).join(' '),
          'settled s, median': seconds(median(rs.map((r) => settledSeconds(r.short, 0.9 * steady)))),
          'limit at end': rs.map((r) => r.short.limit).join(' '),
          'p99 ms': fmt(median(rs.map((r) => r.short.p99)), 1),
        };
      }),
    );
  } finally {
    await endpoint.stop();
  }
}

async function bounded(script: string, clis: Cli[]): Promise<void> {
  const count = 96_000;
  const input = join(work, 'bounded.jsonl');
  await generatePuts(input, count);
  const endpoint = await startJetty(script, 2, 32, 256);
  try {
    for (const c of clis) await feed(endpoint, c.cli, input, count, []);
    const fixed = new Map<number, number[]>();
    const defaults = new Map(clis.map((c) => [c.label, [] as Run[]]));
    const thisCli = clis[clis.length - 1].cli;
    for (let round = 0; round < rounds; round++) {
      for (const limit of [16, 24, 32, 40, 48, 64, 96, 128]) {
        const r = await feed(endpoint, thisCli, input, count, ['--inflight', String(limit)]);
        fixed.set(limit, [...(fixed.get(limit) ?? []), r.rate]);
      }
      const order = round % 2 === 0 ? clis : [...clis].reverse();
      for (const c of order) defaults.get(c.label)!.push(await feed(endpoint, c.cli, input, count, []));
    }
    const sweep = [...fixed].map(([limit, rates]) => ({ limit, rate: median(rates) }));
    const best = sweep.reduce((a, b) => (b.rate > a.rate ? b : a));
    console.log(
      `bounded: 32 slots x 2 ms + queue 256 (16,000/s); ${count} puts, ${rounds} rounds; fixed --inflight sweep: ${sweep
        .map((s) => `${s.limit}: ${fmt(s.rate)}`)
        .join(', ')}; best ${best.limit}`,
    );
    console.table(
      clis.map((c) => {
        const rs = defaults.get(c.label)!;
        return {
          cli: c.label,
          'ops/s': fmt(median(rs.map((r) => r.rate))),
          'vs best fixed': fmt(median(rs.map((r) => r.rate)) / best.rate, 2),
          'each round': rs.map((r) => fmt(r.rate / best.rate, 2)).join(' '),
          '429 %': fmt(median(rs.map((r) => r.share429)) * 100, 2),
          'max 429 %': fmt(Math.max(...rs.map((r) => r.share429)) * 100, 2),
          'p99 ms': fmt(median(rs.map((r) => r.p99)), 1),
          'limit at end': rs.map((r) => r.limit).join(' '),
        };
      }),
    );
  } finally {
    await endpoint.stop();
  }
}

async function main(): Promise<void> {
  const script = jettyScript();
  if (script === undefined) {
    console.log('skipped: no Jetty endpoint (shared/jetty-endpoint/start.sh, or JETTY_ENDPOINT=path/to/start.sh)');
    return;
  }
  await buildDist();
  let base: CommitBuild | undefined;
  try {
    base = await buildCommit(baseRev);
    const clis: Cli[] = [
      { label: `base ${base.hash.slice(0, 7)}`, cli: base.cli },
      { label: 'this tree', cli: cliOf() },
    ];
    if (which.has('ramp')) await ramp(script, clis);
    if (which.has('bounded')) await bounded(script, clis);
  } finally {
    base?.remove();
  }
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => rmSync(work, { recursive: true, force: true }));
