import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { VespaBulkError } from '../core/errors.js';

/**
 * Makes ready the folder of an output file a run will write (a failure output, a checkpoint, a stats file, a
 * report), before the run sends anything: the folder is made when missing (as `visit -o` makes its own), and a
 * path that cannot be written is refused (VB_USAGE, naming `what` and the path): a folder that cannot be made (a
 * file stands in its way), a path that is a folder, no permission to write. Found only at the first write, the
 * same fault would come after operations were sent, with nothing to record them.
 */
export function prepareOutputFile(path: string, what: string): void {
  const refuse = (why: string, cause?: unknown): never => {
    throw new VespaBulkError('VB_USAGE', `cannot write the ${what} '${path}': ${why}`, {
      ...(cause !== undefined && { cause }),
      place: { file: path },
    });
  };
  // A flag given with nothing after it: '' would pass every check below (its folder '.') and fail only when written.
  if (path === '') refuse('no file is named');
  const folder = dirname(path);
  const unmade = makeFolder(folder);
  if (unmade !== undefined) refuse(`its folder '${folder}' cannot be made: ${unmade.why}`, unmade.err);
  let exists = true;
  try {
    if (statSync(path).isDirectory()) refuse('it is a folder');
  } catch (err) {
    if (err instanceof VespaBulkError) throw err;
    exists = false;
  }
  try {
    accessSync(exists ? path : folder, constants.W_OK);
  } catch (err) {
    refuse(exists ? 'no permission to write it' : `no permission to write in its folder '${folder}'`, err);
  }
}

/**
 * Makes ready a folder a run will write its files in (`visit --output-dir`), as `prepareOutputFile` does a file's:
 * made when missing, refused (VB_USAGE, naming `what` and the path) when it cannot be made or written in.
 */
export function prepareOutputFolder(path: string, what: string): void {
  const refuse = (why: string, cause?: unknown): never => {
    throw new VespaBulkError('VB_USAGE', `cannot write in the ${what} '${path}': ${why}`, {
      ...(cause !== undefined && { cause }),
      place: { file: path },
    });
  };
  const unmade = makeFolder(path);
  if (unmade !== undefined) refuse(`it cannot be made: ${unmade.why}`, unmade.err);
  try {
    accessSync(path, constants.W_OK);
  } catch (err) {
    refuse('no permission to write in it', err);
  }
}

/** Makes `folder` and its parents; undefined when done, else why not. */
function makeFolder(folder: string): { why: string; err: unknown } | undefined {
  try {
    mkdirSync(folder, { recursive: true });
    return undefined;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOTDIR' || code === 'EEXIST' ? 'a file stands in its path' : (err as Error).message;
    return { why, err };
  }
}
