/**
 * The feeder against a container cluster behind a load balancer, and against one container node over TLS and
 * against an earlier build: the transport's "done means" figures, on the real server stack (Jetty 12 set up as
 * the Vespa container: ../shared/jetty-endpoint, ../shared/lb-cluster). Every figure is printed as a ratio to a
 * baseline measured in the same run (the machine is shared and noisy; each title shows its load average).
 *
 *   spread    For each of --nodes (2, 6, 16) one cluster (lb-cluster's up.sh; down.sh at the end, also on failure
 *             or Ctrl-C) of the same nominal capacity --capacity (4,800 ops/s: DELAY_MS 10, SLOTS 4,800 x 10 ms /
 *             1000 / NODES = 24, 8, 3 per node; QUEUE 256): a quarter of what one client pushes against one Jetty on
 *             2 cores (~20,000/s), so that with HAProxy and the JVM beside it the cluster, and how evenly the
 *             client loads it, is what is measured; 10 ms as a content node's write. Rows:
 *               capacity   THE BASELINE of "vs capacity": the best of h2load (C, nghttp2) through the L4 balancer
 *                          with 8 x NODES connections and 4 x the cluster's slots in flight (192; 256 at 16 nodes),
 *                          h2load with twice that, and vespa-bulk with --connections 8 x NODES and the first's
 *                          streams and in flight fixed: connections spread over every node (marked *). "vs
 *                          nominal" is against NODES x SLOTS / DELAY_MS.
 *               defaults   vespa-bulk feed with no transport flags through the L4 balancer (LB_URL), --repeat (2)
 *                          times: ops/s, 429 share, p99, nodes fed, the smallest and largest share of the requests
 *                          (200 + 429) a node answered (1/NODES each is even), connections per node (/_stats); then
 *                          --connections 1, 4 and 32.
 *               L7         the same defaults through HAProxy in HTTP mode (L7_URL: each request to the next node).
 *             Each feed is --seconds (6) of nominal capacity in ~1 KB puts, stopped (SIGINT: what is in flight
 *             finishes) after --cap (12) seconds when slower: its ops/s are then those of the part fed.
 *   restart   --restart-nodes (6) nodes of the same capacity; vespa-bulk with defaults through LB_URL reads puts
 *             from stdin for --restart-seconds (90: a complete feed of fixed length whatever its rate) while every
 *             node's /_stats is sampled each second. At --kill-at (15 s) the busiest node K is killed (sockets
 *             closed, nothing in flight answered), at --start-at (25 s) started again. Reports that nothing was
 *             lost (exit 0; every operation ok or in the failure file; the cluster's 200 answers against the input:
 *             more are operations sent again after the kill), and the seconds from the restart until node K
 *             answers requests again (target <= 60 s). Per second, per node: benchmarks/out/cluster-restart-*.csv.
 *   baseline  One Jetty node at 10 ms, unlimited and bounded (SLOTS 32, QUEUE 256: 3,200/s): this tree's feed
 *             with defaults (--docs 100,000 puts; 19,200 bounded) against the same feed by the CLI built from
 *             --baseline <commit> (default main; a git worktree in a temporary folder, built there). THE BASELINE:
 *             the earlier build, --rounds (4) alternating rounds; "vs before" is the median of the rounds' ratios.
 *             Target: no worse than before (>= 0.95). With the same src/ it is an A/A check: the noise.
 *   tls       One Jetty node at 10 ms, unlimited, with its TLS connector (ALPN; start.sh's throwaway CA under
 *             $JETTY_ENDPOINT_CACHE/tls): the feed over https:// (--ca) and over h2c on the cleartext port of the
 *             same JVM, h2load over TLS (4 x 256 and 8 x 128 streams) and h2c; then a second JVM demanding client
 *             certificates: the feed over mTLS (--ca --cert --key) and h2c. 60,000 puts, --rounds alternating.
 *             THE BASELINE: the better h2load over TLS of each round. The issue asked for the ratio to the official
 *             Go CLI; it cannot be built here (no Go toolchain new enough, no module proxy), so h2load is the C
 *             reference. h2load sends no client certificate: mTLS is also against vespa-bulk over h2c, same JVM.
 *
 * Usage: npx tsx benchmarks/cluster/run.ts [spread|restart|baseline|tls ...] [--nodes 2,6,16] [--capacity 4800]
 *          [--delay 10] [--seconds 6] [--cap 12] [--repeat 2] [--baseline <commit>] [--rounds 4] [--docs 100000]
 *          [--restart-nodes 6] [--restart-seconds 90] [--kill-at 15] [--start-at 25]
 * Builds dist/ first and runs the built CLI (--workers default) under GNU time: client CPU per operation. All
 * traffic on 127.0.0.1. Each scenario takes 2-5 minutes on 2 cores, all four about 15; results also as JSON in
 * benchmarks/out/cluster-<time>.json (gitignored).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import { buildCommit } from '../lib/baseline-build.js';
import { median, medianBy, printTable } from '../lib/child.js';
import {
  buildDist,
  cliOf,
  fmt,
  generatePuts,
  putBody,
  ratio,
  repoRoot,
  runCliFeed,
  type CliFeedRun,
} from '../lib/cli-feed.js';
import { haveH2load, runH2load, type H2loadRun } from '../lib/h2load.js';
import { lbClusterDir, spreadOf, startCluster, type Spread } from '../lib/lb-cluster.js';
import { onTeardown } from '../lib/teardown.js';
import { jettyScript, startJetty, type JettyEndpoint } from '../jetty/endpoint.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    nodes: { type: 'string', default: '2,6,16' },
    capacity: { type: 'string', default: '4800' },
    delay: { type: 'string', default: '10' },
    seconds: { type: 'string', default: '6' },
    cap: { type: 'string', default: '12' },
    repeat: { type: 'string', default: '2' },
    baseline: { type: 'string', default: 'main' },
    rounds: { type: 'string', default: '4' },
    docs: { type: 'string', default: '100000' },
    'restart-nodes': { type: 'string', default: '6' },
    'restart-seconds': { type: 'string', default: '90' },
    'kill-at': { type: 'string', default: '15' },
    'start-at': { type: 'string', default: '25' },
  },
});
const scenarios = ['spread', 'restart', 'baseline', 'tls'];
const which = new Set(positionals.length > 0 ? positionals : scenarios);
for (const s of which) if (!scenarios.includes(s)) throw new Error(`unknown scenario ${s} (${scenarios.join(', ')})`);
const nodeCounts = values.nodes.split(',').map(Number);
const capacity = Number(values.capacity);
const delay = Number(values.delay);
const seconds = Number(values.seconds);
const cap = Number(values.cap);
const rounds = Number(values.rounds);
const repeat = Number(values.repeat);
const docs = Number(values.docs);
const work = mkdtempSync(join(tmpdir(), 'vb-bench-cluster-'));
const outDir = join(repoRoot, 'benchmarks/out');
const stamp = new Date().toISOString().replace(/[:.]/g, '').slice(0, 17);
const spreadResults: unknown[] = [];
const results: Record<string, unknown> = {
  started: new Date().toISOString(),
  cores: availableParallelism(),
  spread: spreadResults,
};

/** Puts files by size, made once. */
const inputs = new Map<number, string>();
async function puts(count: number): Promise<string> {
  let path = inputs.get(count);
  if (path === undefined) {
    path = join(work, `puts-${count}.jsonl`);
    await generatePuts(path, count);
    inputs.set(count, path);
  }
  return path;
}

