import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';

/**
 * Whole-file replacement that a crash cannot leave half done: the data goes to a temporary file beside the
 * target, which is then renamed over it (atomic within one file system), so a reader finds the old contents or
 * the new, never a mix. Used for checkpoints, which are rewritten while the work they describe goes on.
 */

let counter = 0;

/**
 * The temporary file beside `path`: in the same directory (so the rename stays on one file system), and unique
 * per process and write, so two writers (two processes, or two saves in one) never share one.
 */
function temporaryPath(path: string): string {
  return `${path}.${process.pid}.${++counter}.tmp`;
}

/** Replaces `path` with `data` atomically. A failed write removes its temporary file and rejects. */
export async function writeFileAtomically(path: string, data: string | Uint8Array): Promise<void> {
  const tmp = temporaryPath(path);
  try {
    await writeFile(tmp, data);
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true }).catch(() => {});
    throw err;
  }
}

/**
 * `writeFileAtomically`, synchronously: for the few writes that must be done before the caller returns
 * without awaiting, such as a feed's checkpoint on its way out.
 */
export function writeFileAtomicallySync(path: string, data: string | Uint8Array): void {
  const tmp = temporaryPath(path);
  try {
    writeFileSync(tmp, data);
    renameSync(tmp, path);
  } catch (err) {
    try {
      rmSync(tmp, { force: true });
    } catch {
      // The original error says more.
    }
    throw err;
  }
}
