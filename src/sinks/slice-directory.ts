import { join } from 'node:path';
import { fileSink, type FileSinkOptions } from './file.js';
import type { FileSink } from './sink.js';

/** File name of one slice in `--output-dir`: `slice-0003.jsonl`. */
export function sliceFileName(dir: string, slice: number, extension: string): string {
  return join(dir, `slice-${String(slice).padStart(4, '0')}.${extension}`);
}

/** The file of one slice in an output directory (created with the directory). */
export function sliceFileSink(dir: string, slice: number, extension: string, options: FileSinkOptions = {}): FileSink {
  return fileSink(sliceFileName(dir, slice, extension), options);
}
