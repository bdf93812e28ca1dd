import { join } from 'node:path';

/** File name of one slice in `--output-dir`: `slice-0003.jsonl`. */
export function sliceFileName(dir: string, slice: number, extension: string): string {
  return join(dir, `slice-${String(slice).padStart(4, '0')}.${extension}`);
}

