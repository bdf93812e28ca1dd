import { openAsBlob, statSync } from 'node:fs';
import { VespaBulkError } from '../core/errors.js';
import { importOptional } from '../core/optional-package.js';
import { EpochMicros } from './json-value.js';
import type { TableRow, TableRows } from './table-rows.js';

/**
 * Rows per batch handed on. parquet-wasm decodes a whole row group and then hands it out in record batches of
 * this many rows, each turned into rows on its own: memory holds one decoded row group (in WebAssembly memory,
 * which does not shrink) and one batch of rows, whatever the file's size (benchmarks/formats/parquet-readers.ts).
 */
export const parquetBatchRows = 8192;

/**
 * Reads a Parquet file in batches of rows, never the whole file. The reader, chosen by measurement
 * (docs/input-formats.md): parquet-wasm streaming record batches from a lazily read file Blob, turned into
 * rows by apache-arrow; both loaded on first use (hyparquet, measured beside it, was 14x slower and held
 * gigabytes: it decodes a row group into JS objects whole).
 *
 * Cells come as plain values: strings, numbers, bigints for 64-bit integers, booleans, Uint8Array for binary,
 * arrays (or typed arrays for number lists) for lists, objects for structs, Maps for maps, and `EpochMicros`
 * for timestamps and dates. `skipRows`: rows before it are handed on without being decoded (a resumed feed);
 * `onBytes` is told of the bytes read, for progress.
 */
export async function parquetRows(
  path: string,
  name: string,
  skipRows = 0,
  onBytes?: (n: number) => void,
): Promise<TableRows> {
  try {
    return await wasmRows(path, name, skipRows, onBytes);
  } catch (err) {
    throw unreadable(err, name);
  }
}

function unreadable(err: unknown, name: string, row?: number): VespaBulkError {
  if (err instanceof VespaBulkError) return err;
  const message = err instanceof Error ? err.message : JSON.stringify(err);
  return new VespaBulkError(
    'VB_USAGE',
    `cannot read Parquet '${name}'${row !== undefined ? ` at row ${row}` : ''}: ${message}`,
    { cause: err, place: { file: name, ...(row !== undefined && { line: row }) } },
  );
}

/** Placeholder rows for those before the resume point: counted, never decoded. */
function skipped(from: number, to: number): TableRow[] {
  const out: TableRow[] = [];
  for (let r = from; r < to; r++) out.push({ line: r + 1, cells: {} });
  return out;
}

async function wasmRows(
  path: string,
  name: string,
  skipRows: number,
  onBytes?: (n: number) => void,
): Promise<TableRows> {
  const needed = ['parquet-wasm', 'apache-arrow'] as const;
  const { ParquetFile } = await importOptional('parquet-wasm', () => import('parquet-wasm'), needed);
  const arrow = await importOptional('apache-arrow', () => import('apache-arrow'), needed);
  const size = statSync(path).size;
  const file = await ParquetFile.fromFile(await openAsBlob(path));
  const metadata = file.metadata();
  const total = metadata.fileMetadata().numRows();
  const skip = Math.min(skipRows, total);
  const batches = wasmBatches(file, metadata, skip);
  const decode = (b: WasmBatch) => arrow.tableFromIPC(b.intoIPCStream());
  const first = await batches.next();
  // The columns are known from the first batch; a file with no rows has none to feed.
  if (first.done === true && skip === 0) return { columns: [], batches: (async function* () {})() };
  let table = first.done === true ? undefined : decode(first.value);
  const fields = table?.schema.fields ?? [];
  const columns = fields.map((f) => f.name);
  const converters = fields.map((f) => converter(f.type, arrow.DataType));
  async function* rows(): AsyncGenerator<TableRow[]> {
    let at = 0;
    while (at < skip) {
      const to = Math.min(skip, at + parquetBatchRows);
      yield skipped(at, to);
      at = to;
    }
    try {
      while (table !== undefined) {
        const n = table.numRows;
        const out = new Array<TableRow>(n);
        for (let r = 0; r < n; r++) out[r] = { line: at + r + 1, cells: {} };
        for (let c = 0; c < columns.length; c++) {
          const vector = table.getChildAt(c)!;
          const name = columns[c];
          const convert = converters[c];
          for (let r = 0; r < n; r++) {
            const v: unknown = vector.get(r);
            out[r].cells[name] = convert === undefined || v === null ? v : convert(v);
          }
        }
        at += n;
        onBytes?.(Math.round((size * n) / Math.max(1, total)));
        yield out;
        const next = await batches.next();
        table = next.done === true ? undefined : decode(next.value);
      }
    } catch (err) {
      throw unreadable(err, name, at + 1);
    }
  }
  return { columns, batches: rows() };
}

