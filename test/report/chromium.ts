import { existsSync } from 'node:fs';
import { ensureDebianPackage } from '../support/debian-package.js';

const candidates = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

const found = (): string | undefined => candidates.find((p) => existsSync(p));

/**
 * The system's Chromium, installed with apt-get (Debian's `chromium`) when missing, as CI runs as root on the
 * same kind of machine. No skip: a report nobody has rendered is not tested, so a failed install fails the test.
 */
export function ensureChromium(): string {
  ensureDebianPackage('chromium', () => found() !== undefined);
  return found() as string;
}
