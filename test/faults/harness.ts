import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { expect } from 'vitest';
import type { FeedSummary } from '../../src/feed/stats.js';
import type { DocumentServer, FaultSettings } from '../../src/simulator/document-api/document-server.js';
import { expectedStore, type Op } from '../feed/helpers.js';
import { cliArgs } from '../support/cli-entry.js';

/**
 * What every fault-survival test shares: a corpus of operations that are all safe to repeat (put, remove,
 * assign-only update), the invariant (store equals expected; successes plus failure output equal the input),
 * and a child-process runner for the CLI.
 */

export { expectedStore, type Op };

export { tempDir } from '../support/temp-dir.js';

/**
 * `puts` documents, with assign-only updates of some earlier ones and removes of others interleaved. No update
 * touches a removed id, so every operation succeeds against a healthy service.
 */
export function mixedOperations(puts: number, prefix = 'f'): Op[] {
  const id = (k: number): string => `id:ns:music::${prefix}${k}`;
  const ops: Op[] = [];
  for (let i = 0; i < puts; i++) {
    ops.push({ put: id(i), fields: { title: `title ${i}`, n: i, tags: ['a', String(i % 7)] } });
    const updated = i - 3;
    if (updated >= 0 && updated % 4 === 0 && updated % 9 !== 1)
      ops.push({
        update: id(updated),
        fields: { title: { assign: `updated ${updated}` }, n: { assign: -1 - updated } },
      });
    const removed = i - 5;
    if (removed >= 0 && removed % 9 === 1) ops.push({ remove: id(removed) });
  }
  return ops;
}

export function writeJsonl(path: string, ops: Op[]): string {
  writeFileSync(path, `${ops.map((o) => JSON.stringify(o)).join('\n')}\n`);
  return path;
}

export function storeMap(server: Pick<DocumentServer, 'store'>): Map<string, Record<string, unknown>> {
  return new Map(server.store.all().map((d) => [d.id, d.fields]));
}

/** The lines of a failure output file (none when it was never created). */
export function failureLines(path: string): string[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '');
}

export function failureReasons(path: string): Array<Record<string, unknown>> {
  return failureLines(`${path}.reasons.jsonl`).map((l) => JSON.parse(l) as Record<string, unknown>);
}

/**
 * The invariant: every operation either succeeded or is in the failure output (never both, never neither),
 * and the store holds exactly what the operations that succeeded make. Operations in the failure output are
 * taken as not applied, which holds for every fault that fails an operation before the service applies it.
 */
export function expectNothingLost(
  server: Pick<DocumentServer, 'store'>,
  ops: Op[],
  okCount: number,
  failuresPath: string,
): { failed: number } {
  const failed = failureLines(failuresPath);
  expect(okCount + failed.length).toBe(ops.length);
  const failedSet = new Set(failed);
  expect(failedSet.size).toBe(failed.length);
  const applied = ops.filter((o) => !failedSet.has(JSON.stringify(o)));
  expect(applied.length).toBe(okCount);
  const expected = expectedStore(applied);
  const actual = storeMap(server);
  // Compare sizes first: a mismatch of thousands of documents would otherwise print them all.
  expect(actual.size).toBe(expected.size);
  expect(actual).toEqual(expected);
  return { failed: failed.length };
}

export function okOf(summary: FeedSummary): number {
  return summary.ok;
}

export const noFaults: Partial<FaultSettings> = {
  errorRate: 0,
  closeRate: 0,
  stallRate: 0,
  garbageRate: 0,
  truncateRate: 0,
  feedBlock: false,
  cutStreamAfterDocuments: 0,
  latencyMs: 0,
  maxOpsPerSecond: 0,
};

/** Short backoff so retries do not dominate test time (the policy's shape is unchanged). */
export const quickRetries = { baseDelayMs: 5, maxDelayMs: 200, feedBlockBaseDelayMs: 50, feedBlockMaxDelayMs: 500 };

// ------------------------------------------------------------ CLI ------------------------------------------------------------

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Whether the stop signal was sent. */
  signalled: boolean;
}

/**
 * Runs `vespa-bulk <args>` from this checkout's sources (see cliArgs) as a child process. With `stopWith`, the signal is sent once `stopWhen` holds (checked
 * on every stderr chunk and every `pollMs`), e.g. once the store holds a random number of documents.
 */
export function runCli(
  args: string[],
  opts: {
    cwd: string;
    env?: NodeJS.ProcessEnv;
    stopWith?: NodeJS.Signals;
    stopWhen?: (stderr: string) => boolean;
    pollMs?: number;
    killAfterMs?: number;
    /**
     * Reads stdout slowly, as a consumer at the other end of a pipe that keeps up with only so much: at most
     * `bytesPerTick` (give or take one read) every `tickMs`, the rest left in the pipe, so the child's writes wait.
     * Without it stdout is read as fast as it comes.
     */
    slowStdout?: { bytesPerTick: number; tickMs: number };
    /** Called with all of stderr so far as it grows: a test acts on the cluster when the CLI has said something. */
    onStderr?: (stderr: string) => void;
  },
): Promise<CliRun> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [...cliArgs(), ...args], {
      cwd: opts.cwd,
      env: { ...process.env, ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let signalled = false;
    const killer = setTimeout(() => child.kill('SIGKILL'), opts.killAfterMs ?? 50_000);
    const check = (): void => {
      if (signalled || opts.stopWith === undefined || opts.stopWhen === undefined) return;
      if (opts.stopWhen(stderr)) {
        signalled = true;
        child.kill(opts.stopWith);
      }
    };
    const poll = setInterval(check, opts.pollMs ?? 5);
    const slow = opts.slowStdout;
    let reader: NodeJS.Timeout | undefined;
    if (slow === undefined) child.stdout.on('data', (d) => (stdout += d));
    else {
      child.stdout.setEncoding('utf8');
      // Once the child exits, Node resumes a stdout nobody listens to and drops what it still holds: a listener
      // keeps it paused, so what the child wrote is all read (at this pace) before 'close'.
      child.stdout.on('readable', () => undefined);
      reader = setInterval(() => {
        for (let budget = slow.bytesPerTick; budget > 0; ) {
          const got = child.stdout.read() as string | null;
          if (got === null) break;
          stdout += got;
          budget -= got.length;
        }
      }, slow.tickMs);
    }
    child.stderr.on('data', (d) => {
      stderr += d;
      opts.onStderr?.(stderr);
      check();
    });
    child.on('error', fail);
    child.on('close', (code, signal) => {
      clearTimeout(killer);
      clearInterval(poll);
      clearInterval(reader);
      done({ code, signal, stdout, stderr, signalled });
    });
  });
}

/** A seeded pseudo-random integer in [lo, hi), so a failing run can be repeated (the seed is in the test name). */
export function seededInt(seed: number, lo: number, hi: number): number {
  let a = (seed * 2654435761) >>> 0;
  a ^= a >>> 15;
  a = Math.imul(a, 2246822519) >>> 0;
  a ^= a >>> 13;
  return lo + (a % (hi - lo));
}
