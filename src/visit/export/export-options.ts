import { normalize } from 'node:path';
import type { DeployTarget } from '../../deploy/target.js';
import type { DocumentModel } from '../../schema/document-model.js';
import { OptionError, checkDuration, checkInteger, checkOneOf } from '../../core/options-check.js';
import { VespaBulkError } from '../../core/errors.js';
import { outputFormats, type OutputFormat } from '../../sinks/output-format.js';
import type { SinkOptions } from '../../sinks/sink-choice.js';
import { defaultVisitSlices, type VisitOptions } from '../options.js';
import { validateVisitOptions } from '../query.js';
import type { VisitReport, VisitRun } from '../visitor.js';
import type { TransformSpec } from '../../transform/transform.js';

/**
 * An export: a visit written to stdout, a file or one file per slice, with an optional checkpoint.
 *
 * The checkpoint is saved (at most every `checkpointIntervalMs`, and at the end) only after the documents
 * it covers have reached the output file, so a resumed export loses nothing. It stores each slice's token
 * and the ids written after that token, which the resumed run skips: after a clean stop (end, failure,
 * Ctrl-C) nothing is written twice. The checkpoint also records each output file's length as of its state, and
 * a resumed export first cuts each file back to it, so after a crash (kill -9, an evicted pod) too every
 * document is in the files once, and a `.gz` file ends between gzip members. Standard output cannot be cut
 * back: there, what was written after the last save is written again.
 */
export interface ExportOptions extends VisitOptions, SinkOptions {
  format?: OutputFormat;
  /**
   * Checkpoint file; an existing one for the same visit is continued, and its outputs appended to. One whose visit
   * finished is not run again: nothing is visited or written (`ExportSummary.finishedBefore`); `restart` exports again.
   */
  checkpoint?: string;
  /**
   * Start afresh: an existing `checkpoint` file is not read (the first save replaces it), and the outputs are
   * written anew as by an export without one.
   */
  restart?: boolean;
  /** ms between saves of `checkpoint` while the export runs (after each change). Default `defaultCheckpointIntervalMs` (1000). */
  checkpointIntervalMs?: number;
  /**
   * Worker threads that visit the slices (each slice started on the worker with the fewest running) and encode, and for a `.gz` output
   * compress, their documents; this thread only writes the bytes. Default 1: everything in this thread. Not with
   * `format: 'json'` (one array is framed by one writer) or `dispatcher`.
   */
  workers?: number;
  /** Called once the visit runs, e.g. to draw progress from it. */
  onStart?: (run: VisitRun) => void;
  /**
   * Called before the visit runs when `checkpoint` continues an earlier run: what the runs before this one did (the
   * documents they wrote, the chains they finished, of how many), e.g. to say so and count the whole.
   */
  onResume?: (before: ExportResumed) => void;
  /**
   * An incremental export: only what changed since an earlier export, removes included (`{"remove":id}`), so that
   * feeding it into a copy made from that export brings the copy up to date. The earlier export's record (its
   * `checkpoint` file, once it completed, or its summary saved as JSON: `startedAt`, printed `visit.started`), or a
   * time as `fromTimestamp` is given on the command line (epoch seconds, `<n>ms`, `<n>us`, ISO 8601; a path that
   * reads as a time is taken as one: write `./1700000000`). The visit gets `fromTimestamp` (that moment less
   * `sinceMarginMs`) and `includeRemoves`. Not with `fromTimestamp`, `toTimestamp`, `includeRemoves: false` or `format: 'parquet' | 'csv'` (a table has no place for removes).
   * Removes older than the content cluster's tombstone lifetime (two weeks by default) are no longer there to export.
   */
  since?: string;
  /** ms taken off `since` for clock skew between this machine and the content nodes. Default {@link defaultSinceMarginMs} (60 000). */
  sinceMarginMs?: number;
  /**
   * `format: 'parquet' | 'csv'`: an application package (directory, .zip) whose schema types the columns (see
   * docs/export-formats.md); without one of `app`, `configUrl` or `model` they are inferred from the first documents.
   */
  app?: string;
  /** `format: 'parquet' | 'csv'`: a config server whose active application's schema types the columns. */
  configUrl?: string;
  /** Tenant, application and credentials on `configUrl`. */
  configTarget?: Omit<DeployTarget, 'configUrl'>;
  /** `format: 'parquet' | 'csv'`: the document model that types the columns, already read. */
  model?: DocumentModel;
  /** `format: 'parquet' | 'csv'`: rows per Parquet row group, and rows inferred from without a schema. Default 10,000. */
  rowGroupRows?: number;
  /**
   * A transform (as `FeedOptions.transform`, docs/transform.md) applied to each document before it is formatted:
   * it gets `{"put": id, "fields": {...}}` (a tombstone `{"remove": id}`) and what it returns is written, nothing
   * for null. A throw or a result that is not operations fails the export (VB_TRANSFORM, naming the document);
   * its checkpoint continues once the transform is mended. Runs in this thread: not with `workers` above 1.
   */
  transform?: TransformSpec;
}

/** What the runs before a resumed export did, as its checkpoint records (see `ExportOptions.onResume`). */
export interface ExportResumed {
  /** Documents (and removes) they wrote. */
  documents: number;
  /** Chains (slices, per bucket space and cluster) they finished. */
  finishedChains: number;
  /** Chains of the visit, finished or not. */
  chains: number;
  /** Every chain finished before: this run visits and writes nothing (see `ExportSummary.finishedBefore`). */
  finished: boolean;
}

