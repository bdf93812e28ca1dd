import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { putBody } from './cli-feed.js';
import { onTeardown } from './teardown.js';

/**
 * h2load (nghttp2's HTTP/2 load generator, C; Debian's nghttp2-client) posting the benchmark put to
 * /document/v1: the reference client where the official Go CLI cannot be built (no Go toolchain new enough, no
 * module proxy). It keeps `clients` connections with `streams` requests in flight on each until `requests` are
 * answered; over https:// it negotiates h2 by ALPN (it verifies no certificate, and has no client certificate,
 * so it cannot reach an mTLS endpoint).
 */
export const h2loadPath = '/usr/bin/h2load';
export const haveH2load = (): boolean => existsSync(h2loadPath);

export interface H2loadOptions {
  /** Origin: http:// (h2c, prior knowledge) or https:// (TLS, ALPN). */
  url: string;
  requests: number;
  clients: number;
  streams: number;
  /** Native threads (default 1: one core, as the feed's --workers 1). */
  threads?: number;
  /** A folder for the body and the URI list. */
  work: string;
}

export interface H2loadRun {
  /** Requests per second over h2load's own clock (from its first connection). */
  rate: number;
  /** Answers 200. */
  ok: number;
  status4xx: number;
  failed: number;
  seconds: number;
  /** Client CPU (user+system) per request, µs. */
  cpuUsPerOp: number;
  /** Client peak RSS (GNU time), MB. */
  maxRssMB: number;
}

/** One h2load run; throws where it did not finish. */
export async function runH2load(o: H2loadOptions): Promise<H2loadRun> {
  const body = join(o.work, 'h2load-body.json');
  const uris = join(o.work, 'h2load-uris.txt');
  if (!existsSync(body)) writeFileSync(body, putBody());
  // Distinct document ids, as a feed sends: 10,000 paths, used round-robin.
  if (!existsSync(uris))
    writeFileSync(uris, Array.from({ length: 10_000 }, (_, i) => `/document/v1/ns/music/docid/h${i}\n`).join(''));
  const args = [
    '-n',
    String(o.requests),
    '-c',
    String(o.clients),
    '-m',
    String(o.streams),
    '-t',
    String(o.threads ?? 1),
    '-d',
    body,
    '-H',
    'content-type: application/json',
    '-B',
    o.url,
    '-i',
    uris,
  ];
  const child = spawn('/usr/bin/time', ['-f', 'CPU %U %S %M', h2loadPath, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const untrack = onTeardown(() => child.kill('SIGKILL'));
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  untrack();
  const finished = /finished in ([\d.]+)(m?s), ([\d.]+) req\/s/.exec(out);
  const status = /status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/.exec(out);
  const requests = /requests: .* (\d+) succeeded, (\d+) failed/.exec(out);
  const cpu = /CPU ([\d.]+) ([\d.]+) (\d+)/.exec(out);
  if (code !== 0 || !finished || !status || !requests)
    throw new Error(`h2load ${args.join(' ')} exited ${code}: ${out.slice(-400)}`);
  const seconds = Number(finished[1]) / (finished[2] === 'ms' ? 1000 : 1);
  return {
    rate: Number(finished[3]),
    ok: Number(status[1]),
    status4xx: Number(status[3]),
    failed: Number(requests[2]),
    seconds,
    cpuUsPerOp: cpu ? ((Number(cpu[1]) + Number(cpu[2])) * 1e6) / o.requests : Number.NaN,
    maxRssMB: cpu ? Number(cpu[3]) / 1024 : Number.NaN,
  };
}
