import { execFileSync, spawnSync } from 'node:child_process';

/**
 * The `zstd` command-line tool, installed with apt-get when missing (as test/report/chromium.ts does for
 * Chromium): the .zst test input must come from the reference compressor, not from our own decoder's library.
 */
export function ensureZstd(): string {
  if (spawnSync('zstd', ['--version'], { stdio: 'ignore' }).status === 0) return 'zstd';
  if (process.getuid?.() !== 0)
    throw new Error('zstd is missing and the tests are not root: install it with `apt-get install -y zstd`');
  try {
    execFileSync('apt-get', ['update'], { stdio: 'ignore', timeout: 300_000 });
    execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'zstd'], {
      stdio: 'ignore',
      timeout: 600_000,
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  } catch (err) {
    throw new Error(`zstd is missing and apt-get could not install it: ${(err as Error).message}`);
  }
  return 'zstd';
}
