import { open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Whole-file replacement that neither a crash nor a power loss can leave half done: the data goes to a temporary
 * file beside the target and is fsync'd, the file is renamed over the target (atomic within one file system), and
 * the directory is fsync'd so the rename itself is on disk. A reader finds the old contents or the new, never a
 * mix, and once the promise resolves the new contents survive a power loss. Used for checkpoints, which are
 * rewritten while the work they describe goes on.
 */

let counter = 0;

/**
 * The temporary file beside `path`: in the same directory (so the rename stays on one file system), and unique
 * per process and write, so two writers (two processes, or two saves in one) never share one.
 */
function temporaryPath(path: string): string {
  return `${path}.${process.pid}.${++counter}.tmp`;
}

/**
 * Whether a directory fsync failed because the platform cannot do one (Windows cannot open a directory: EISDIR or
 * EPERM; some file systems refuse to fsync one: EINVAL), rather than because the disk failed.
 */
export function directorySyncUnsupported(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'EISDIR' || code === 'EPERM' || code === 'EINVAL';
}

/** Puts the directory's entries (a rename into it) on disk, where the platform can. */
async function syncDirectory(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch (err) {
    if (!directorySyncUnsupported(err)) throw err;
  } finally {
    await handle?.close();
  }
}

/**
 * Replaces `path` with `data` atomically and durably. A failed write removes its temporary file and rejects, leaving
 * the old contents.
 */
export async function writeFileAtomically(path: string, data: string | Uint8Array): Promise<void> {
  const tmp = temporaryPath(path);
  try {
    const file = await open(tmp, 'w');
    try {
      await file.writeFile(data);
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true }).catch(() => {});
    throw err;
  }
  await syncDirectory(dirname(path));
}
