import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { putBody, takeGnuTime } from './cli-feed.js';
import { findShared } from './shared.js';
import { onTeardown } from './teardown.js';

/**
 * The clients a feed's own cost is compared with, beside h2load (h2load.ts): the official Go CLI's `vespa feed`
 * (shared/vespa-cli) and autocannon (HTTP/1.1, pipelined: the fastest Node client there is), each run under GNU
 * time as `runCliFeed` runs ours, so that documents/s, CPU per document and peak RSS are measured alike.
 */

/** What one run of a reference client gives. */
export interface ReferenceRun {
  /** Operations (requests) answered 2xx per second. */
  rate: number;
  ok: number;
  /** User+system CPU of the client process per operation, µs. */
  cpuUsPerOp: number;
  maxRssMB: number;
}

/** The official CLI's binary (unpacked by shared/vespa-cli/path), or undefined where there is none. */
export function officialCliBinary(): string | undefined {
  const path = findShared('vespa-cli/path', process.env.VESPA_CLI_PATH);
  if (path === undefined) return undefined;
  const r = spawnSync(path, [], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

/** Runs `command` under GNU time in `cwd`, with its stdout collected. */
async function timedRun(
  command: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number; out: string; err: string; cpuSeconds: number; maxRssMB: number }> {
  const report = join(cwd, `.time-ref-${process.pid}-${Date.now()}.txt`);
  const child = spawn('/usr/bin/time', ['-f', '%U %S %M', '-o', report, command, ...args], {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const untrack = onTeardown(() => child.kill('SIGKILL'));
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  untrack();
  return { code: code ?? -1, out, err, ...takeGnuTime(report) };
}

/**
 * `vespa feed -t <target> <input>` by the official CLI, with its defaults (8 connections, adaptive in flight), its
 * own HOME and config folder under `work` (no user config read, no release check). Throws where it did not feed
 * `count` documents.
 */
export async function runOfficialFeed(o: {
  binary: string;
  target: string;
  input: string;
  count: number;
  work: string;
}): Promise<ReferenceRun> {
  const home = join(o.work, 'vespa-cli-home');
  mkdirSync(home, { recursive: true });
  const r = await timedRun(o.binary, ['feed', '--target', o.target, o.input], o.work, {
    ...process.env,
    HOME: home,
    VESPA_CLI_HOME: home,
  });
  let s: Record<string, any>;
  try {
    s = JSON.parse(r.out) as Record<string, any>;
  } catch {
    throw new Error(`vespa feed exited ${r.code} without a summary: ${(r.out + r.err).slice(0, 300)}`);
  }
  const ok = (s['feeder.ok.count'] as number) ?? 0;
  if (ok !== o.count) throw new Error(`vespa feed: ${ok} of ${o.count} ok (exit ${r.code})`);
  return { rate: s['feeder.ok.rate'], ok, cpuUsPerOp: (r.cpuSeconds * 1e6) / ok, maxRssMB: r.maxRssMB };
}

const autocannonCli = createRequire(import.meta.url).resolve('autocannon/autocannon.js');

/**
 * autocannon posting the benchmark put (`putBody`) to one document path over HTTP/1.1 for `seconds`, with
 * `connections` and `pipelining` (requests in flight on each). A fixed duration, not an amount: autocannon notices
 * an amount is done only at its next one-second tick, which would understate its rate.
 */
export async function runAutocannon(o: {
  url: string;
  seconds: number;
  connections: number;
  pipelining: number;
  work: string;
}): Promise<ReferenceRun> {
  const args = [
    autocannonCli,
    '--json',
    '-c',
    String(o.connections),
    '-p',
    String(o.pipelining),
    '-d',
    String(o.seconds),
    '-m',
    'POST',
    '-H',
    'content-type=application/json',
    '-b',
    putBody(),
    `${o.url}/document/v1/ns/music/docid/a1`,
  ];
  const r = await timedRun(process.execPath, args, o.work);
  if (r.code !== 0) throw new Error(`autocannon exited ${r.code}: ${r.err.slice(-300)}`);
  const s = JSON.parse(r.out) as { '2xx': number; duration: number; non2xx: number; errors: number };
  if (s.non2xx > 0 || s.errors > 0) throw new Error(`autocannon: ${s.non2xx} answers not 2xx, ${s.errors} errors`);
  const ok = s['2xx'];
  return { rate: ok / s.duration, ok, cpuUsPerOp: (r.cpuSeconds * 1e6) / ok, maxRssMB: r.maxRssMB };
}