/** The machine's load average (1 min) and cores, for the titles: other work on a shared machine shows here. */
const loadNow = (): string => `load ${loadavg()[0].toFixed(1)} on ${availableParallelism()} cores`;

/** A feed that should take seconds is stopped after this long (a hung build, not a figure). */
const hang = 180;

/** SLOTS per node for the nominal capacity: capacity x delay / 1000 / nodes, at least 1. */
const slotsFor = (nodes: number): number => Math.max(1, Math.round((capacity * delay) / 1000 / nodes));

// ---------------------------------------------------------------------------------------------------- spread

interface SpreadRow {
  client: string;
  via: string;
  rate: number;
  share429: number;
  p99?: number;
  cpuUsPerOp?: number;
  spread: Spread;
  note: string;
}

const fromFeed = (client: string, via: string, r: CliFeedRun, spread: Spread): SpreadRow => ({
  client,
  via,
  rate: r.rate,
  share429: r.share429,
  p99: r.p99,
  cpuUsPerOp: r.cpuUsPerOp,
  spread,
  note: [r.capped ? `stopped at ${cap} s` : '', r.failed > 0 ? `${r.failed} failed` : '', `limit ${r.limit}`]
    .filter(Boolean)
    .join(', '),
});

const fromH2load = (client: string, via: string, r: H2loadRun, spread: Spread): SpreadRow => ({
  client,
  via,
  rate: r.rate,
  share429: r.status4xx / Math.max(1, r.ok + r.status4xx),
  cpuUsPerOp: r.cpuUsPerOp,
  spread,
  note: r.failed > 0 ? `${r.failed} failed` : '',
});

