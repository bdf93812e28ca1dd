import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects, parquetSchema, type AsyncBuffer, type FileMetaData, type ParquetParsers } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { VespaBulkError } from '../errors.js';
import { EpochMicros } from './json-value.js';
import type { TableRow, TableRows } from './table-rows.js';

/**
 * Timestamps stay exact (microseconds as a bigint; hyparquet's own Dates drop the micros), so the row mapping
 * can write them in the unit asked for.
 */
const parsers: Partial<ParquetParsers> = {
  timestampFromMilliseconds: (millis: bigint) => new EpochMicros(BigInt(millis) * 1000n),
  timestampFromMicroseconds: (micros: bigint) => new EpochMicros(BigInt(micros)),
  timestampFromNanoseconds: (nanos: bigint) => new EpochMicros(BigInt(nanos) / 1000n),
  dateFromDays: (days: number) => new EpochMicros(BigInt(days) * 86_400_000_000n),
};

/**
 * Rows read per call: a slice of a row group. Measured (benchmarks/formats/parquet-readers.ts): hyparquet
 * decodes a column chunk's pages up to the slice's end, so slices bound the rows held at once.
 */
export const parquetSliceRows = 8192;

/** Where a Parquet file is read from: a path (read by ranges, never whole) or an AsyncBuffer. */
export type ParquetFile = string | AsyncBuffer;

/**
 * Reads a Parquet file row group by row group, in slices of `sliceRows` rows, with hyparquet (and
 * hyparquet-compressors for zstd, gzip, brotli, lz4 and snappy pages): the whole file is never in memory.
 * Cells come as hyparquet gives them (strings, numbers, bigints for INT64, booleans, Uint8Array for binary,
 * arrays for lists, objects for structs and maps) except timestamps and dates, which come as `EpochMicros`.
 * `skipRows`: rows before it are handed on without being decoded (a resumed feed).
 */
export async function parquetRows(source: ParquetFile, name: string, skipRows = 0, sliceRows = parquetSliceRows): Promise<TableRows> {
  let file: AsyncBuffer;
  let metadata: FileMetaData;
  try {
    file = typeof source === 'string' ? await asyncBufferFromFile(source) : source;
    metadata = await parquetMetadataAsync(file);
  } catch (err) {
    throw new VespaBulkError('VB_USAGE', `cannot read Parquet '${name}': ${(err as Error).message}`, { cause: err, place: { file: name } });
  }
  const columns = parquetSchema(metadata).children.map((c) => c.element.name);
  async function* batches(): AsyncGenerator<TableRow[]> {
    let start = 0;
    for (const group of metadata.row_groups) {
      const count = Number(group.num_rows);
      for (let s = 0; s < count; s += sliceRows) {
        const rowStart = start + s;
        const rowEnd = start + Math.min(count, s + sliceRows);
        if (rowEnd <= skipRows) {
          // Before the resume point: not decoded, only counted.
          const out: TableRow[] = [];
          for (let r = rowStart; r < rowEnd; r++) out.push({ line: r + 1, cells: {} });
          yield out;
          continue;
        }
        let rows: Record<string, unknown>[];
        try {
          rows = await parquetReadObjects({ file, metadata, rowStart, rowEnd, compressors, parsers, utf8: false });
        } catch (err) {
          throw new VespaBulkError('VB_USAGE', `cannot read Parquet '${name}' at row ${rowStart + 1}: ${(err as Error).message}`, { cause: err, place: { file: name, line: rowStart + 1 } });
        }
        const out = new Array<TableRow>(rows.length);
        for (let i = 0; i < rows.length; i++) out[i] = { line: rowStart + i + 1, cells: rows[i] };
        yield out;
      }
      start += count;
    }
  }
  return { columns, batches: batches() };
}
