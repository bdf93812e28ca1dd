import type { ProxySetting } from '../http/proxy/proxy-route.js';
import { statSync } from 'node:fs';
import { Readable } from 'node:stream';
import { VespaBulkError } from '../core/errors.js';
import { OperationSplitter, type RawItem } from '../core/operation-splitter.js';
import { isUrlInput, openUrlInput, redactUrl } from './url-input.js';
import { breakAsError, brokenInput, decompress, inputBreak, type Codec } from './decompress.js';
import { fileStream } from './file-stream.js';
import { tableFormatOf, type InputFormat, type TableFormat } from '../tabular/input-format.js';
import type { RowOptions } from '../tabular/row-operation.js';
import type { DocumentModel } from '../schema/document-model.js';
import type { TlsOptions } from '../http/transport.js';

/**
 * Where operations come from: a path, several paths (`-` is stdin, `http(s)://…` a URL streamed), a byte stream, or an async iterable of
 * operations (each a string or bytes of one operation's JSON, or an already-built operation object).
 */
export type FeedSource =
  | string
  | readonly string[]
  | Readable
  | NodeJS.ReadableStream
  | AsyncIterable<string | Uint8Array | FeedOperationObject>
  | Iterable<FeedOperationObject>;

/**
 * One operation given as an object, as a JSONL line spells it (docs/input-formats.md): a put (`put`, or `id` as
 * `vespa feed` also reads it), an update or a remove. Typed so that a misspelt key (`{ pt: … }`) is a compile error
 * rather than a failed operation at run time; an object built at run time is still judged as a line is.
 */
export type FeedOperationObject =
  | { put: string; fields?: Record<string, unknown>; condition?: string; create?: boolean }
  | { id: string; fields?: Record<string, unknown>; condition?: string; create?: boolean }
  | { update: string; fields: Record<string, unknown>; condition?: string; create?: boolean }
  | { remove: string; condition?: string };

export interface SourceBatch {
  /** Index of the input (file) among the sources. */
  input: number;
  /** File name, `-` for stdin, a URL (query masked), `<stream>` or `<iterable>`. */
  name: string;
  items: RawItem[];
}

/** Position in the input: the resume point of a checkpoint. Items before it are skipped. */
export interface InputPosition {
  input: number;
  offset: number;
  line: number;
}

/**
 * An operation read and not finished, as checkpoints list it: its input, the byte offset where it starts, its
 * line. A tuple, not an `InputPosition`, because the checkpoint file holds it so (`unfinished`), and lists
 * of thousands cross threads.
 */
export type OpenPosition = [input: number, offset: number, line: number];

export interface ReadOptions {
  /** What `-` reads. Default process.stdin. */
  stdin?: Readable;
  /** Skip everything before this position (whole inputs before it are not opened). */
  from?: InputPosition;
  /** Items (by input and offset) flagged skipped besides those before `from`: a checkpoint's finished ones. */
  skip?: (input: number, offset: number) => boolean;
  /** Bytes read per chunk from files (and per gunzip chunk). Default 64 KiB. */
  chunkBytes?: number;
  /** TLS options for URL inputs (the feed's `tls`, so its `ca` is trusted). */
  tls?: TlsOptions;
  /** The feed's proxy, for URL inputs: see `TransportOptions.proxy`. */
  proxy?: ProxySetting;
  /** See `TransportOptions.proxyTls`. */
  proxyTls?: TlsOptions;
  /** Reconnects of a URL input after a cut connection or 5xx, in a row without progress. Default 10. */
  urlRetries?: number;
  /** What the inputs hold. Default: by extension (`.csv`, `.tsv`, `.parquet`, after `.gz`/`.zst`), else JSON or JSONL. */
  format?: InputFormat;
  /** How the rows of CSV, TSV and Parquet inputs become operations. */
  rows?: RowOptions;
}

/** Input names and sizes, known before reading (for progress and checkpoints). */
export interface InputInfo {
  name: string;
  /** Size on disk (compressed for .gz), when known. */
  size?: number;
}

/** The inputs a source names (files, URLs, '-'); none for a stream or an iterable. */
function pathsOf(source: FeedSource): readonly string[] | undefined {
  if (typeof source === 'string') return [source];
  return Array.isArray(source) && source.every((s) => typeof s === 'string') ? source : undefined;
}

export function describeInputs(source: FeedSource): InputInfo[] {
  const paths = pathsOf(source);
  if (paths === undefined) return [{ name: isByteStream(source) ? '<stream>' : '<iterable>' }];
  return paths.map((p) => {
    if (p === '-') return { name: '-' };
    if (isUrlInput(p)) return { name: redactUrl(p) };
    try {
      return { name: p, size: statSync(p).size };
    } catch (err) {
      throw new VespaBulkError('VB_USAGE', `cannot read input '${p}': ${(err as Error).message}`, { cause: err });
    }
  });
}