/** The visit report of an export, with the bytes written. */
export interface ExportSummary extends VisitReport {
  /** Bytes written to the output(s), before compression. */
  outputBytes: number;
  /** The checkpoint continued a previous run. */
  resumed: boolean;
  /** With `resumed`: the documents (and removes) the runs before this one wrote; this run's are `documents` and `removes`. */
  documentsBefore?: number;
  /**
   * With `resumed`: the checkpoint was of an export that had finished, so nothing was visited or written this run,
   * and neither its outputs nor the checkpoint were touched (`restart` exports again).
   */
  finishedBefore?: boolean;
  /**
   * When the visit began (ISO 8601; a resumed export's first run): what an increment of this export (`since`) starts
   * from. Absent only when resumed from a checkpoint of an earlier version, which did not record it.
   */
  startedAt?: string;
  /** The visit's lower bound (`fromTimestamp`, microseconds, as a decimal string), when it had one: an increment's start. */
  fromTimestamp?: string;
}

/** Checks an export's own options and the visit's, before any output is opened (and a file truncated). */
export function checkExportOptions(options: ExportOptions): { format: OutputFormat; workers: number } {
  const format = options.format ?? 'jsonl';
  if (options.output !== undefined && options.output !== '-' && options.outputDir !== undefined)
    throw new OptionError('output', 'left out', options.output, 'outputDir');
  checkOneOf(options, 'format', outputFormats);
  checkOneOf(options, 'directIo', [true, false]);
  checkOneOf(options, 'gzip', [true, false]);
  if (options.gzip === true && options.outputDir === undefined)
    throw new OptionError(
      'gzip',
      'used with an output directory (a single output file compresses by its .gz name)',
      true,
    );
  checkDuration(options, 'checkpointIntervalMs');
  checkInteger(options, 'workers', 1, 256);
  checkOneOf(options, 'restart', [true, false]);
  if (options.restart === true && options.checkpoint === undefined)
    throw new OptionError('restart', 'used with checkpoint (it starts an export with one afresh)', true);
  checkSince(options);
  const workers = options.workers ?? 1;
  if (workers > 1 && format === 'json')
    throw new OptionError('format', 'jsonl or feed with workers', format, 'workers');
  // The workers send encoded JSONL bytes; a table's columns and row groups are built by one encoder.
  if (workers > 1 && (format === 'parquet' || format === 'csv'))
    throw new OptionError('workers', `1 with format ${format} (a table is encoded in one thread)`, workers);
  checkInteger(options, 'rowGroupRows', 1, 1_000_000);
  checkInteger(options, 'rowsPerFile', 1);
  // The workers encode (and compress) what they visit; the transform runs before the encoding, in this thread.
  if (workers > 1 && options.transform !== undefined)
    throw new OptionError('transform', 'left out with workers', 'a transform', 'workers');
  validateVisitOptions(options);
  return { format, workers };
}

/**
 * The visit as it runs: the slice count made explicit (with it, `inflightSlices` as it was meant without it). Without
 * `slices` a checkpoint's own count is taken, so that one saved under an earlier default (4, all at once) is continued;
 * then too the visit is adaptive, and it starts at the level the checkpoint saved.
 */
export function resolvedVisit(
  options: ExportOptions,
  saved: { slices: number | undefined; inflight: number | undefined },
): ExportOptions {
  if (options.slices !== undefined) return options;
  const slices = saved.slices ?? defaultVisitSlices;
  const inflight = options.inflightSlices ?? 'adaptive';
  const start = options.adaptiveSlices?.start ?? saved.inflight;
  return {
    ...options,
    slices,
    inflightSlices: inflight,
    ...(inflight === 'adaptive' && start !== undefined && { adaptiveSlices: { ...options.adaptiveSlices, start } }),
  };
}

/** `since` and what excludes it; the record itself is read when the export is prepared. */
function checkSince(options: ExportOptions): void {
  checkDuration(options, 'sinceMarginMs');
  if (options.since === undefined) {
    if (options.sinceMarginMs !== undefined)
      throw new OptionError('sinceMarginMs', 'used with since', options.sinceMarginMs);
    return;
  }
  if (typeof options.since !== 'string' || options.since.trim() === '')
    throw new OptionError('since', "a time or the file of an earlier export's record", options.since);
  if (options.fromTimestamp !== undefined) throw new OptionError('since', 'left out', options.since, 'fromTimestamp');
  if (options.toTimestamp !== undefined) throw new OptionError('since', 'left out', options.since, 'toTimestamp');
  if (options.includeRemoves === false)
    throw new OptionError('includeRemoves', 'left out or true with since (an increment carries the removes)', false);
  // Said here, before the record is read: otherwise the refusal would name --include-removes, which was not given.
  if (options.format === 'parquet' || options.format === 'csv') {
    throw new VespaBulkError(
      'VB_USAGE',
      `--format ${options.format} has no place for the removes an increment (--since) carries: export the increment as jsonl or feed`,
    );
  }
  if (options.checkpoint !== undefined && normalize(options.checkpoint) === normalize(options.since)) {
    throw new OptionError(
      'checkpoint',
      "another file than since (the earlier export's record is read, this export's own is written)",
      options.checkpoint,
    );
  }
}
