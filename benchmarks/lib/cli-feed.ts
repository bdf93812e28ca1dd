import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { onTeardown } from './teardown.js';

/**
 * The built CLI as a user runs it, for the benchmarks against real servers (benchmarks/jetty, benchmarks/cluster):
 * the input they feed, the build, and one `feed` under GNU time with its JSON summary read back.
 */
export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** The CLI's entry point in a built tree (this checkout's by default). */
export const cliOf = (root = repoRoot): string => join(root, 'dist/cli/main.js');

/** The fields every benchmark put carries: ~1 KB, the same body h2load posts (see putBody). */
const pad = 'x'.repeat(920);
const fields = (i: number): string => `{"title":"t${i}","n":${i},"text":"${pad}"}`;

/** The body of put i as /document/v1 takes it, for clients that post it themselves (h2load). */
export const putBody = (i = 0): string => `{"fields":${fields(i)}}`;

/** `count` puts of ~1 KB, id:ns:music::doc-<i>, one a line. */
export async function generatePuts(path: string, count: number): Promise<void> {
  const out = createWriteStream(path);
  for (let i = 0; i < count; i++) {
    if (!out.write(`{"put":"id:ns:music::doc-${i}","fields":${fields(i)}}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

/** `node scripts/build.mjs` in `root` (dist/). */
export async function buildDist(root = repoRoot): Promise<void> {
  const b = spawn(process.execPath, [join(root, 'scripts/build.mjs')], { stdio: 'inherit', cwd: root });
  const [code] = await once(b, 'exit');
  if (code !== 0) throw new Error(`build in ${root} failed`);
}

export interface CliFeedOptions {
  target: string;
  /** A file, or '-' with `stdin`. */
  input: string;
  /** What the CLI reads on stdin (with input '-'), piped with backpressure. */
  stdin?: Readable;
  /** Operations in the input: the denominator of CPU per operation (default: the operations ok). */
  count?: number;
  flags?: string[];
  /** The built CLI to run (cliOf(root)); this checkout's by default. */
  cli?: string;
  /** Where it runs: its checkpoint and failure files land here. */
  cwd?: string;
  /** Stops the feed with SIGINT after this many seconds (it finishes what is in flight and prints its summary). */
  capSeconds?: number;
  /** Called with the child's pid once it runs (a scenario that acts on the cluster while it feeds). */
  onStart?: (pid: number) => void;
}

export interface CliFeedRun {
  /** The CLI's exit code: 0 all ok, 1 some failed or stopped, 130 stopped by the cap's SIGINT. */
  code: number;
  /** Stopped by capSeconds before the input ended. */
  capped: boolean;
  /** The JSON summary the CLI printed on stdout (vespa-feed-client's names). */
  summary: Record<string, any>;
  /** feeder.ok.rate: operations ok per second of the feed (the CLI's own clock, from the first send). */
  rate: number;
  ok: number;
  failed: number;
  /** 429 answers as a share of all answers. */
  share429: number;
  p99: number;
  /** The CLI's user+system CPU (GNU time) per operation ok, in µs. */
  cpuUsPerOp: number;
  maxRssMB: number;
  /** Wall seconds of the whole process. */
  wallSeconds: number;
  protocol: string;
  limit: number;
}

/**
 * What GNU time (`-f '%U %S %M' -o report`) wrote of a finished command: user+system CPU and peak RSS. The report is
 * removed once read.
 */
export function takeGnuTime(report: string): { cpuSeconds: number; maxRssMB: number } {
  try {
    const [user, sys, kb] = readFileSync(report, 'utf8').trim().split('\n').pop()!.split(' ').map(Number);
    return { cpuSeconds: user + sys, maxRssMB: kb / 1024 };
  } finally {
    rmSync(report, { force: true });
  }
}

/** One `feed -q` of `input` by the built CLI under GNU time, with `flags`. */
export async function runCliFeed(o: CliFeedOptions): Promise<CliFeedRun> {
  const report = join(o.cwd ?? repoRoot, `.time-${process.pid}-${Date.now()}.txt`);
  const started = performance.now();
  const child = spawn(
    '/usr/bin/time',
    [
      '-f',
      '%U %S %M',
      '-o',
      report,
      process.execPath,
      o.cli ?? cliOf(),
      'feed',
      '-q',
      '-t',
      o.target,
      ...(o.flags ?? []),
      o.input,
    ],
    {
      stdio: [o.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      cwd: o.cwd,
      // Its own process group: GNU time ignores SIGINT and passes nothing on, so the cap signals the group.
      detached: true,
    },
  );
  const stopGroup = (signal: NodeJS.Signals): void => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // Already gone.
    }
  };
  const untrack = onTeardown(() => stopGroup('SIGKILL'));
  if (o.stdin !== undefined) {
    child.stdin!.on('error', () => undefined);
    o.stdin.pipe(child.stdin!);
  }
  o.onStart?.(child.pid!);
  let capped = false;
  const cap =
    o.capSeconds === undefined
      ? undefined
      : setTimeout(() => {
          capped = true;
          // The CLI stops reading, finishes what is in flight and prints its summary.
          stopGroup('SIGINT');
        }, o.capSeconds * 1000);
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const [exitCode] = (await once(child, 'exit')) as [number | null];
  clearTimeout(cap);
  untrack();
  const wallSeconds = (performance.now() - started) / 1000;
  const used = takeGnuTime(report);
  const code = exitCode ?? -1;
  // What it said on stderr, unless it is only the stop the cap asked for.
  if (err !== '' && !(capped && code === 130)) process.stderr.write(err);
  let summary: Record<string, any>;
  try {
    summary = JSON.parse(out) as Record<string, any>;
  } catch {
    throw new Error(
      `feed ${(o.flags ?? []).join(' ')} to ${o.target} exited ${code} without a summary: ${out.slice(0, 300)}`,
    );
  }
  const responses = (summary['http.response.count'] as number) ?? 0;
  const ok = (summary['feeder.ok.count'] as number) ?? 0;
  return {
    code,
    capped,
    summary,
    rate: summary['feeder.ok.rate'],
    ok,
    failed: summary['feeder.error.count'] ?? 0,
    share429: responses > 0 ? (summary['http.response.code.counts']?.['429'] ?? 0) / responses : 0,
    p99: summary['http.response.latency.millis.p99'],
    cpuUsPerOp: (used.cpuSeconds * 1e6) / Math.max(1, capped ? ok : (o.count ?? ok)),
    maxRssMB: used.maxRssMB,
    wallSeconds,
    protocol: summary['http.protocol'] ?? '?',
    limit: summary['feeder.inflight.limit'],
  };
}

/** Formats a number for the tables; '-' when not finite. */
export const fmt = (n: number | undefined, digits = 0): string =>
  n !== undefined && Number.isFinite(n) ? n.toFixed(digits) : '-';

/** A ratio for the tables; '-' when either side is missing. */
export const ratio = (a: number | undefined, b: number | undefined, digits = 2): string =>
  a !== undefined && b !== undefined && b > 0 ? fmt(a / b, digits) : '-';