function isByteStream(source: unknown): source is Readable {
  return (
    source instanceof Readable ||
    (typeof source === 'object' && source !== null && typeof (source as { pipe?: unknown }).pipe === 'function')
  );
}

/** Tracks the bytes read from disk (compressed bytes for .gz), for the ETA. */
export class ReadProgress {
  bytes = 0;

  /** The bytes read, and their share of `inputs` when every size is known (files, not stdin): the progress line's figures. */
  of(inputs: readonly InputInfo[]): { readBytes: number; readShare?: number; totalBytes?: number } {
    let total = 0;
    for (const i of inputs) {
      if (i.size === undefined) return { readBytes: this.bytes };
      total += i.size;
    }
    return total > 0
      ? { readBytes: this.bytes, readShare: Math.min(1, this.bytes / total), totalBytes: total }
      : { readBytes: this.bytes };
  }
}

/**
 * Reads the sources one after another and yields their operations cut into items, one batch per chunk read.
 * Pulling is what drives reading: when the consumer stops asking, the file streams pause (backpressure).
 */
export async function* readSources(
  source: FeedSource,
  options: ReadOptions = {},
  progress = new ReadProgress(),
): AsyncGenerator<SourceBatch> {
  const inputs = describeInputs(source);
  // The schemas that type table rows: read once, when a table is first met.
  let model: Promise<DocumentModel | undefined> | undefined;
  const table = (
    format: TableFormat,
    input: number,
    name: string,
    open: () => Readable | Promise<Readable>,
    path?: string,
  ): AsyncGenerator<SourceBatch> =>
    readTableInput(
      format,
      input,
      name,
      open,
      path,
      options,
      progress,
      (model ??= tableInput().then((t) => t.loadRowModel(options.rows ?? {}))),
    );
  if (inputs.length === 1 && (inputs[0].name === '<stream>' || inputs[0].name === '<iterable>')) {
    const format = options.format !== undefined ? tableFormatOf('', options.format) : undefined;
    if (isByteStream(source) && format !== undefined) yield* table(format, 0, '<stream>', () => source);
    else if (isByteStream(source)) yield* readStream(source, 0, '<stream>', options, progress);
    else yield* readIterable(source as AsyncIterable<unknown>, options);
    return;
  }
  const paths = typeof source === 'string' ? [source] : (source as readonly string[]);
  for (let input = 0; input < inputs.length; input++) {
    if (options.from !== undefined && input < options.from.input) continue;
    const name = inputs[input].name;
    const format = tableFormatOf(paths[input], options.format);
    if (format !== undefined) {
      const url = isUrlInput(paths[input]);
      const opened = url
        ? async () =>
            (
              await openUrlInput(
                paths[input],
                { tls: options.tls, proxy: options.proxy, proxyTls: options.proxyTls, maxRetries: options.urlRetries },
                (n) => (progress.bytes += n),
              )
            ).stream
        : () => openInput(name, options, progress);
      const open = async () => breakAsError(await opened(), name);
      const seekable = format === 'parquet' && !url && name !== '-' && !/\.(gz|zst)$/.test(name);
      yield* table(format, input, name, open, seekable ? name : undefined);
    } else if (isUrlInput(paths[input])) yield* readUrl(paths[input], input, name, options, progress);
    else yield* readStream(openInput(name, options, progress), input, name, options, progress);
  }
}

/** The table readers (and the schema loading that types their rows), loaded when a table is first read. */
function tableInput(): Promise<typeof import('../tabular/table-input.js')> {
  return import('../tabular/table-input.js');
}

async function* readTableInput(
  format: TableFormat,
  input: number,
  name: string,
  open: () => Readable | Promise<Readable>,
  path: string | undefined,
  options: ReadOptions,
  progress: ReadProgress,
  model: Promise<DocumentModel | undefined>,
): AsyncGenerator<SourceBatch> {
  const skipBefore = options.from !== undefined && options.from.input === input ? options.from.offset : -1;
  const onBytes = path !== undefined ? (n: number) => void (progress.bytes += n) : undefined;
  // The row after the last one read: where a compressed table that breaks off is recorded as failed.
  let next = { offset: 0, line: 1 };
  try {
    for await (const batch of (await tableInput()).readTable({
      format,
      input,
      name,
      open,
      path,
      rows: options.rows ?? {},
      skipBefore,
      skip: options.skip,
      model: await model,
      onBytes,
    })) {
      const last = batch.items.at(-1);
      if (last !== undefined) next = { offset: last.offset + 1, line: last.line + 1 };
      yield batch;
    }
  } catch (err) {
    const broken = brokenInput(err);
    if (broken === undefined) throw err;
    const item: RawItem = { bytes: Buffer.alloc(0), ...next, span: 1, error: broken };
    if (item.offset < skipBefore || options.skip?.(input, item.offset) === true) item.skip = true;
    yield { input, name, items: [item] };
  }
}

