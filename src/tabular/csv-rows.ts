import type { Readable } from 'node:stream';
import { parse, type Info } from 'csv-parse';
import { VespaBulkError } from '../core/errors.js';
import type { Row } from './row-operation.js';
import type { TableRow, TableRows } from './table-rows.js';

/** Rows handed on at once: batching keeps the per-row cost of the async iteration off the feed's path. */
const batchRows = 256;

/**
 * Reads CSV (or, with a tab `delimiter`, TSV) as a stream: the first record names the columns, each later one
 * is a row. Quoting, quotes doubled inside quotes, line breaks inside quoted cells, CRLF and a UTF-8 BOM are
 * read as RFC 4180 and pandas/DuckDB write them; blank lines are skipped. A row with another number of cells
 * than the header is handed on with a `problem` (it fails alone). Text that is not CSV (a quote never closed,
 * text after a closing quote) ends the input with VB_USAGE naming the line: from there on the rows cannot be
 * told apart.
 */
export async function csvRows(stream: Readable, name: string, delimiter = ','): Promise<TableRows> {
  const parser = parse({ bom: true, info: true, delimiter, relax_column_count: true, skip_empty_lines: true });
  stream.on('error', (err) => parser.destroy(err));
  stream.pipe(parser);
  const records = parser[Symbol.asyncIterator]() as AsyncIterator<{ record: string[]; info: Info }>;
  const fail = (err: unknown): VespaBulkError => {
    if (err instanceof VespaBulkError) return err;
    const e = err as Error & { lines?: number };
    return new VespaBulkError(
      'VB_USAGE',
      `cannot read CSV '${name}'${e.lines !== undefined ? ` at line ${e.lines}` : ''}: ${e.message}`,
      { cause: err, place: { file: name, ...(e.lines !== undefined && { line: e.lines }) } },
    );
  };
  let first: IteratorResult<{ record: string[]; info: Info }>;
  try {
    first = await records.next();
  } catch (err) {
    stream.destroy();
    throw fail(err);
  }
  if (first.done === true) return { columns: [], batches: (async function* () {})() };
  const columns = first.value.record.map((c) => c.trim());
  const seen = new Set<string>();
  for (const c of columns) {
    if (c === '') throw new VespaBulkError('VB_USAGE', `CSV '${name}': the header has an empty column name`);
    if (seen.has(c)) throw new VespaBulkError('VB_USAGE', `CSV '${name}': the header names column '${c}' twice`);
    seen.add(c);
  }
  // A record's info counts the lines up to its end; it starts after the previous one's end and the blank lines between.
  let lastLine = first.value.info.lines;
  let lastEmpty = first.value.info.empty_lines;
  async function* batches(): AsyncGenerator<TableRow[]> {
    let out: TableRow[] = [];
    try {
      for (;;) {
        const next = await records.next();
        if (next.done === true) break;
        const { record, info } = next.value;
        const line = lastLine + 1 + (info.empty_lines - lastEmpty);
        lastLine = info.lines;
        lastEmpty = info.empty_lines;
        const cells: Row = {};
        const n = Math.min(record.length, columns.length);
        for (let i = 0; i < n; i++) cells[columns[i]] = record[i];
        const row: TableRow = { line, cells };
        if (record.length !== columns.length) row.problem = `${record.length} cells, the header has ${columns.length}`;
        out.push(row);
        if (out.length >= batchRows) {
          yield out;
          out = [];
        }
      }
    } catch (err) {
      if (out.length > 0) yield out;
      throw fail(err);
    } finally {
      stream.destroy();
    }
    if (out.length > 0) yield out;
  }
  return { columns, batches: batches() };
}
