import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { VespaBulkError } from '../core/errors.js';
import type { RawItem } from '../core/operation-splitter.js';
import type { DocumentModel } from '../schema/document-model.js';
import { modelFromConfigServer, modelFromPackage } from '../deploy/load-model.js';
import { csvRows } from './csv-rows.js';
import { EpochMicros } from './json-value.js';
import { parquetRows } from './parquet-rows.js';
import { rowMapping, type RowOptions } from './row-operation.js';
import type { TableFormat } from './input-format.js';
import type { TableRow, TableRows } from './table-rows.js';

/** The batch a table input yields: as `SourceBatch` in feed/source.ts. */
export interface TableBatch {
  input: number;
  name: string;
  items: RawItem[];
}

/** How a table input is opened and where a resumed feed starts in it. */
export interface TableInput {
  format: TableFormat;
  input: number;
  /** As shown (a URL's query masked). */
  name: string;
  /** The decompressed bytes (CSV, TSV; and Parquet from stdin or a URL, which is first copied to a temporary file). */
  open: () => Readable | Promise<Readable>;
  /** A Parquet file's path, read by ranges. */
  path?: string;
  rows: RowOptions;
  /** Rows (offsets) before this are skipped: a checkpoint's position in this input, else -1. */
  skipBefore: number;
  skip?: (input: number, offset: number) => boolean;
  /** The schemas, read once per feed (see `loadRowModel`). */
  model?: DocumentModel;
  /** Counts bytes read from a Parquet file, for the ETA. */
  onBytes?: (n: number) => void;
}

/** The schemas of `rows` (its `model`, or read from `app` or `configUrl`), or undefined when none is given. */
export async function loadRowModel(rows: RowOptions): Promise<DocumentModel | undefined> {
  if (rows.model !== undefined) return rows.model;
  if (rows.app !== undefined) return modelFromPackage(rows.app);
  if (rows.configUrl !== undefined) return modelFromConfigServer({ configUrl: rows.configUrl });
  return undefined;
}

const noBytes = Buffer.alloc(0);

/**
 * Reads a table input and yields its rows as feed items: each row's operation JSON, or (when the row cannot
 * become an operation) an item with a VB_BAD_ROW error whose bytes are the row's cells as JSON, so the failure
 * output shows what was in it. An item's offset is the row's 0-based index and its span 1 (checkpoints count
 * rows); its line is the CSV line the row starts on, or the Parquet row's 1-based number.
 */
export async function* readTable(t: TableInput): AsyncGenerator<TableBatch> {
  let tempDir: string | undefined;
  try {
    let table: TableRows;
    if (t.format === 'parquet') {
      let path = t.path;
      if (path === undefined) {
        // A Parquet reader needs to seek (the footer first): a stream is copied to a temporary file first.
        tempDir = mkdtempSync(join(tmpdir(), 'vespa-bulk-parquet-'));
        path = join(tempDir, 'input.parquet');
        await pipeline(await t.open(), createWriteStream(path));
      }
      table = await parquetRows(path, t.name, Math.max(0, t.skipBefore), t.onBytes);
    } else {
      table = await csvRows(await t.open(), t.name, t.format === 'tsv' ? '\t' : ',');
    }
    if (table.columns.length === 0) return;
    const mapping = rowMapping(t.rows, table.columns, `input '${t.name}'`, t.model, t.format !== 'parquet');
    let index = 0;
    for await (const rows of table.batches) {
      const items = new Array<RawItem>(rows.length);
      for (let i = 0; i < rows.length; i++) {
        const offset = index++;
        const row = rows[i];
        const item: RawItem = { bytes: noBytes, line: row.line, offset, span: 1 };
        items[i] = item;
        if (offset < t.skipBefore || t.skip?.(t.input, offset) === true) {
          item.skip = true;
          continue;
        }
        if (row.problem !== undefined) {
          item.bytes = cellsText(row);
          item.error = new VespaBulkError('VB_BAD_ROW', row.problem);
          continue;
        }
        try {
          item.bytes = mapping.operation(row.cells);
        } catch (err) {
          item.bytes = cellsText(row);
          item.error =
            err instanceof VespaBulkError ? err : new VespaBulkError('VB_BAD_ROW', String((err as Error).message));
        }
      }
      yield { input: t.input, name: t.name, items };
    }
  } finally {
    if (tempDir !== undefined) rmSync(tempDir, { recursive: true, force: true });
  }
}

/** A failed row's cells as one line of JSON (bigints as digits, bytes as base64): what the failure output keeps of it. */
function cellsText(row: TableRow): Buffer {
  return Buffer.from(
    JSON.stringify(row.cells, (_k, v: unknown) => {
      if (typeof v === 'bigint') return v.toString();
      if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
      if (v instanceof EpochMicros) return v.micros.toString();
      if (v instanceof Map) return Object.fromEntries(v as Map<string, unknown>) as Record<string, unknown>;
      if (ArrayBuffer.isView(v)) return Array.from(v as unknown as ArrayLike<number>);
      return v;
    }),
  );
}
