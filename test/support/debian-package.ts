import { execFileSync } from 'node:child_process';

/**
 * Whatever a test needs, the project's own files install it: CI runs as root on Debian, where a missing tool is
 * one `apt-get install` away. No skip: a failed install fails the test, with apt-get's own words in the error.
 */

// One `apt-get update` per process: the lists do not go stale within a test run, and it costs seconds.
let updated = false;

// Two test files may install at once (vitest runs two at a time), and apt-get fails at once on a lock another
// holds (DPkg::Lock::Timeout waits for dpkg's lock, but `update` ignores it): flock(1) queues ours one after the
// other, and the timeout still covers anyone else's dpkg.
const queueSeconds = 600;
const queue = ['flock', '--wait', String(queueSeconds), '/tmp/vespa-bulk-apt.lock'];
const aptOptions = ['-o', 'DPkg::Lock::Timeout=300', '-o', 'Acquire::Retries=3'];

/** Runs apt-get with `args` after the queue, allowing it `seconds` once its turn comes. */
function aptGet(args: string[], seconds: number): void {
  execFileSync(queue[0], [...queue.slice(1), 'apt-get', ...aptOptions, ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
    timeout: (queueSeconds + seconds) * 1000,
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
}

/** What failed (the command; a timeout's signal) and the last lines apt-get wrote to stderr. */
function aptError(err: unknown): string {
  const e = err as Error & { stderr?: Buffer; signal?: string };
  const stderr = e.stderr?.toString().trim().split('\n').slice(-5).join('\n');
  const what = e.message.split('\n')[0] + (e.signal ? ` (killed by ${e.signal})` : '');
  return stderr ? `${what}\n${stderr}` : what;
}

/**
 * Installs Debian package `pkg` with apt-get unless `probe()` (is the tool there?) already holds, and checks
 * `probe()` again after. Throws with what to do when the tests are not root, and with apt-get's error otherwise.
 */
export function ensureDebianPackage(pkg: string, probe: () => boolean): void {
  if (probe()) return;
  if (process.getuid?.() !== 0)
    throw new Error(`${pkg} is missing and the tests are not root: install it with \`apt-get install -y ${pkg}\``);
  try {
    if (!updated) {
      aptGet(['update'], 300);
      updated = true;
    }
    aptGet(['install', '-y', '--no-install-recommends', pkg], 600);
  } catch (err) {
    throw new Error(`${pkg} is missing and apt-get could not install it: ${aptError(err)}`);
  }
  if (!probe()) throw new Error(`apt-get installed ${pkg}, but what the tests need from it is still not there`);
}
