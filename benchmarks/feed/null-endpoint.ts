/**
 * The client's own cost (issue 33, "Speed at the limit"): `vespa-bulk feed` with its defaults, 200k × 1 KB puts
 * from a JSONL file, against the null endpoint (benchmarks/lib/null-endpoint.ts: a Go server that answers every
 * operation at once), over h2c and over TLS (h2 by ALPN); h2load (`-c 4 -m 256`, nghttp2's C client) posting the
 * same body to the same endpoint in the same run is the baseline for the rate, the official CLI for the CPU.
 *
 * Per protocol it interleaves rounds of h2load, this checkout's CLI and, with `--base <commit>`, that commit's
 * (built in a temporary worktree), and over h2c the official Go CLI (`shared/vespa-cli`, `vespa feed` with its
 * defaults, the same file) and autocannon (HTTP/1.1, `-c 8 -p 16`, the same body, for `--autocannon-seconds`),
 * and prints the medians: documents/s, CPU per document (user+system of the client process, GNU time) and peak
 * RSS, each as a ratio to h2load's and to the official CLI's, and to the base build's. The CPU and the RSS are
 * the robust figures: the endpoint and the client share the cores, and on a shared machine the rate moves from
 * round to round.
 *
 * Then the same over h2c against the real container's HTTP server with no cost behind it (Jetty 12 as the container
 * runs it, shared/jetty-endpoint, 0 ms per operation and no slot limit): a server that spends CPU of its own on
 * every request, as Vespa's does, on the cores the client uses. Left out where shared/jetty-endpoint is missing,
 * or with `--endpoint null`; `--endpoint jetty` runs it alone.
 *
 * Beside the defaults, this checkout's CLI runs again with h2load's own shape (`--connections 4 --inflight 1024`: 4
 * connections of 256 streams): the client's cost per operation at the same concurrency, where the defaults' row is
 * also the limit search's choice of how many to keep in flight (issue 42), which holds far fewer against an endpoint
 * that answers at once.
 *
 * Targets (issue 44's): CPU per document <= 0.35 × the official CLI's; documents/s >= 0.7 × h2load's and
 * >= 2 × the official CLI's; peak RSS <= 100 MB.
 *
 * Usage: npx tsx benchmarks/feed/null-endpoint.ts [--docs 200000] [--rounds 3] [--only h2c|tls] [--base <rev>]
 *        [--endpoint null|jetty]
 *        [--flags "--connections 4"]   (flags for this checkout's CLI and the base's)
 *        [--no-references]             (no official CLI or autocannon rows) [--autocannon-seconds 5]
 * The CLI runs from dist/: `npm run build` first (the base is built here).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jettyScript, startJetty } from '../jetty/endpoint.js';
import { buildCommit, type CommitBuild } from '../lib/baseline-build.js';
import { median } from '../lib/child.js';
import { type CliFeedRun, fmt, generatePuts, ratio, runCliFeed } from '../lib/cli-feed.js';
import { haveH2load, type H2loadRun, runH2load } from '../lib/h2load.js';
import { nullEndpointMissing, startNullEndpoint } from '../lib/null-endpoint.js';
import { officialCliBinary, type ReferenceRun, runAutocannon, runOfficialFeed } from '../lib/reference-clients.js';
import { trustAllEnv } from '../../src/cli/security-options.js';

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const docs = Number(flag('--docs') ?? 200_000);
const rounds = Number(flag('--rounds') ?? 3);
const only = flag('--only');
const baseRev = flag('--base');
const extraFlags = (flag('--flags') ?? '').split(' ').filter((f) => f !== '');
const references = !args.includes('--no-references');
const autocannonSeconds = Number(flag('--autocannon-seconds') ?? 5);
const official = references ? officialCliBinary() : undefined;
const protocols = (['h2c', 'tls'] as const).filter((p) => only === undefined || only === p);
const endpointChoice = flag('--endpoint');
const jetty = endpointChoice === 'null' || only === 'tls' ? undefined : jettyScript();
if (endpointChoice === 'jetty' && jetty === undefined) {
  process.stdout.write('null-endpoint: skipped (no shared/jetty-endpoint beside the repository)\n');
  process.exit(0);
}

/** A server the clients take turns against: its name in the table, the protocol, and how it starts. */
interface Endpoint {
  name: string;
  protocol: 'h2c' | 'tls';
  start(): Promise<{ url: string; stop(): Promise<void> }>;
}
const endpoints: Endpoint[] = [
  ...(endpointChoice === 'jetty' ? [] : protocols).map((protocol) => ({
    name: 'null endpoint',
    protocol,
    start: () => startNullEndpoint({ tls: protocol === 'tls' }),
  })),
  ...(jetty === undefined
    ? []
    : [{ name: 'Jetty at 0 ms', protocol: 'h2c' as const, start: () => startJetty(jetty, 0) }]),
];

