/**
 * The HTTP/2 pool's cost on ONE container node: this checkout's CLI against another checkout's (the commit before a
 * change to the pool), interleaved on one Jetty endpoint (benchmarks/jetty/endpoint.ts), each variant `--rounds`
 * times; the medians as ratios to the first variant: ops/s, the feeder's CPU per operation (user+sys, GNU time),
 * the JVM's CPU per operation, p99, the connections Jetty saw.
 *
 * Usage (both checkouts built with `node scripts/build.mjs`; a baseline checkout from `git worktree add DIR COMMIT`;
 * JETTY_ENDPOINT=path/to/shared/jetty-endpoint/start.sh where shared/ is not beside the checkout):
 *   npx tsx benchmarks/pool/single-node.ts --delay 10 --slots 0 --docs 200000 --rounds 5 \
 *     'base=/tmp/base|' 'this=.|' 'this, 8 connections=.|--connections 8'
 * A variant is `label=checkout|flags`. All traffic stays on 127.0.0.1.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { jettyScript, startJetty, type JettyEndpoint } from '../jetty/endpoint.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: string): string => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const delay = Number(flag('--delay', '10'));
const slots = Number(flag('--slots', '0'));
const docs = Number(flag('--docs', '100000'));
const rounds = Number(flag('--rounds', '5'));
const variants = args
  .filter((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--'))
  .map((v) => {
    const [label, rest] = v.split('=');
    const [dir, flags] = rest.split('|');
    return { label, dir: resolve(dir), flags: flags === '' || flags === undefined ? [] : flags.split(' ') };
  });
const work = mkdtempSync(join(tmpdir(), 'vb-bench-pool-'));
const input = join(work, 'input.jsonl');

interface Run {
  rate: number;
  cpuUsPerOp: number;
  jvmUsPerOp: number;
  p99: number;
  connections: number;
}

async function generate(): Promise<void> {
  const out = createWriteStream(input);
  const pad = 'x'.repeat(920);
  for (let i = 0; i < docs; i++)
    if (!out.write(`{"put":"id:ns:music::doc-${i}","fields":{"title":"t${i}","n":${i},"text":"${pad}"}}\n`))
      await once(out, 'drain');
  out.end();
  await once(out, 'finish');
}

function jvmCpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function feed(endpoint: JettyEndpoint, dir: string, flags: string[]): Promise<Run> {
  await endpoint.reset();
  const report = join(work, 'time.txt');
  const jvmBefore = jvmCpuSeconds(endpoint.pid);
  const child = spawn(
    '/usr/bin/time',
    [
      '-f',
      '%U %S',
      '-o',
      report,
      process.execPath,
      join(dir, 'dist/cli/main.js'),
      'feed',
      '-q',
      '--workers',
      '1',
      '-t',
      endpoint.url,
      ...flags,
      input,
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  await once(child, 'exit');
  const [user, sys] = readFileSync(report, 'utf8').trim().split('\n').pop()!.split(' ').map(Number);
  const s = JSON.parse(out) as Record<string, number>;
  return {
    rate: s['feeder.ok.rate'],
    cpuUsPerOp: ((user + sys) * 1e6) / docs,
    jvmUsPerOp: ((jvmCpuSeconds(endpoint.pid) - jvmBefore) * 1e6) / docs,
    p99: s['http.response.latency.millis.p99'],
    connections: (await endpoint.stats()).connections,
  };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const script = jettyScript();
if (script === undefined || variants.length === 0) {
  console.error(
    script === undefined ? 'no Jetty endpoint (../shared/jetty-endpoint/start.sh or JETTY_ENDPOINT)' : 'no variants',
  );
  process.exit(2);
}
await generate();
const endpoint = await startJetty(script, delay, slots);
try {
  // The JVM compiles its paths on first use: two unmeasured feeds first.
  for (let i = 0; i < 2; i++) await feed(endpoint, variants[0].dir, variants[0].flags);
  const runs = new Map<string, Run[]>(variants.map((v) => [v.label, []]));
  for (let r = 0; r < rounds; r++)
    for (const v of variants) runs.get(v.label)!.push(await feed(endpoint, v.dir, v.flags));
  const first = runs.get(variants[0].label)!;
  const base = {
    rate: median(first.map((x) => x.rate)),
    cpu: median(first.map((x) => x.cpuUsPerOp)),
    jvm: median(first.map((x) => x.jvmUsPerOp)),
  };
  console.log(
    `Jetty ${delay} ms per operation, ${slots === 0 ? 'unlimited' : `${slots} slots`}; ${docs} docs; median of ${rounds}, ratio to ${variants[0].label}`,
  );
  for (const [label, rs] of runs) {
    const rate = median(rs.map((x) => x.rate));
    const cpu = median(rs.map((x) => x.cpuUsPerOp));
    const jvm = median(rs.map((x) => x.jvmUsPerOp));
    console.log(
      `${label.padEnd(28)} ${rate.toFixed(0).padStart(7)}/s (${(rate / base.rate).toFixed(2)})  feeder ${cpu.toFixed(1)} µs/op (${(cpu / base.cpu).toFixed(2)})  ` +
        `JVM ${jvm.toFixed(1)} µs/op (${(jvm / base.jvm).toFixed(2)})  p99 ${median(rs.map((x) => x.p99)).toFixed(0)} ms  connections ${rs.map((x) => x.connections).join(',')}`,
    );
  }
} finally {
  await endpoint.stop();
  rmSync(work, { recursive: true, force: true });
}
