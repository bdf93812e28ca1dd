/**
 * The client's own cost (issue 33, "Speed at the limit"): `vespa-bulk feed` with its defaults, 200k × 1 KB puts
 * from a JSONL file, against the null endpoint (benchmarks/lib/null-endpoint.ts: a Go server that answers every
 * operation at once), over h2c and over TLS (h2 by ALPN); h2load (`-c 4 -m 256`, nghttp2's C client) posting the
 * same body to the same endpoint in the same run is the baseline: the official Go CLI cannot be built here.
 *
 * Per protocol it interleaves rounds of h2load, this checkout's CLI and, with `--base <commit>`, that commit's
 * (built in a temporary worktree), and prints the medians: documents/s, CPU per document (user+system of the
 * client process, GNU time) and peak RSS, each as a ratio to h2load's, and to the base build's. The CPU and the
 * RSS are the robust figures: the endpoint and the client share the cores, and on a shared machine the rate
 * moves from round to round.
 *
 * Targets (the issue's): rate >= 0.7 h2load; CPU per document about 15 µs on the filer's machine (state it as a
 * ratio to h2load's); peak RSS <= 100 MB.
 *
 * Usage: npx tsx benchmarks/feed/null-endpoint.ts [--docs 200000] [--rounds 3] [--only h2c|tls] [--base <rev>]
 *        [--flags "--connections 4"]   (flags for this checkout's CLI and the base's)
 * The CLI runs from dist/: `npm run build` first (the base is built here).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCommit, type CommitBuild } from '../lib/baseline-build.js';
import { type CliFeedRun, fmt, generatePuts, ratio, runCliFeed } from '../lib/cli-feed.js';
import { haveH2load, type H2loadRun, runH2load } from '../lib/h2load.js';
import { nullEndpointMissing, startNullEndpoint } from '../lib/null-endpoint.js';
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
const protocols = (['h2c', 'tls'] as const).filter((p) => only === undefined || only === p);

const missing = nullEndpointMissing() ?? (haveH2load() ? undefined : 'no h2load (apt-get install nghttp2-client)');
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

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0
    ? Number.NaN
    : s.length % 2 === 1
      ? s[(s.length - 1) / 2]
      : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const medians = (runs: Figures[]): Figures => ({
  rate: median(runs.map((r) => r.rate)),
  cpuUs: median(runs.map((r) => r.cpuUs)),
  rssMB: median(runs.map((r) => r.rssMB)),
});
const ofH2load = (h: H2loadRun): Figures => ({ rate: h.rate, cpuUs: h.cpuUsPerOp, rssMB: h.maxRssMB });
const ofCli = (r: CliFeedRun): Figures => ({ rate: r.rate, cpuUs: r.cpuUsPerOp, rssMB: r.maxRssMB });

const work = mkdtempSync(join(tmpdir(), 'vb-bench-null-'));
let base: CommitBuild | undefined;
try {
  const input = join(work, 'puts.jsonl');
  await generatePuts(input, docs);
  if (baseRev !== undefined) base = await buildCommit(baseRev);
  // The endpoint's certificate is self-signed and throwaway: the CLI is told to trust it as a user would.
  process.env[trustAllEnv] = '1';
  const lines: string[] = [];
  for (const protocol of protocols) {
    const endpoint = await startNullEndpoint({ tls: protocol === 'tls' });
    const runs: Record<'h2load' | 'this' | 'base', Figures[]> = { h2load: [], this: [], base: [] };
    try {
      const feed = async (cli: string | undefined): Promise<Figures> => {
        const r = await runCliFeed({ target: endpoint.url, input, count: docs, flags: extraFlags, cli, cwd: work });
        if (r.code !== 0 || r.ok !== docs || r.protocol !== 'h2')
          throw new Error(`feed over ${protocol}: exit ${r.code}, ${r.ok} of ${docs} ok, protocol ${r.protocol}`);
        return ofCli(r);
      };
      for (let round = 0; round < rounds; round++) {
        const h = await runH2load({ url: endpoint.url, requests: docs, clients: 4, streams: 256, work });
        if (h.ok !== docs) throw new Error(`h2load over ${protocol}: ${h.ok} of ${docs} ok`);
        runs.h2load.push(ofH2load(h));
        // The order alternates, so neither build always runs right after h2load.
        const order = base !== undefined && round % 2 === 1 ? (['base', 'this'] as const) : (['this', 'base'] as const);
        for (const who of order) {
          if (who === 'base' && base === undefined) continue;
          runs[who].push(await feed(who === 'base' ? base!.cli : undefined));
        }
        const last = (k: keyof typeof runs): string =>
          runs[k].length > round ? `${k} ${fmt(runs[k][round].rate)}/s ${fmt(runs[k][round].cpuUs, 1)} µs` : '';
        process.stderr.write(
          `${protocol} round ${round + 1}: ${['h2load', 'this', 'base']
            .map((k) => last(k as keyof typeof runs))
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
    const row = (who: string, f: Figures | undefined, toBase = false): string =>
      f === undefined
        ? ''
        : `| ${protocol} | ${who} | ${fmt(f.rate)} | ${ratio(f.rate, h.rate)} | ${fmt(f.cpuUs, 1)} | ${ratio(f.cpuUs, h.cpuUs)} | ${fmt(f.rssMB)} | ${ratio(f.rssMB, h.rssMB)} | ${toBase && b !== undefined ? `${ratio(f.rate, b.rate)} / ${ratio(f.cpuUs, b.cpuUs)} / ${ratio(f.rssMB, b.rssMB)}` : ''} |`;
    lines.push(row('h2load -c 4 -m 256', h), row('vespa-bulk feed (this)', ours, true));
    if (b !== undefined) lines.push(row(`vespa-bulk feed (${base!.hash.slice(0, 7)})`, b));
  }
  process.stdout.write(
    `\n${docs} × 1 KB puts, the null endpoint, medians of ${rounds} interleaved rounds${extraFlags.length > 0 ? `, feed ${extraFlags.join(' ')}` : ''}\n\n` +
      '| protocol | client | docs/s | rate ÷ h2load | CPU µs/doc | CPU ÷ h2load | peak RSS MB | RSS ÷ h2load | ÷ base: rate / CPU / RSS |\n' +
      '|---|---|---|---|---|---|---|---|---|\n' +
      lines.filter((l) => l !== '').join('\n') +
      "\n\ntargets: rate >= 0.7 × h2load; CPU per document about 15 µs on the filer's machine; peak RSS <= 100 MB\n",
  );
} finally {
  base?.remove();
  rmSync(work, { recursive: true, force: true });
}
