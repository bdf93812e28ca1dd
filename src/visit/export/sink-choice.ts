import { rename } from 'node:fs/promises';
import { normalize } from 'node:path';
import { fileSink } from '../../sinks/file.js';
import type { FileSink, Sink } from '../../sinks/sink.js';
import { sliceFileName } from '../../sinks/slice-directory.js';
import { stdoutSink } from '../../sinks/stream.js';
import type { OutputFormat } from '../formats.js';
import { compressedFileSink } from '../workers/gzip-members.js';
import type { ExportOptions } from './export-options.js';

/** An output as opened: its sink, and for a file its path (as the checkpoint names it) and the file sink. */
export interface OpenedSink {
  sink: Sink;
  file?: { path: string; sink: FileSink };
  /** Once closed after its last byte: makes the output final (a Parquet file renamed from its `.partial` name). */
  commit?: () => Promise<void>;
}

/** Where an export writes, chosen once from its options: how its outputs are keyed, named and opened. */
export interface SinkChoice {
  /** One output per slice (`outputDir`), or one for all the slices. */
  readonly perSlice: boolean;
  /** The visit workers compress (a `.gz` output with workers): their batches are gzip members, written as they are. */
  readonly workersCompress: boolean;
  /** The file a slice's documents go to; undefined for stdout. */
  pathOf(slice: number): string | undefined;
  /** Opens the output of a slice; `append` keeps what a file holds (a resumed export) instead of truncating it. */
  open(slice: number, append: boolean): OpenedSink;
}

type OpenFile = (path: string, append: boolean) => FileSink;

/** Standard output (`output` undefined or '-'): never cut back, never truncated. */
function toStdout(stream: NodeJS.WritableStream | undefined): SinkChoice {
  return { perSlice: false, workersCompress: false, pathOf: () => undefined, open: () => ({ sink: stdoutSink(stream) }) };
}

/** One file for every slice (`output`). */
function toOneFile(output: string, openFile: OpenFile, workersCompress: boolean): SinkChoice {
  const path = normalize(output);
  return {
    perSlice: false,
    workersCompress,
    pathOf: () => path,
    open: (_slice, append) => {
      const sink = openFile(output, append);
      return { sink, file: { path, sink } };
    },
  };
}

/** A file per slice in a directory (`outputDir`): slice-0000.jsonl, ... */
function toSliceFiles(dir: string, extension: string, openFile: OpenFile, workersCompress: boolean): SinkChoice {
  const pathOf = (slice: number): string => sliceFileName(dir, slice, extension);
  return {
    perSlice: true,
    workersCompress,
    pathOf,
    open: (slice, append) => {
      const path = pathOf(slice);
      const sink = openFile(path, append);
      return { sink, file: { path, sink } };
    },
  };
}

/**
 * The outputs of an export: stdout, one file, or a file per slice; a file is written by `fileSink` (compressed by its
 * `.gz` name), or, where workers compress, as the gzip members they send.
 */
export function chooseSinks(options: ExportOptions, format: OutputFormat, workers: number): SinkChoice {
  const compressed = options.outputDir !== undefined ? options.gzip === true : options.output !== undefined && options.output.endsWith('.gz');
  // With workers, a .gz output (or each .gz slice file) gets gzip members compressed by the workers, written as they come.
  const workersCompress = workers > 1 && compressed;
  const openFile: OpenFile = workersCompress
    ? compressedFileSink
    : (path, append) => fileSink(path, { append, ...(options.directIo !== undefined && { directIo: options.directIo }) });
  if (format === 'parquet' && (options.outputDir !== undefined || (options.output !== undefined && options.output !== '-'))) return parquetFiles(options);
  if (options.outputDir !== undefined) {
    const extension = `${format === 'json' ? 'json' : format === 'csv' ? 'csv' : 'jsonl'}${options.gzip === true ? '.gz' : ''}`;
    return toSliceFiles(options.outputDir, extension, openFile, workersCompress);
  }
  if (options.output === undefined || options.output === '-') return toStdout(options.stdout);
  return toOneFile(options.output, openFile, workersCompress);
}

/**
 * Parquet files (`output`, or one per slice in `outputDir`): each written under `<name>.partial` and renamed to its
 * name once its footer is written, so a file by its final name is always whole. No lengths are recorded: a Parquet
 * file is never cut back, a resumed export writes an unfinished slice anew (see `forgetUnfinishedSlices`).
 */
function parquetFiles(options: ExportOptions): SinkChoice {
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
