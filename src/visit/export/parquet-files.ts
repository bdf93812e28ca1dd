import { rename } from 'node:fs/promises';
import { normalize } from 'node:path';
import { fileSink } from '../../sinks/file.js';
import { sliceFileName } from '../../sinks/slice-directory.js';
import type { ExportOptions } from './export-options.js';
import type { SinkChoice } from './sink-choice.js';

/**
 * Parquet files (`output`, or one per slice in `outputDir`): each written under `<name>.partial` and renamed to its
 * name once its footer is written, so a file by its final name is always whole. No lengths are recorded: a Parquet
 * file is never cut back, a resumed export writes an unfinished slice anew (see `forgetUnfinishedSlices`).
 */
export function parquetFiles(options: ExportOptions): SinkChoice {
  const perSlice = options.outputDir !== undefined;
  const pathOf = (slice: number): string => (perSlice ? sliceFileName(options.outputDir!, slice, 'parquet') : normalize(options.output!));
  return {
    perSlice,
    workersCompress: false,
    pathOf,
    open: (slice) => {
      const path = pathOf(slice);
      const partial = `${path}.partial`;
      const sink = fileSink(partial, { append: false, ...(options.directIo !== undefined && { directIo: options.directIo }) });
      return { sink, commit: () => rename(partial, path) };
    },
  };
}
