import { statSync, truncateSync } from 'node:fs';
import { VespaBulkError } from '../core/errors.js';

/**
 * Cuts an output file back to the length a checkpoint recorded, before a resumed export appends to it: what a
 * killed run wrote after its last checkpoint is written again by the rerun. A file shorter than that (or gone,
 * when the length is not 0) was changed by someone else, and continuing would lose documents: refused.
 */
export function cutBack(path: string, length: number): void {
  let size: number;
  try {
    size = statSync(path).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    if (length === 0) return;
    throw new VespaBulkError(
      'VB_USAGE',
      `output ${path} is missing, but the checkpoint recorded ${length} bytes in it; restore it, or delete the checkpoint to start over`,
      {
        place: { file: path },
      },
    );
  }
  if (size < length) {
    throw new VespaBulkError(
      'VB_USAGE',
      `output ${path} has ${size} bytes, fewer than the ${length} the checkpoint recorded: it was changed since; restore it, or delete the checkpoint to start over`,
      { place: { file: path } },
    );
  }
  if (size > length) truncateSync(path, length);
}
