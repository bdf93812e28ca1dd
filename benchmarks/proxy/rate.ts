/**
 * What a forward proxy costs a feed: the same feed of 1 KB puts to the container's HTTP server (Jetty 12 with its
 * TLS connector and mutual TLS, endpoint.ts), straight and through Debian's squid (`--proxy`, a CONNECT tunnel per
 * connection), interleaved, each `--rounds` times; medians, and the proxy's rate as a ratio to the direct one in
 * the same run. Over HTTP/2 and HTTP/1.1 (`--protocol`), and h2c to the cleartext connector.
 *
 * Usage: npx tsx benchmarks/proxy/rate.ts [--rounds N] [--docs N] [--delay MS]
 * (defaults 3 rounds of 50,000 operations at 1 ms each). Needs ../shared/jetty-endpoint (or JETTY_ENDPOINT) and
 * squid (installed with apt-get when missing, as the tests do). All traffic stays on 127.0.0.1.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { median } from '../lib/child.js';
import { buildDist, fmt, generatePuts, runCliFeed, type CliFeedRun } from '../lib/cli-feed.js';
import { jettyScript, startJetty } from '../jetty/endpoint.js';
import { startSquid } from '../../test/support/squid.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: string): string => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const rounds = Number(flag('--rounds', '3'));
const docs = Number(flag('--docs', '50000'));
const delayMs = Number(flag('--delay', '1'));

async function main(): Promise<void> {
  const script = jettyScript();
  if (script === undefined) {
    console.log('skipped: no Jetty endpoint (../shared/jetty-endpoint or JETTY_ENDPOINT)');
    return;
  }
  const work = mkdtempSync(join(tmpdir(), 'vb-bench-proxy-'));
  await buildDist();
  const jetty = await startJetty(script, delayMs, 0, 256, { tls: 'mtls' });
  const squid = await startSquid();
  try {
    const input = join(work, 'puts.jsonl');
    await generatePuts(input, docs);
    const dir = jetty.tlsDir!;
    const mtls = ['--ca', join(dir, 'ca.pem'), '--cert', join(dir, 'client.pem'), '--key', join(dir, 'client.key')];
    const ways: Array<{ name: string; target: string; flags: string[] }> = [];
    for (const protocol of ['h2', 'http1.1']) {
      const p = ['--protocol', protocol, ...mtls];
      ways.push({ name: `https ${protocol} direct`, target: jetty.tlsUrl!, flags: p });
      ways.push({ name: `https ${protocol} squid`, target: jetty.tlsUrl!, flags: [...p, '--proxy', squid.url] });
    }
    ways.push({ name: 'h2c direct', target: jetty.url, flags: ['--protocol', 'h2'] });
    ways.push({ name: 'h2c squid', target: jetty.url, flags: ['--protocol', 'h2', '--proxy', squid.url] });
    const runs = new Map<string, CliFeedRun[]>(ways.map((w) => [w.name, []]));
    // Jetty's JIT warms up on the first feeds: one of each, untimed, before the rounds.
    for (const way of ways) await runCliFeed({ target: way.target, input, count: docs, flags: way.flags, cwd: work });
    for (let round = 0; round < rounds; round++) {
      // Each round in the other order, so that neither way always follows the other.
      for (const way of round % 2 === 0 ? ways : [...ways].reverse()) {
        await jetty.reset();
        const run = await runCliFeed({ target: way.target, input, count: docs, flags: way.flags, cwd: work });
        if (run.ok !== docs) throw new Error(`${way.name}: ${run.ok} of ${docs} ok (exit ${run.code})`);
        runs.get(way.name)!.push(run);
        process.stderr.write(`round ${round + 1} ${way.name}: ${fmt(run.rate)}/s\n`);
      }
    }
    console.log(`\n${docs} puts of 1 KB, ${delayMs} ms each at Jetty, ${rounds} rounds interleaved (medians)\n`);
    console.log('| way | ops/s | ÷ direct | CPU µs/op | p99 ms |');
    console.log('|---|---|---|---|---|');
    for (const way of ways) {
      const r = runs.get(way.name)!;
      const direct = runs.get(way.name.replace(/ squid$/, ' direct'))!;
      const rate = median(r.map((x) => x.rate));
      console.log(
        `| ${way.name} | ${fmt(rate)} | ${(rate / median(direct.map((x) => x.rate))).toFixed(2)} | ${fmt(median(r.map((x) => x.cpuUsPerOp)), 1)} | ${fmt(median(r.map((x) => x.p99)), 1)} |`,
      );
    }
  } finally {
    await squid.stop();
    await jetty.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
