import { join } from 'node:path';

/** File name of one slice in `--output-dir`: `slice-0003.jsonl`. */
export function sliceFileName(dir: string, slice: number, extension: string): string {
  return join(dir, `slice-${String(slice).padStart(4, '0')}.${extension}`);
}

/** File name of one part of a table export in `--output-dir` without a checkpoint: `part-0000.parquet`. */
export function partFileName(dir: string, part: number, extension: string): string {
  return join(dir, `part-${String(part).padStart(4, '0')}.${extension}`);
}
