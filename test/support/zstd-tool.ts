import { spawnSync } from 'node:child_process';
import { ensureDebianPackage } from './debian-package.js';

/**
 * The `zstd` command-line tool, installed with apt-get when missing: the .zst test input must come from the
 * reference compressor, not from our own decoder's library.
 */
export function ensureZstd(): string {
  ensureDebianPackage('zstd', () => spawnSync('zstd', ['--version'], { stdio: 'ignore' }).status === 0);
  return 'zstd';
}