// The null endpoint is built with Go; a run against Jetty alone needs only h2load.
const missing =
  (endpointChoice === 'jetty' ? undefined : nullEndpointMissing()) ??
  (haveH2load() ? undefined : 'no h2load (apt-get install nghttp2-client)');
if (missing !== undefined) {
  process.stdout.write(`null-endpoint: skipped (${missing})\n`);
  process.exit(0);
}

/** A client's figures in one round. */
interface Figures {
  rate: number;
  cpuUs: number;
  rssMB: number;
}

const medians = (runs: Figures[]): Figures => ({
  rate: median(runs.map((r) => r.rate)),
  cpuUs: median(runs.map((r) => r.cpuUs)),
  rssMB: median(runs.map((r) => r.rssMB)),
});
const ofH2load = (h: H2loadRun): Figures => ({ rate: h.rate, cpuUs: h.cpuUsPerOp, rssMB: h.maxRssMB });
const ofCli = (r: CliFeedRun): Figures => ({ rate: r.rate, cpuUs: r.cpuUsPerOp, rssMB: r.maxRssMB });
const ofReference = (r: ReferenceRun): Figures => ({ rate: r.rate, cpuUs: r.cpuUsPerOp, rssMB: r.maxRssMB });
/** The clients of a round, in the order their figures are printed. */
const roundClients = ['h2load', 'this', 'shaped', 'base', 'official', 'autocannon'] as const;
type Who = (typeof roundClients)[number];
/** h2load's shape: connections, and streams at once on each. */
const h2load = { clients: 4, streams: 256 };
/** The same shape in our CLI's flags. */
const h2loadShape = ['--connections', `${h2load.clients}`, '--inflight', `${h2load.clients * h2load.streams}`];
const h2loadName = `h2load -c ${h2load.clients} -m ${h2load.streams}`;