type WasmBatch = { intoIPCStream(): Uint8Array };

/**
 * The record batches from row `skip` on. parquet-wasm (0.8) applies `offset` to every row group it reads, not
 * to the file, so a resumed read starts at the row group holding `skip`, with the offset within that group
 * only. Its stream decodes a whole row group before handing out its batches: memory holds one row group.
 */
async function* wasmBatches(
  file: import('parquet-wasm').ParquetFile,
  metadata: import('parquet-wasm').ParquetMetaData,
  skip: number,
): AsyncGenerator<WasmBatch> {
  const groups = metadata.numRowGroups();
  let group = 0;
  let start = 0;
  for (; group < groups; group++) {
    const rows = metadata.rowGroup(group).numRows();
    if (start + rows > skip) break;
    start += rows;
  }
  if (group >= groups) return;
  const rest = Array.from({ length: groups - group }, (_, i) => group + i);
  if (skip > start) {
    yield* (await file.stream({
      batchSize: parquetBatchRows,
      rowGroups: [group],
      offset: skip - start,
    })) as unknown as AsyncIterable<WasmBatch>;
    rest.shift();
    if (rest.length === 0) return;
  }
  yield* (await file.stream({ batchSize: parquetBatchRows, rowGroups: rest })) as unknown as AsyncIterable<WasmBatch>;
}

type Convert = (v: unknown) => unknown;

/**
 * How an Arrow value becomes a plain one, by its type; undefined when it is plain already (strings, numbers,
 * bigints, booleans, binary). Arrow gives timestamps as (fractional) milliseconds: they become `EpochMicros`.
 */
function converter(type: unknown, DataType: typeof import('apache-arrow').DataType): Convert | undefined {
  if (DataType.isTimestamp(type) || DataType.isDate(type))
    return (v) => new EpochMicros(BigInt(Math.round(Number(v) * 1000)));
  if (DataType.isList(type) || DataType.isFixedSizeList(type)) {
    const child = (type as { children: { type: unknown }[] }).children[0].type;
    const inner = converter(child, DataType);
    const numeric = DataType.isFloat(child) || DataType.isInt(child);
    return (v) => {
      const list = v as { toArray(): ArrayLike<unknown> } & Iterable<unknown>;
      if (inner !== undefined) return Array.from(list, (e) => (e === null ? null : inner(e)));
      // A number list comes as a typed array (a view: no copy); with nulls in it, as an array.
      return numeric && !(list as { nullCount?: number }).nullCount ? list.toArray() : Array.from(list);
    };
  }
  if (DataType.isStruct(type)) {
    const members = (type as { children: { name: string; type: unknown }[] }).children.map(
      (f) => [f.name, converter(f.type, DataType)] as const,
    );
    return (v) => {
      const row = v as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (const [name, convert] of members) {
        const e = row[name];
        out[name] = convert === undefined || e === null || e === undefined ? e : convert(e);
      }
      return out;
    };
  }
  if (DataType.isMap(type)) {
    const entry = (type as { children: { type: { children: { type: unknown }[] } }[] }).children[0].type;
    const convertKey = converter(entry.children[0].type, DataType);
    const convertValue = converter(entry.children[1].type, DataType);
    return (v) => {
      const out = new Map<unknown, unknown>();
      for (const [k, e] of v as Iterable<[unknown, unknown]>)
        out.set(
          convertKey === undefined ? k : convertKey(k),
          convertValue === undefined || e === null ? e : convertValue(e),
        );
      return out;
    };
  }
  if (DataType.isDictionary(type)) return converter((type as { dictionary: unknown }).dictionary, DataType);
  return undefined;
}
