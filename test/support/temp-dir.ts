import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh directory under the system's temporary directory, and how to remove it with everything in it. */
export interface TempDir {
  dir: string;
  cleanup: () => void;
}

/** Makes a temporary directory named `<prefix>XXXXXX`; the test removes it with `cleanup()`. */
export function tempDir(prefix = 'vb-test-'): TempDir {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
