import type { VisitOptions } from '../visit/options.js';
import { checkRowOptions, type RowOptions } from '../tabular/row-operation.js';
import { validateVisitOptions } from '../visit/query.js';
import { OptionError, checkFunction, checkInteger } from '../core/options-check.js';
import { VespaBulkError } from '../core/errors.js';

/**
 * A cluster as one side of a comparison: what a visit of it takes (endpoint, `documentType` or `cluster`,
 * `selection`, `slices`, TLS, headers...). Without a document type and a cluster, the content clusters are found
 * as `vespa-bulk visit` finds them and each is visited. Tombstones are never compared (`includeRemoves` is not taken).
 */
export type CompareClusterSide = Omit<VisitOptions, 'signal' | 'includeRemoves' | 'resumeFrom' | 'onStart'>;

/**
 * An export as one side: files (or directories, such as the `--output-dir` of an earlier `vespa-bulk visit`, of
 * which every data file is read), in any format `vespa-bulk feed` reads (JSONL, feed JSON, `.gz`...). Each put is a
 * document and a later one of the same id replaces it; a remove takes the id out; an update is refused.
 */
export interface CompareExportSide {
  files: string | readonly string[];
  /**
   * How the rows of CSV, TSV and Parquet files become documents, as `FeedOptions.rows`: above all the schema
   * (`app`, `configUrl` or `model`) that types their cells. Without one a CSV cell is text, which differs from the
   * cluster's number or struct; give the schema the export was written with. A row that cannot become a document
   * fails the comparison (VB_BAD_ROW, naming its file and row).
   */
  rows?: RowOptions;
}

/** One side of a comparison: a cluster (it has an `endpoint`) or an export (it has `files`). */
export type CompareSide = CompareClusterSide | CompareExportSide;

/** What `compare()` compares, and where its details go. */
export interface CompareOptions {
  /** The first side (`a` in the result and the diff). */
  a: CompareSide;
  /** The second side. */
  b: CompareSide;
  /**
   * Write every difference to this file, one JSON object a line: `{"id","side"}` for a document only on `side`
   * (`a` or `b`), `{"id","field","a","b"}` for a field that differs (the values as written; `null` where absent).
   */
  diff?: string;
  /**
   * How many parts both sides are split into, by a hash of the document id, before the parts are compared one at
   * a time: memory holds one part of each side. Default {@link defaultComparePartitions}; raise it for corpora of
   * many GB.
   */
  partitions?: number;
  /** Directory for the spill files (about the size of both corpora, removed at the end). Default the OS's temp dir. */
  tempDir?: string;
  /** How many ids of each kind of difference the summary lists as examples. Default 10. */
  examples?: number;
  /** Stops the comparison (the visits and the reading). */
  signal?: AbortSignal;
  /** Called as the comparison goes on: documents read per side, then partitions compared. */
  onProgress?: (progress: CompareProgress) => void;
}

/** Where a comparison stands. */
export interface CompareProgress {
  phase: 'reading' | 'comparing';
  /** Documents (and removes, for an export) read from each side so far. */
  read: { a: number; b: number };
  /** Partitions compared so far, of `partitions`. */
  compared: number;
  partitions: number;
}

/**
 * Parts both sides are split into by default: with 1M documents of 1 KB on each side, about 4 MB of each side a
 * part. Fewer, larger parts held more memory while compared (400k documents a side: 207 MB peak RSS with 64, 177
 * with 256; benchmarks/compare/exports.ts); the spill buffers they cost while reading are 16 KiB each.
 * @example
 * ```ts
 * import { compare, defaultComparePartitions } from 'vespa-bulk';
 *
 * // A corpus four times what the default is sized for: four times the parts, the same memory per part.
 * await compare({ a: { files: 'a.jsonl' }, b: { files: 'b.jsonl' }, partitions: 4 * defaultComparePartitions });
 * ```
 */
export const defaultComparePartitions = 256;

/** Whether a side is an export (it has `files`). */
export function isExportSide(side: CompareSide): side is CompareExportSide {
  return typeof side === 'object' && side !== null && 'files' in side;
}

/** Refuses bad options with an OptionError naming the option, before anything is read or sent. */
export function checkCompareOptions(options: CompareOptions): void {
  if (typeof options !== 'object' || options === null)
    throw new VespaBulkError('VB_USAGE', 'compare() takes an options object');
  for (const name of ['a', 'b'] as const) {
    const side = options[name] as CompareSide | undefined;
    if (typeof side !== 'object' || side === null)
      throw new OptionError(name, 'a cluster ({ endpoint, ... }) or an export ({ files })', side);
    if (isExportSide(side)) {
      const files = typeof side.files === 'string' ? [side.files] : side.files;
      if (!Array.isArray(files) || files.length === 0 || files.some((f) => typeof f !== 'string' || f === '')) {
        throw new OptionError(`${name}.files`, 'a file or directory name, or a non-empty array of them', side.files);
      }
      if ('endpoint' in side) throw new OptionError(`${name}.files`, 'left out', side.files, `${name}.endpoint`);
      if (side.rows !== undefined) checkRowOptions(side.rows);
    } else {
      if (side.endpoint === undefined)
        throw new OptionError(name, 'a cluster ({ endpoint, ... }) or an export ({ files })', side);
      if ('includeRemoves' in side)
        throw new OptionError(
          `${name}.includeRemoves`,
          'left out (tombstones are not compared)',
          (side as { includeRemoves?: unknown }).includeRemoves,
        );
      try {
        validateVisitOptions(side);
      } catch (err) {
        // Said of its side: the two sides take the same option names.
        if (err instanceof VespaBulkError)
          throw new VespaBulkError(err.code, `side ${name}: ${err.message}`, { cause: err });
        throw err;
      }
    }
  }
  if (options.diff !== undefined && (typeof options.diff !== 'string' || options.diff === ''))
    throw new OptionError('diff', 'a file name', options.diff);
  if (options.tempDir !== undefined && (typeof options.tempDir !== 'string' || options.tempDir === ''))
    throw new OptionError('tempDir', 'a directory name', options.tempDir);
  checkInteger(options, 'partitions', 1, 65536);
  checkInteger(options, 'examples', 0);
  checkFunction(options, 'onProgress');
}