const work = mkdtempSync(join(tmpdir(), 'vb-bench-null-'));
let base: CommitBuild | undefined;
try {
  const input = join(work, 'puts.jsonl');
  await generatePuts(input, docs);
  if (baseRev !== undefined) base = await buildCommit(baseRev);
  // The endpoint's certificate is self-signed and throwaway: the CLI is told to trust it as a user would.
  process.env[trustAllEnv] = '1';
  const lines: string[] = [];
  for (const { name, protocol, start } of endpoints) {
    const endpoint = await start();
    const runs = {} as Record<Who, Figures[]>;
    for (const k of roundClients) runs[k] = [];
    try {
      const feed = async (cli: string | undefined, flags = extraFlags): Promise<Figures> => {
        const r = await runCliFeed({ target: endpoint.url, input, count: docs, flags, cli, cwd: work });
        if (r.code !== 0 || r.ok !== docs || r.protocol !== 'h2')
          throw new Error(
            `feed to ${name} over ${protocol}: exit ${r.code}, ${r.ok} of ${docs} ok, protocol ${r.protocol}`,
          );
        return ofCli(r);
      };
      for (let round = 0; round < rounds; round++) {
        const h = await runH2load({ url: endpoint.url, requests: docs, ...h2load, work });
        if (h.ok !== docs) throw new Error(`h2load to ${name} over ${protocol}: ${h.ok} of ${docs} ok`);
        runs.h2load.push(ofH2load(h));
        // The order alternates, so neither build always runs right after h2load.
        const order = base !== undefined && round % 2 === 1 ? (['base', 'this'] as const) : (['this', 'base'] as const);
        for (const who of order) {
          if (who === 'base' && base === undefined) continue;
          runs[who].push(await feed(who === 'base' ? base!.cli : undefined));
        }
        runs.shaped.push(await feed(undefined, [...extraFlags, ...h2loadShape]));
        // The official CLI and autocannon speak h2c and HTTP/1.1 to it here (neither is told to trust its certificate).
        if (protocol === 'h2c' && official !== undefined)
          runs.official.push(
            ofReference(await runOfficialFeed({ binary: official, target: endpoint.url, input, count: docs, work })),
          );
        if (protocol === 'h2c' && references)
          runs.autocannon.push(
            ofReference(
              await runAutocannon({
                url: endpoint.url,
                seconds: autocannonSeconds,
                connections: 8,
                pipelining: 16,
                work,
              }),
            ),
          );
        const last = (k: Who): string =>
          runs[k].length > round ? `${k} ${fmt(runs[k][round].rate)}/s ${fmt(runs[k][round].cpuUs, 1)} µs` : '';
        process.stderr.write(
          `${name}, ${protocol}, round ${round + 1}: ${roundClients
            .map((k) => last(k))
            .filter((s) => s)
            .join(', ')}\n`,
        );
      }
    } finally {
      await endpoint.stop();
    }
    const h = medians(runs.h2load);
    const ours = medians(runs.this);
    const b = base !== undefined ? medians(runs.base) : undefined;
    const o = runs.official.length > 0 ? medians(runs.official) : undefined;
    const a = runs.autocannon.length > 0 ? medians(runs.autocannon) : undefined;
    const row = (who: string, f: Figures | undefined, toBase = false): string =>
      f === undefined
        ? ''
        : `| ${name} | ${protocol} | ${who} | ${fmt(f.rate)} | ${ratio(f.rate, h.rate)} | ${ratio(f.rate, o?.rate)} | ${fmt(f.cpuUs, 1)} | ${ratio(f.cpuUs, h.cpuUs)} | ${ratio(f.cpuUs, o?.cpuUs)} | ${fmt(f.rssMB)} | ${ratio(f.rssMB, o?.rssMB)} | ${toBase && b !== undefined ? `${ratio(f.rate, b.rate)} / ${ratio(f.cpuUs, b.cpuUs)} / ${ratio(f.rssMB, b.rssMB)}` : ''} |`;
    lines.push(
      row(h2loadName, h),
      row('vespa-bulk feed (this)', ours, true),
      row(`vespa-bulk feed (this) ${h2loadShape.join(' ')}`, medians(runs.shaped)),
    );
    if (b !== undefined) lines.push(row(`vespa-bulk feed (${base!.hash.slice(0, 7)})`, b));
    lines.push(row('official vespa feed', o), row('autocannon -c 8 -p 16 (HTTP/1.1)', a));
  }
  process.stdout.write(
    `\n${docs} × 1 KB puts, ${[...new Set(endpoints.map((e) => e.name))].join(' and ')}, medians of ${rounds} interleaved rounds${extraFlags.length > 0 ? `, feed ${extraFlags.join(' ')}` : ''}\n\n` +
      '| endpoint | protocol | client | docs/s | ÷ h2load | ÷ official | CPU µs/doc | ÷ h2load | ÷ official | peak RSS MB | ÷ official | ÷ base: rate / CPU / RSS |\n' +
      '|---|---|---|---|---|---|---|---|---|---|---|---|\n' +
      lines.filter((l) => l !== '').join('\n') +
      `\n\nofficial CLI: ${official ?? (references ? 'not found (its row is left out)' : 'left out')}\n` +
      'targets: CPU per document <= 0.35 × official; rate >= 0.7 × h2load and >= 2 × official; peak RSS <= 100 MB\n',
  );
} finally {
  base?.remove();
  rmSync(work, { recursive: true, force: true });
}
