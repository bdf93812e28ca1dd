import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { BlockFileSink } from './block-file.js';
import type { FileSink } from './sink.js';

/**
 * A `.gz` file whose gzip members the visit workers compressed: written as they are (concatenated members are
 * one valid gzip file, and appending a resumed export's members keeps it valid).
 */
export function compressedFileSink(path: string, append: boolean): FileSink {
  mkdirSync(dirname(path), { recursive: true });
  return new BlockFileSink(path, append);
}
