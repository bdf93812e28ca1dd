import { readdir as readdirThen, rmSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

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
 * per process and write, so two writers (two processes, or two saves in one) never share one. The pid in the name
 * is how a later process knows one left behind (`removeLeftoverTemporaryFiles`; earlier versions wrote
 * `<path>.<pid>.tmp`, which it takes too).
 */
function temporaryPath(path: string): string {
  return `${path}.${process.pid}.${++counter}.tmp`;
}

/** This process's temporary files between their creation and their rename (or removal). */
const writing = new Set<string>();
let exitHooked = false;

/**
 * Removes what this process is writing when it exits in the middle of a write: the CLI's second Ctrl-C (and any
 * process.exit) ends the process while a checkpoint save may be under way. A signal with no handler and SIGKILL
 * end it without this; `removeLeftoverTemporaryFiles` cleans up after those.
 */
function removeWriting(): void {
  for (const tmp of writing) {
    try {
      rmSync(tmp, { force: true });
    } catch {
      // Exiting: nothing better to do than leave it to a later run's removeLeftoverTemporaryFiles.
    }
  }
}

function track(tmp: string): void {
  writing.add(tmp);
  if (exitHooked) return;
  exitHooked = true;
  process.on('exit', removeWriting);
}

/** Files whose leftover temporary files were looked for: once per path and process. */
const swept = new Set<string>();

/** The leftovers beside `path`, looked for at the first write to it. */
async function removeStale(path: string): Promise<void> {
  if (swept.has(path)) return;
  swept.add(path);
  const base = basename(path);
  await removeLeftoverTemporaryFiles(dirname(path), (name) => name === base);
}

/**
 * Removes the temporary files in `dir` that a process left when it died between writing a file whose name
 * `isTarget` accepts and renaming it over that file (SIGKILL, an evicted pod): those of a pid that no longer runs,
 * and those of this process's own pid that it is not writing (a container restarted runs under the same pid
 * again). One of a pid that runs is kept, whoever runs it. The first write to a path does this for that path.
 */
export async function removeLeftoverTemporaryFiles(dir: string, isTarget: (name: string) => boolean): Promise<void> {
  // Through node:fs's callback, not node:fs/promises: every feed and visit runs this, and in the single
  // executable node:fs/promises (with the nine modules it loads) is loaded at its first use (build-sea.mjs's
  // lazyBuiltins), which for a feed with nothing left over is otherwise never.
  const names = await new Promise<string[] | undefined>((resolve) => {
    readdirThen(dir, (err, found) => resolve(err === null ? found : undefined));
  });
  if (names === undefined) return;
  for (const name of names) {
    const pid = writerOf(name, isTarget);
    if (pid === undefined) continue;
    const tmp = join(dir, name);
    if (pid === process.pid ? writing.has(tmp) : isRunning(pid)) continue;
    await rm(tmp, { force: true }).catch(() => {});
  }
}

/** The pid in `<target>.<pid>.<n>.tmp` (or `<target>.<pid>.tmp`) when `isTarget` accepts that target. */
function writerOf(name: string, isTarget: (name: string) => boolean): number | undefined {
  for (const form of [/^(.+)\.(\d+)\.\d+\.tmp$/, /^(.+)\.(\d+)\.tmp$/]) {
    const m = form.exec(name);
    if (m !== null && isTarget(m[1])) return Number(m[2]);
  }
  return undefined;
}

/** Whether a process with this pid runs (EPERM: it does, as another user). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
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
 * the old contents. The first write to a path removes what earlier processes left beside it (`removeStale`), and
 * an exit during a write removes its temporary file.
 */
export async function writeFileAtomically(path: string, data: string | Uint8Array): Promise<void> {
  await removeStale(path);
  const tmp = temporaryPath(path);
  track(tmp);
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
  } finally {
    writing.delete(tmp);
  }
  await syncDirectory(dirname(path));
}
