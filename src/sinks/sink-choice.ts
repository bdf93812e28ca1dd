import { rename } from 'node:fs/promises';
import { normalize } from 'node:path';
import { fileSink } from './file.js';
import type { FileSink, Sink } from './sink.js';
import { partFileName, sliceFileName } from './slice-directory.js';
import { stdoutSink } from './stream.js';
import { isTabular, type OutputFormat } from './output-format.js';
import { compressedFileSink } from './compressed-file.js';

/** Where an export writes: the options of its outputs (part of `ExportOptions`). */
export interface SinkOptions {
  /** A file (`.gz` compresses); undefined or '-' writes to `stdout`. */
  output?: string;
  /**
   * One file per slice in this directory, named slice-0000.jsonl etc. Excludes `output`. A table (`format: 'parquet' |
   * 'csv'`) without `checkpoint` is written as parts of up to `rowsPerFile` rows instead: part-0000.parquet, ...
   */
  outputDir?: string;
  /** Rows per file of a table written to `outputDir` without `checkpoint`. Default 1,000,000. */
  rowsPerFile?: number;
  /**
   * Compresses each file of `outputDir` with gzip (slice-0000.jsonl.gz, ...); a resumed export adds gzip members
   * to them. Only with `outputDir`: `output` compresses by its `.gz` name. Default false.
   */
  gzip?: boolean;
  /**
   * Writes plain (not `.gz`) output files with O_DIRECT, bypassing the page cache, where the file system allows
   * it (ordinary writes otherwise), which about halves the export's CPU time. Default true.
   */
  directIo?: boolean;
  /** Where `output: '-'` writes; default process.stdout. */
  stdout?: NodeJS.WritableStream;
}

/** What the choice reads of an export's checkpoint: only whether one is given (a resumable table keeps a file per slice). */
type ChoiceOptions = SinkOptions & { checkpoint?: string };

/** Rows per file of a table exported to a directory without a checkpoint: Parquet files of some 100 MB to 1 GB. */
export const defaultRowsPerFile = 1_000_000;

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
  /**
   * A table to a directory without a checkpoint: one output for all the slices, a new file (`part-0001`, ...) once
   * one holds this many rows; `open` then takes the part's number. Undefined: no parts.
   */
  readonly rowsPerFile?: number;
  /** The visit workers compress (a `.gz` output with workers): their batches are gzip members, written as they are. */
  readonly workersCompress: boolean;
  /** The file a slice's documents go to; undefined for stdout. */
  pathOf(slice: number): string | undefined;
  /**
   * Opens the output of a slice (of a part, with `rowsPerFile`); `append` keeps what a file holds (a resumed export)
   * instead of truncating it.
   */
  open(slice: number, append: boolean): OpenedSink;
}

type OpenFile = (path: string, append: boolean) => FileSink;

/** Standard output (`output` undefined or '-'): never cut back, never truncated. */
function toStdout(stream: NodeJS.WritableStream | undefined): SinkChoice {
  return {
    perSlice: false,
    workersCompress: false,
    pathOf: () => undefined,
    open: () => ({ sink: stdoutSink(stream) }),
  };
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

/**
 * A file per slice in a directory (`outputDir`): slice-0000.jsonl, ...; or, for a table without a checkpoint, parts
 * of up to `rowsPerFile` rows: part-0000.csv, ...
 */
function toSliceFiles(
  dir: string,
  extension: string,
  openFile: OpenFile,
  workersCompress: boolean,
  rowsPerFile?: number,
): SinkChoice {
  const pathOf = (n: number): string => (rowsPerFile === undefined ? sliceFileName : partFileName)(dir, n, extension);
  return {
    perSlice: rowsPerFile === undefined,
    ...(rowsPerFile !== undefined && { rowsPerFile }),
    workersCompress,
    pathOf,
    open: (slice, append) => {
      const path = pathOf(slice);
      const sink = openFile(path, append);
      return { sink, file: { path, sink } };
    },
  };
}

/** A slice file's extension (before any `.gz`): a format's own, `jsonl` for the feed format's lines. */
function sliceFileExtension(format: OutputFormat): string {
  if (format === 'json' || format === 'csv') return format;
  return 'jsonl';
}

/**
 * The outputs of an export: stdout, one file, or a file per slice; a file is written by `fileSink` (compressed by its
 * `.gz` name), or, where workers compress, as the gzip members they send.
 */
export function chooseSinks(options: ChoiceOptions, format: OutputFormat, workers: number): SinkChoice {
  const compressed =
    options.outputDir !== undefined
      ? options.gzip === true
      : options.output !== undefined && options.output.endsWith('.gz');
  // With workers, a .gz output (or each .gz slice file) gets gzip members compressed by the workers, written as they come.
  const workersCompress = workers > 1 && compressed;
  const openFile: OpenFile = workersCompress
    ? compressedFileSink
    : (path, append) =>
        fileSink(path, { append, ...(options.directIo !== undefined && { directIo: options.directIo }) });
  const rowsPerFile = tableParts(options, format);
  if (
    format === 'parquet' &&
    (options.outputDir !== undefined || (options.output !== undefined && options.output !== '-'))
  )
    return parquetFiles(options, rowsPerFile);
  if (options.outputDir !== undefined) {
    const extension = `${sliceFileExtension(format)}${options.gzip === true ? '.gz' : ''}`;
    return toSliceFiles(options.outputDir, extension, openFile, workersCompress, rowsPerFile);
  }
  if (options.output === undefined || options.output === '-') return toStdout(options.stdout);
  return toOneFile(options.output, openFile, workersCompress);
}

/**
 * The rows per file of a table exported to a directory without a checkpoint: its files hold rows, not slices, so a
 * small export is one file and a large one files of a size (as DuckDB's and Spark's writers do), not a file per
 * slice. A resumable export (`checkpoint`) keeps a file per slice: a slice's file is what it redoes or continues.
 */
function tableParts(options: ChoiceOptions, format: OutputFormat): number | undefined {
  if (options.outputDir === undefined || options.checkpoint !== undefined || !isTabular(format)) return undefined;
  return options.rowsPerFile ?? defaultRowsPerFile;
}

/**
 * Parquet files (`output`, or in `outputDir` one per slice or part): each written under `<name>.partial` and renamed
 * to its name once its footer is written, so a file by its final name is always whole. No lengths are recorded: a
 * Parquet file is never cut back, a resumed export writes an unfinished slice anew (see `forgetUnfinishedSlices`).
 */
function parquetFiles(options: SinkOptions, rowsPerFile: number | undefined): SinkChoice {
  const perSlice = options.outputDir !== undefined && rowsPerFile === undefined;
  const pathOf = (n: number): string =>
    options.outputDir === undefined
      ? normalize(options.output!)
      : (perSlice ? sliceFileName : partFileName)(options.outputDir, n, 'parquet');
  return {
    perSlice,
    ...(rowsPerFile !== undefined && { rowsPerFile }),
    workersCompress: false,
    pathOf,
    open: (slice) => {
      const path = pathOf(slice);
      const partial = `${path}.partial`;
      const sink = fileSink(partial, {
        append: false,
        ...(options.directIo !== undefined && { directIo: options.directIo }),
      });
      return { sink, commit: () => rename(partial, path) };
    },
  };
}
