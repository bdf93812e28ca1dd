import type { VisitEntry } from './entries.js';
import { topLevelValue } from '../core/json-scan.js';
import { CsvEncoder } from '../tabular/csv-write.js';
import { ParquetEncoder, type TabularLayout } from '../tabular/parquet-write.js';

/**
 * Output formats of an export, as pure functions from visited entries to bytes.
 *
 * - `jsonl`: each document as the service sent it, one per line (`{"put":...}` lines from a JSONL stream,
 *   `{"id":...,"fields":...}` objects from a plain JSON response).
 * - `feed`: valid feed input for `vespa-bulk feed` and the other feeders: `{"put":id,"fields":...}` and
 *   `{"remove":id}` lines. A JSONL stream already has that shape, so its bytes pass through untouched.
 * - `json`: the `feed` operations as one JSON array (also valid feed input).
 * - `parquet`, `csv`: a table, a row per document (src/tabular; docs/export-formats.md).
 */
export type OutputFormat = 'jsonl' | 'feed' | 'json' | 'parquet' | 'csv';

/** The export formats, for option checks and `--format` choices. */
export const outputFormats: readonly OutputFormat[] = ['jsonl', 'feed', 'json', 'parquet', 'csv'];

const NEWLINE = 0x0a;

/** A document as a feed operation (no newline). */
export function toFeedOperation(entry: VisitEntry): Buffer {
  if (entry.shape === 'feed') return entry.buf.subarray(entry.start, entry.end);
  // The fields' bytes are spliced in, not parsed and serialized again: that would round `long` values beyond 2^53.
  const fields = topLevelValue(entry.buf, entry.start, entry.end, 'fields');
  const head = Buffer.from(`{"put":${JSON.stringify(entry.id)},"fields":`);
  return Buffer.concat([head, fields === undefined ? emptyObject : entry.buf.subarray(fields.start, fields.end), closeBrace]);
}

const emptyObject = Buffer.from('{}');
const closeBrace = Buffer.from('}');

/**
 * Lines of a batch, newline-terminated, as few buffers as possible: runs of consecutive lines of one
 * received chunk go out as one slice of it.
 */
export function linesOf(entries: readonly VisitEntry[], format: 'jsonl' | 'feed'): Buffer[] {
  const out: Buffer[] = [];
  let runBuf: Buffer | undefined;
  let runStart = 0;
  let runEnd = 0;
  const flush = (): void => {
    if (runBuf !== undefined) out.push(runBuf.subarray(runStart, runEnd));
    runBuf = undefined;
  };
  for (const e of entries) {
    const passThrough = format === 'jsonl' || e.shape === 'feed';
    if (passThrough && e.end < e.buf.length && e.buf[e.end] === NEWLINE) {
      // The line and its newline are in the buffer: extend the run when it follows the previous line.
      if (runBuf === e.buf && runEnd === e.start) {
        runEnd = e.end + 1;
        continue;
      }
      flush();
      runBuf = e.buf;
      runStart = e.start;
      runEnd = e.end + 1;
      continue;
    }
    flush();
    out.push(passThrough ? e.buf.subarray(e.start, e.end) : toFeedOperation(e), newline);
  }
  flush();
  return out;
}

const newline = Buffer.from('\n');
const arrayOpen = Buffer.from('[\n');
const arrayClose = Buffer.from('\n]\n');
const separator = Buffer.from(',\n');

/** Frames the feed operations of an export as one JSON array; `first` tells whether any element preceded. */
export class JsonArrayWriter {
  private count = 0;

  /** Bytes of these entries, including the opening bracket before the first one. */
  entries(entries: readonly VisitEntry[]): Buffer[] {
    const out: Buffer[] = [];
    for (const e of entries) {
      out.push(this.count === 0 ? arrayOpen : separator, toFeedOperation(e));
      this.count++;
    }
    return out;
  }

  /** The closing bracket (an empty array when nothing was written). */
  end(): Buffer {
    return this.count === 0 ? Buffer.from('[]\n') : arrayClose;
  }
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