async function spreadFor(dir: string, nodes: number): Promise<void> {
  const slots = slotsFor(nodes);
  const load = loadNow();
  const cluster = await startCluster(dir, { nodes, delayMs: delay, slots });
  const rows: SpreadRow[] = [];
  try {
    const count = Math.round(cluster.nominal * seconds);
    const input = await puts(count);
    const conns = 8 * nodes;
    // 192 in flight in all (4 x the slots of the whole cluster), at least one stream per connection.
    const streams = Math.max(1, Math.ceil((4 * nodes * slots) / conns));
    const measure = async (
      client: string,
      via: string,
      run: () => Promise<CliFeedRun | H2loadRun>,
    ): Promise<SpreadRow> => {
      await cluster.reset();
      const r = await run();
      const spread = spreadOf(await cluster.stats());
      const row = 'summary' in r ? fromFeed(client, via, r, spread) : fromH2load(client, via, r, spread);
      rows.push(row);
      return row;
    };
    const feed =
      (flags: string[], target = cluster.lbUrl) =>
      () =>
        runCliFeed({ target, input, count, flags, cwd: work, capSeconds: cap });
    // Unmeasured: the nodes' JIT compiles the h2 path; a cold cluster answers slowly and distorts the first client.
    await runH2load({ url: cluster.lbUrl, requests: Math.round(cluster.nominal * 3), clients: conns, streams, work });
    const candidates = [
      await measure(`h2load -c ${conns} -m ${streams}`, 'L4', () =>
        runH2load({ url: cluster.lbUrl, requests: count, clients: conns, streams, work }),
      ),
      await measure(`h2load -c ${conns} -m ${2 * streams}`, 'L4', () =>
        runH2load({ url: cluster.lbUrl, requests: count, clients: conns, streams: 2 * streams, work }),
      ),
      await measure(
        `vespa-bulk --connections ${conns} --max-streams ${streams} --inflight ${conns * streams}`,
        'L4',
        feed(['--connections', String(conns), '--max-streams', String(streams), '--inflight', String(conns * streams)]),
      ),
    ];
    const best = candidates.reduce((a, b) => (b.rate > a.rate ? b : a));
    // Twice: which nodes one client's few connections land on is chance (and so is how many it opens).
    for (let i = 0; i < repeat; i++)
      await measure(`vespa-bulk (defaults)${repeat > 1 ? ` #${i + 1}` : ''}`, 'L4', feed([]));
    for (const c of [1, 4, 32])
      await measure(`vespa-bulk --connections ${c}`, 'L4', feed(['--connections', String(c)]));
    await measure('vespa-bulk (defaults)', 'L7', feed([], cluster.l7Url));
    const title = `spread: ${nodes} nodes x ${slots} slots x ${delay} ms, nominal ${fmt(cluster.nominal)}/s; capacity (the baseline) = best of the first three: ${fmt(best.rate)}/s (${best.client}), ${ratio(best.rate, cluster.nominal)} of nominal; ${count} puts a feed; ${load} -> ${loadNow()}`;
    printTable(
      title,
      rows.map((r) => ({
        client: r === best ? `${r.client} *` : r.client,
        via: r.via,
        'ops/s': fmt(r.rate),
        'vs capacity': ratio(r.rate, best.rate),
        'vs nominal': ratio(r.rate, cluster.nominal),
        '429 %': fmt(r.share429 * 100, 2),
        'p99 ms': fmt(r.p99, 1),
        'nodes fed': `${r.spread.fed}/${nodes}`,
        'min share %': fmt(r.spread.minShare * 100, 1),
        'max share %': fmt(r.spread.maxShare * 100, 1),
        'conns per node': r.spread.connections.join(' '),
        'client CPU µs/op': fmt(r.cpuUsPerOp, 1),
        note: r.note,
      })),
    );
    spreadResults.push({
      nodes,
      slots,
      delayMs: delay,
      nominal: cluster.nominal,
      capacity: best.rate,
      capacityBy: best.client,
      feedSize: count,
      rows,
    });
  } finally {
    cluster.down();
  }
}

// ---------------------------------------------------------------------------------------------------- restart

async function restart(dir: string): Promise<void> {
  const nodes = Number(values['restart-nodes']);
  const slots = slotsFor(nodes);
  const feedSeconds = Number(values['restart-seconds']);
  const killAt = Number(values['kill-at']);
  const startAt = Number(values['start-at']);
  const load = loadNow();
  const cluster = await startCluster(dir, { nodes, delayMs: delay, slots });
  try {
    await runH2load({
      url: cluster.lbUrl,
      requests: Math.round(cluster.nominal * 3),
      clients: 8 * nodes,
      streams: Math.max(1, Math.ceil((4 * nodes * slots) / (8 * nodes))),
      work,
    });
    await cluster.reset();
    // Puts for --restart-seconds, as fast as the feed reads them: a complete feed (it ends with its input)
    // of a fixed duration, whatever rate the client reaches.
    let produced = 0;
    let begun = 0;
    const source = Readable.from(
      (function* () {
        begun = performance.now();
        while (performance.now() - begun < feedSeconds * 1000) {
          let chunk = '';
          for (let i = 0; i < 200; i++, produced++)
            chunk += `{"put":"id:ns:music::doc-${produced}",${putBody(produced).slice(1)}\n`;
          yield chunk;
        }
      })(),
    );
    const failures = join(work, 'restart-failures.jsonl');
    let feedDone = false;
    const feedRun = runCliFeed({
      target: cluster.lbUrl,
      input: '-',
      stdin: source,
      flags: ['--failures', failures],
      cwd: work,
      capSeconds: feedSeconds + 120,
    }).finally(() => (feedDone = true));
    const t0 = performance.now();
    const at = (): number => (performance.now() - t0) / 1000;
    const csv: string[] = [`t,event,total,${cluster.nodePorts.map((_, i) => `node${i}`).join(',')},nodeK_share`];
    const table: Record<string, string>[] = [];
    let prev = (await cluster.stats()).map((s) => s.count + s.rejected429);
    let k = -1;
    let killed = false;
    let started = false;
    let killedCount = 0;
    let startedAt = Number.NaN;
    let answeringAgain = Number.NaN;
    let fedBeforeKill = 0;
    const fedAfter = new Set<number>();
    for (let tick = 1; !feedDone; tick++) {
      await new Promise((r) => setTimeout(r, Math.max(0, t0 + tick * 1000 - performance.now())));
      const stats = await cluster.stats();
      const now = stats.map((s) => s.count + s.rejected429);
      const perSecond = now.map((n, i) => (stats[i].down ? 0 : Math.max(0, n - prev[i])));
      const total = perSecond.reduce((a, b) => a + b, 0);
      const events: string[] = [];
      const t = at();
      if (!killed && t >= killAt) {
        // The busiest node of the last second: the kill cuts connections the feed uses.
        k = perSecond.indexOf(Math.max(...perSecond));
        fedBeforeKill = now.filter((n) => n > 0).length;
        killedCount = (await cluster.kill(k)).count ?? 0;
        killed = true;
        events.push(`kill node ${k}`);
      } else if (killed && !started && t >= startAt) {
        await cluster.start(k);
        startedAt = at();
        started = true;
        now[k] = 0;
        events.push(`start node ${k}`);
      }
      if (started && Number.isNaN(answeringAgain) && t > startedAt && (stats[k].count > 0 || stats[k].rejected429 > 0))
        answeringAgain = t - startedAt;
      if (started) perSecond.forEach((n, i) => n > 0 && fedAfter.add(i));
      prev = now;
      const shareK = k >= 0 && total > 0 ? perSecond[k] / total : Number.NaN;
      csv.push(`${t.toFixed(1)},${events.join(' ')},${total},${perSecond.join(',')},${fmt(shareK, 3)}`);
      if (tick % 5 === 0 || events.length > 0)
        table.push({
          t: fmt(t),
          event: events.join(' '),
          'ok+429/s': String(total),
          ...Object.fromEntries(perSecond.map((n, i) => [`n${i}`, String(n)])),
        });
    }
    const r = await feedRun;
    const final = await cluster.stats();
    const cluster200 = final.reduce((a, s) => a + s.count, 0) + killedCount;
    const failedLines = existsSync(failures) ? readFileSync(failures, 'utf8').split('\n').filter(Boolean).length : 0;
    mkdirSync(outDir, { recursive: true });
    const csvPath = join(outDir, `cluster-restart-${stamp}.csv`);
    writeFileSync(csvPath, `${csv.join('\n')}\n`);
    printTable(
      `restart: ${nodes} nodes x ${slots} slots x ${delay} ms (nominal ${fmt(cluster.nominal)}/s), defaults through L4, ${load} -> ${loadNow()}; requests (200 + 429) per node, every 5 s and at each event`,
      table,
    );
    const lost = produced - r.ok - failedLines;
    const verdict = {
      'input operations': produced,
      'feed exit code': r.code,
      'feed ok': r.ok,
      'feed failed (summary / failure file)': `${r.failed} / ${failedLines}`,
      'lost (input - ok - failure file)': lost,
      'cluster answered 200 (incl. node K before the kill)': `${cluster200} (${fmt(cluster200 / Math.max(1, produced), 4)} x input${cluster200 > produced ? ': the excess, operations answered by node K whose answers the kill cut, sent again' : ''})`,
      'feed ops/s vs nominal': `${fmt(r.rate)} (${ratio(r.rate, cluster.nominal)})`,
      retries: String(r.summary['feeder.retry.count'] ?? '-'),
      'node K': `${k} (killed at ${killAt} s, started at ${fmt(startedAt, 1)} s; nodes fed before the kill: ${fedBeforeKill}/${nodes}, after the restart: ${fedAfter.size}/${nodes})`,
      'node K answers again after': Number.isNaN(answeringAgain)
        ? `not within the feed (${fmt(at() - startedAt)} s after the restart)`
        : `${fmt(answeringAgain, 1)} s (target <= 60 s)`,
      'nothing lost': r.code === 0 && lost === 0 && r.failed === 0 ? 'yes' : 'NO',
      'per second': csvPath,
    };
    printTable(
      'restart: the verdict',
      Object.entries(verdict).map(([what, value]) => ({ what, value: String(value) })),
    );
    results.restart = { nodes, slots, nominal: cluster.nominal, ...verdict, answeringAgainSeconds: answeringAgain };
  } finally {
    cluster.down();
  }
}

// ---------------------------------------------------------------------------------------------------- baseline

/**
 * Every contender once a round, in the reverse order every other round: noise on a shared machine falls on all
 * alike, and the runs of a round are close in time. Returns each contender's runs, by round.
 */
async function alternating<T>(contenders: (() => Promise<T>)[], before: () => Promise<void>): Promise<T[][]> {
  const runs = contenders.map(() => [] as T[]);
  for (let i = 0; i < rounds; i++) {
    const order = contenders.map((_, j) => j);
    if (i % 2 === 1) order.reverse();
    for (const j of order) {
      await before();
      runs[j].push(await contenders[j]());
    }
  }
  return runs;
}

/** The median over the rounds of a's figure over b's in the same round: steadier than a ratio of medians when the machine's load drifts. */
const paired = (a: number[], b: number[]): number => median(a.map((x, i) => x / b[i]));

async function baseline(script: string): Promise<void> {
  const before = await buildCommit(values.baseline);
  // The same sources: the two builds differ only by chance, and the ratios show the noise.
  const same =
    spawnSync('git', ['diff', '--quiet', before.hash, '--', 'src', 'scripts', 'package.json', 'package-lock.json'], {
      cwd: repoRoot,
    }).status === 0;
  const names = ['this tree', `before (${before.hash.slice(0, 10)}${same ? ', the same src/: an A/A check' : ''})`];
  const clis = [cliOf(), before.cli];
  const rows: Record<string, string>[] = [];
  const load = loadNow();
  try {
    for (const [label, slots] of [
      ['unlimited', 0],
      ['bounded, 32 slots, queue 256 (3,200/s)', 32],
    ] as const) {
      const count = slots === 0 ? docs : Math.min(docs, Math.round((slots * 1000 * 6) / delay));
      const input = await puts(count);
      const endpoint = await startJetty(script, delay, slots, 256);
      try {
        const warmInput = await puts(Math.min(count, 50_000));
        for (const cli of clis) await runCliFeed({ target: endpoint.url, input: warmInput, cli, cwd: work });
        const feed = (cli: string) => async () => {
          const run = await runCliFeed({ target: endpoint.url, input, count, cli, cwd: work, capSeconds: hang });
          return { run, perConn: (await endpoint.stats()).perConnectionMaxInProgress };
        };
        const [ours, base] = await alternating(clis.map(feed), () => endpoint.reset());
        for (const [j, runs] of [ours, base].entries()) {
          const { run, perConn } = medianBy(runs, (x) => x.run.rate);
          const vs = (key: (r: CliFeedRun) => number): string =>
            fmt(
              paired(
                runs.map((x) => key(x.run)),
                base.map((x) => key(x.run)),
              ),
              2,
            );
          const rate = paired(
            runs.map((x) => x.run.rate),
            base.map((x) => x.run.rate),
          );
          rows.push({
            endpoint: `1 Jetty, ${delay} ms, ${label}`,
            cli: names[j],
            'ops/s (median)': fmt(run.rate),
            'vs before': fmt(rate, 2),
            'each round': runs.map((x) => fmt(x.run.rate)).join(' '),
            'p99 ms': fmt(run.p99, 1),
            'p99 vs before': vs((r) => r.p99),
            'CPU µs/op': fmt(run.cpuUsPerOp, 1),
            'CPU vs before': vs((r) => r.cpuUsPerOp),
            '429 %': fmt(run.share429 * 100, 2),
            wire: `${run.protocol}, <= ${perConn}/conn, limit ${run.limit}`,
            'target >= 0.95': j === 0 ? (rate >= 0.95 ? 'yes' : 'NO') : '',
          });
        }
      } finally {
        await endpoint.stop();
      }
    }
  } finally {
    before.remove();
  }
  printTable(
    `baseline: feed with defaults, this tree against ${values.baseline} = ${before.hash}; ${rounds} alternating rounds: "vs before" is the median of the rounds' ratios, the other figures the median round's; ${load} -> ${loadNow()}`,
    rows,
  );
  results.baseline = { commit: before.hash, sameSources: same, rows };
}

// ---------------------------------------------------------------------------------------------------- tls

async function tls(script: string): Promise<void> {
  const count = Math.min(docs, 60_000);
  const input = await puts(count);
  const warmInput = await puts(Math.min(count, 20_000));
  const load = loadNow();
  interface Run {
    rate: number;
    cpu: number;
    p99?: number;
  }
  interface TlsRow {
    jvm: string;
    endpoint: string;
    client: string;
    runs: Run[];
  }
  const rows: TlsRow[] = [];
  const measure = async (
    endpoint: JettyEndpoint,
    jvm: string,
    clients: [string, string, () => Promise<Run>][],
  ): Promise<void> => {
    const runs = await alternating(
      clients.map(([, , run]) => run),
      () => endpoint.reset(),
    );
    rows.push(...clients.map(([where, client], j) => ({ jvm, endpoint: where, client, runs: runs[j] })));
  };
  const feed =
    (target: string, flags: string[] = []) =>
    async (): Promise<Run> => {
      const r = await runCliFeed({ target, input, count, flags, cwd: work, capSeconds: hang });
      return { rate: r.rate, cpu: r.cpuUsPerOp, p99: r.p99 };
    };
  const h2load = (url: string, clients: number, streams: number) => async (): Promise<Run> => {
    const h = await runH2load({ url, requests: count, clients, streams, work });
    return { rate: h.rate, cpu: h.cpuUsPerOp };
  };
  const a = await startJetty(script, delay, 0, 256, { tls: 'tls' });
  try {
    const ca = ['--ca', join(a.tlsDir!, 'ca.pem')];
    // Unmeasured: the JVM compiles its TLS and h2 paths.
    await runH2load({ url: a.tlsUrl!, requests: 20_000, clients: 4, streams: 256, work });
    await runCliFeed({ target: a.tlsUrl!, input: warmInput, flags: ca, cwd: work });
    await runCliFeed({ target: a.url, input: warmInput, cwd: work });
    await measure(a, 'A', [
      ['https, h2 (ALPN)', 'h2load -c 4 -m 256', h2load(a.tlsUrl!, 4, 256)],
      ['https, h2 (ALPN)', 'h2load -c 8 -m 128', h2load(a.tlsUrl!, 8, 128)],
      ['https, h2 (ALPN)', 'vespa-bulk --ca (defaults)', feed(a.tlsUrl!, ca)],
      ['http, h2c', 'vespa-bulk (defaults)', feed(a.url)],
      ['http, h2c', 'h2load -c 4 -m 256', h2load(a.url, 4, 256)],
    ]);
  } finally {
    await a.stop();
  }
  const b = await startJetty(script, delay, 0, 256, { tls: 'mtls' });
  try {
    const mtls = [
      '--ca',
      join(b.tlsDir!, 'ca.pem'),
      '--cert',
      join(b.tlsDir!, 'client.pem'),
      '--key',
      join(b.tlsDir!, 'client.key'),
    ];
    await runCliFeed({ target: b.tlsUrl!, input: warmInput, flags: mtls, cwd: work });
    await runCliFeed({ target: b.url, input: warmInput, cwd: work });
    await measure(b, 'B (mTLS)', [
      ['https, h2 (ALPN), client certificate', 'vespa-bulk --ca --cert --key (defaults)', feed(b.tlsUrl!, mtls)],
      ['http, h2c', 'vespa-bulk (defaults)', feed(b.url)],
    ]);
  } finally {
    await b.stop();
  }
  // Each round's reference: the better h2load over TLS of that round (JVM A).
  const references = rows.filter(
    (r) => r.jvm === 'A' && r.client.startsWith('h2load') && r.endpoint.startsWith('https'),
  );
  const reference = Array.from({ length: rounds }, (_, i) => Math.max(...references.map((r) => r.runs[i].rate)));
  const h2cOn = (jvm: string) => rows.find((r) => r.jvm === jvm && r.client === 'vespa-bulk (defaults)')!;
  printTable(
    `tls: 1 Jetty, ${delay} ms, unlimited, ${count} puts, ${rounds} alternating rounds (ratios: the median of the rounds' ratios; ops/s: the median round); ${load} -> ${loadNow()}. Baseline: the better h2load over TLS of each round on JVM A (h2load, C, is the reference: the official Go CLI cannot be built on this machine; h2load sends no client certificate, so mTLS (JVM B) is also against vespa-bulk over h2c on the same JVM)`,
    rows.map((r) => {
      const m = medianBy(r.runs, (x) => x.rate);
      const rates = r.runs.map((x) => x.rate);
      return {
        jvm: r.jvm,
        endpoint: r.endpoint,
        client: r.client,
        'ops/s': fmt(m.rate),
        // JVM B ran after A: its ratio is of the medians, not of rounds run together (marked ~).
        'vs h2load TLS':
          r.jvm === 'A'
            ? fmt(paired(rates, reference), 2)
            : r.client.startsWith('vespa-bulk --ca --cert')
              ? `~${ratio(m.rate, median(reference))}`
              : '',
        'vs vespa-bulk h2c, same JVM': r.client.startsWith('vespa-bulk')
          ? fmt(
              paired(
                rates,
                h2cOn(r.jvm).runs.map((x) => x.rate),
              ),
              2,
            )
          : '',
        'each round': rates.map((x) => fmt(x)).join(' '),
        'p99 ms': fmt(m.p99, 1),
        'client CPU µs/op': fmt(m.cpu, 1),
      };
    }),
  );
  results.tls = { reference, rows };
}

// ---------------------------------------------------------------------------------------------------- main

async function main(): Promise<void> {
  const script = jettyScript();
  const dir = lbClusterDir();
  if (script === undefined || dir === undefined || !haveH2load()) {
    console.log(
      'skipped: needs ../shared/jetty-endpoint (or JETTY_ENDPOINT), ../shared/lb-cluster (or LB_CLUSTER) and /usr/bin/h2load (nghttp2-client)',
    );
    return;
  }
  await buildDist();
  console.log(
    `${availableParallelism()} cores; nominal capacity ${capacity}/s at ${delay} ms per operation; scenarios: ${[...which].join(', ')}`,
  );
  const timed = async (name: string, run: () => Promise<void>): Promise<void> => {
    if (!which.has(name)) return;
    const started = performance.now();
    await run();
    const seconds = (performance.now() - started) / 1000;
    (results.seconds as Record<string, number>)[name] = Math.round(seconds);
    console.log(`(${name}: ${fmt(seconds)} s)`);
  };
  results.seconds = {};
  await timed('spread', async () => {
    for (const n of nodeCounts) await spreadFor(dir, n);
  });
  await timed('restart', () => restart(dir));
  await timed('baseline', () => baseline(script));
  await timed('tls', () => tls(script));
  mkdirSync(outDir, { recursive: true });
  const path = join(outDir, `cluster-${stamp}.json`);
  writeFileSync(path, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\nresults: ${path}`);
}

// Registered first, so it runs last (after the feeds, clusters and worktrees that may use it) on an interrupt too.
const removeWork = onTeardown(() => rmSync(work, { recursive: true, force: true }));
main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => {
    removeWork();
    rmSync(work, { recursive: true, force: true });
  });