async function* readUrl(
  url: string,
  input: number,
  name: string,
  options: ReadOptions,
  progress: ReadProgress,
): AsyncGenerator<SourceBatch> {
  const from = options.from !== undefined && options.from.input === input ? options.from : undefined;
  const opened = await openUrlInput(
    url,
    {
      from: from?.offset,
      tls: options.tls,
      proxy: options.proxy,
      proxyTls: options.proxyTls,
      maxRetries: options.urlRetries,
      chunkBytes: options.chunkBytes ?? defaultChunkBytes,
    },
    (n) => {
      progress.bytes += n;
    },
  );
  // A ranged read starts at the checkpoint's position: number offsets and lines from there.
  const start =
    from !== undefined && opened.start === from.offset && from.offset > 0
      ? { offset: from.offset, line: from.line }
      : undefined;
  yield* readStream(opened.stream, input, name, options, progress, start);
}

/**
 * Operations' bytes are views into the chunk they were read in, so one operation that outlives its
 * neighbours (promoted to old space while in flight, and dead there until the next full GC) keeps the whole
 * chunk. With 256 KiB chunks a feed against the simulator (256 in flight) held 15-20 MB of them at its peak;
 * with 64 KiB, 7-8 MB (benchmarks/feed/run.ts `memory`, `reader` for the read rate).
 */
const defaultChunkBytes = 64 * 1024;

function openInput(name: string, options: ReadOptions, progress: ReadProgress): Readable {
  const raw: Readable =
    name === '-' ? (options.stdin ?? process.stdin) : fileStream(name, options.chunkBytes ?? defaultChunkBytes);
  raw.on('data', (chunk: Buffer) => {
    progress.bytes += chunk.length;
  });
  const codec = codecOfName(name);
  return codec === undefined ? raw : decompress(raw, codec, options.chunkBytes ?? defaultChunkBytes);
}

/** A file is compressed by its extension: `.zst` zstd, `.gz` gzip. */
function codecOfName(name: string): Codec | undefined {
  if (name.endsWith('.zst')) return 'zstd';
  return name.endsWith('.gz') ? 'gzip' : undefined;
}

async function* readStream(
  stream: Readable,
  input: number,
  name: string,
  options: ReadOptions,
  progress: ReadProgress,
  start?: { offset: number; line: number },
): AsyncGenerator<SourceBatch> {
  const splitter = new OperationSplitter(start);
  const mark = skipMarker(input, options);
  const counts = name === '<stream>';
  try {
    for await (const chunk of stream) {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
      if (counts) progress.bytes += buf.length;
      const items: RawItem[] = [];
      splitter.push(buf, items);
      if (items.length > 0) yield { input, name, items: mark(items) };
    }
  } catch (err) {
    if (err instanceof VespaBulkError) throw err;
    throw new VespaBulkError('VB_USAGE', `cannot read input '${name}': ${(err as Error).message}`, { cause: err });
  } finally {
    stream.destroy();
  }
  // Compressed data that broke off ends this input with a failure at the break; the feed goes on.
  const broken = inputBreak(stream);
  const items: RawItem[] = [];
  if (broken !== undefined)
    splitter.breakOff(new VespaBulkError('VB_BROKEN_INPUT', broken, { place: { file: name } }), items);
  else splitter.end(items);
  if (items.length > 0) yield { input, name, items: mark(items) };
}

/** Items before the resume offset (or finished by the checkpoint) are kept, so they are counted as skipped, but flagged. */
function skipMarker(input: number, options: ReadOptions): (items: RawItem[]) => RawItem[] {
  const skipBefore = options.from !== undefined && options.from.input === input ? options.from.offset : -1;
  const skip = options.skip;
  if (skipBefore < 0 && skip === undefined) return (items) => items;
  return (items) => {
    for (const it of items) if (it.offset < skipBefore || skip?.(input, it.offset) === true) it.skip = true;
    return items;
  };
}

async function* readIterable(
  source: AsyncIterable<unknown> | Iterable<unknown>,
  options: ReadOptions,
): AsyncGenerator<SourceBatch> {
  let line = 0;
  let offset = 0;
  const skipBefore = options.from !== undefined && options.from.input === 0 ? options.from.offset : -1;
  const skip = options.skip;
  for await (const value of source as AsyncIterable<unknown>) {
    line++;
    let bytes: Buffer;
    if (typeof value === 'string') bytes = Buffer.from(value);
    else if (value instanceof Uint8Array)
      bytes = Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    else bytes = Buffer.from(JSON.stringify(value) ?? 'undefined');
    // Offsets of an iterable count items, so a checkpoint can say how many to skip.
    const item: RawItem = { bytes, line, offset };
    if (offset < skipBefore || skip?.(0, offset) === true) item.skip = true;
    offset++;
    // One item per batch: an iterable may be slow (a visit being migrated), and waiting to fill a batch would stall it.
    yield { input: 0, name: '<iterable>', items: [item] };
  }
}
