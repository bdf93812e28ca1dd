import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const candidates = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

/**
 * The system's Chromium, installed with apt-get (Debian's `chromium`) when missing, as CI runs as root on the
 * same kind of machine. No skip: a report nobody has rendered is not tested, so a failed install fails the test.
 */
export function ensureChromium(): string {
  const found = candidates.find((p) => existsSync(p));
  if (found !== undefined) return found;
  if (process.getuid?.() !== 0)
    throw new Error('chromium is missing and the tests are not root: install it with `apt-get install -y chromium`');
  try {
    execFileSync('apt-get', ['update'], { stdio: 'ignore', timeout: 300_000 });
    execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'], {
      stdio: 'ignore',
      timeout: 600_000,
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  } catch (err) {
    throw new Error(`chromium is missing and apt-get could not install it: ${(err as Error).message}`);
  }
  const installed = candidates.find((p) => existsSync(p));
  if (installed === undefined) throw new Error('apt-get install chromium succeeded but no chromium binary was found');
  return installed;
}
