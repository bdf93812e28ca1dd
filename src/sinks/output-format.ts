import type { VisitEntry } from '../document/visit-entry.js';
import { CsvEncoder } from './csv-write.js';
import { JsonArrayWriter, linesOf } from './json-write.js';
import { ParquetEncoder, type TabularLayout } from './parquet-write.js';

/**
 * Output formats of an export, as pure functions from visited entries to bytes.
 *
 * - `jsonl`: each document as the service sent it, one per line (`{"put":...}` lines from a JSONL stream,
 *   `{"id":...,"fields":...}` objects from a plain JSON response).
 * - `feed`: valid feed input for `vespa-bulk feed` and the other feeders: `{"put":id,"fields":...}` and
 *   `{"remove":id}` lines. A JSONL stream already has that shape, so its bytes pass through untouched.
 * - `json`: the `feed` operations as one JSON array (also valid feed input).
 * - `parquet`, `csv`: a table, a row per document (parquet-write.ts, csv-write.ts; docs/export-formats.md).
 */
export type OutputFormat = 'jsonl' | 'feed' | 'json' | 'parquet' | 'csv';

/** The export formats, for option checks and `--format` choices. */
export const outputFormats: readonly OutputFormat[] = ['jsonl', 'feed', 'json', 'parquet', 'csv'];

/** Whether the format is a table. */
export function isTabular(format: OutputFormat): format is 'parquet' | 'csv' {
  return format === 'parquet' || format === 'csv';
}

/** Encodes batches in one format; `end()` gives what closes the output. */
export interface BatchEncoder {
  encode(entries: readonly VisitEntry[]): Buffer[];
  end(): Buffer | undefined;
}

/**
 * The encoder of one output. `layout`: a table's columns; `csvHeader`: the columns of a CSV file being continued.
 * Each encoder takes `VisitEntry` batches, so whatever reshapes documents before (a transform) runs before it.
 */
export function createEncoder(format: OutputFormat, layout: TabularLayout = {}, csvHeader?: string[]): BatchEncoder {
  if (format === 'parquet') return new ParquetEncoder(layout);
  if (format === 'csv') return new CsvEncoder(layout, csvHeader);
  if (format === 'json') {
    const w = new JsonArrayWriter();
    return { encode: (e) => w.entries(e), end: () => w.end() };
  }
  return { encode: (e) => linesOf(e, format), end: () => undefined };
}
