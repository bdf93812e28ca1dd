/**
 * Load generator benchmarks, each against a baseline measured in the same run:
 *
 *   speedtest   `feed --speedtest 1000` for 5 s (dry-run puts) against the simulator, vs autocannon posting
 *               the same body (a dry-run put) with the same connections and pipelining for 5 s. Each in its
 *               own process; best of 2, alternating. Printed as a ratio.
 *   fixed rate  `bench --rate N` for 5 s against the simulator (no service rate), asked 5,000/s and 20,000/s:
 *               achieved rate / asked rate, and the p99 latency counted from the due time.
 *
 * Usage: npx tsx benchmarks/loadgen/run.ts [speedtest|rate ...]. Everything goes to 127.0.0.1.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { bench } from '../../src/bench/bench.js';
import { printTable } from '../lib/child.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const autocannonCli = createRequire(import.meta.url).resolve('autocannon/autocannon.js');
const picked = process.argv.slice(2);
const which = new Set(picked.length > 0 ? picked : ['speedtest', 'rate']);
const connections = 8;
const pipelining = 16;
const bytes = 1000;
const seconds = 5;
const children: ChildProcess[] = [];
const rows: Record<string, string>[] = [];

async function startSimulator(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(here, '../feed/sim-server.ts'), '{}'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  children.push(child);
  let buf = '';
  for await (const chunk of child.stdout) {
    buf += String(chunk);
    if (buf.includes('\n')) break;
  }
  return { url: buf.trim(), child };
}

async function stop(s: { child: ChildProcess }): Promise<void> {
  s.child.stdin!.end();
  await once(s.child, 'exit');
}

async function childJson<T>(args: string[]): Promise<T> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  let out = '';
  child.stdout.on('data', (d) => (out += String(d)));
  const [code] = (await once(child, 'exit')) as [number];
  if (code !== 0) throw new Error(`${args.join(' ')} exited ${code}`);
  return JSON.parse(out) as T;
}

async function speedtest(): Promise<void> {
  const sim = await startSimulator();
  const body = JSON.stringify({ fields: { test: 'abcdefghijklmnopqrstuvwxyz'.repeat(40).slice(0, bytes) } });
  let bestAc = 0;
  let bestFeed = 0;
  for (let round = 0; round < 2; round++) {
    const ac = await childJson<{ requests: { total: number }; duration: number; non2xx: number }>([
      autocannonCli,
      '--json',
      '-c',
      String(connections),
      '-p',
      String(pipelining),
      '-d',
      String(seconds),
      '-m',
      'POST',
      '-H',
      'content-type=application/json',
      '-b',
      body,
      `${sim.url}/document/v1/test/test/docid/abcdefgh?dryRun=true`,
    ]);
    if (ac.non2xx > 0) throw new Error(`autocannon got ${ac.non2xx} non-2xx answers`);
    bestAc = Math.max(bestAc, ac.requests.total / ac.duration);
    const s = await childJson<Record<string, number>>([
      '--import',
      'tsx',
      join(here, 'speedtest-child.ts'),
      JSON.stringify({ url: sim.url, bytes, seconds, connections, pipelining }),
    ]);
    if (s['feeder.error.count'] !== 0) throw new Error('the speedtest had failures');
    bestFeed = Math.max(bestFeed, s['feeder.ok.rate']);
  }
  await stop(sim);
  rows.push({
    bench: 'speedtest',
    figure: `dry-run puts/s, ${bytes} B, c=${connections} p=${pipelining}, vs autocannon (best of 2)`,
    value: bestFeed.toFixed(0),
    baseline: bestAc.toFixed(0),
    ratio: (bestFeed / bestAc).toFixed(3),
  });
}

async function rate(): Promise<void> {
  const sim = await startSimulator();
  for (const asked of [5_000, 20_000]) {
    const r = await bench({
      endpoint: sim.url,
      template: { put: 'id:bench:doc::x', fields: { title: 'A title of some words', n: 12345, text: 'x'.repeat(900) } },
      rate: asked,
      durationSeconds: seconds,
      dryRun: true,
      connections,
      pipelining,
    });
    const s = r.steps[0];
    rows.push({
      bench: 'fixed rate',
      figure: `achieved/asked, ${seconds} s, p99 from due time ${s.p99Ms} ms, failed ${s.failed}`,
      value: s.achievedRate.toFixed(0),
      baseline: String(asked),
      ratio: (s.achievedRate / asked).toFixed(3),
    });
  }
  await stop(sim);
}

try {
  if (which.has('speedtest')) await speedtest();
  if (which.has('rate')) await rate();
} finally {
  for (const c of children) if (c.exitCode === null) c.kill();
}
printTable('load generator', rows);
