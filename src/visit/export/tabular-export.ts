import { existsSync, openSync, readSync, closeSync } from 'node:fs';
import { gunzipSync, constants as zlibConstants } from 'node:zlib';
import { VespaBulkError } from '../../core/errors.js';
import type { DocumentModel } from '../../schema/document-model.js';
import { columnsOfDocumentType } from '../../sinks/column-types.js';
import type { TabularLayout } from '../../sinks/parquet-write.js';
import { modelFromConfigServer, modelFromPackage } from '../../deploy/load-model.js';
import type { VisitCheckpoint } from '../visit-checkpoint.js';
import { isTabular, type OutputFormat } from '../../sinks/output-format.js';
import type { ChainSpec } from '../query.js';
import type { ExportOptions } from './export-options.js';
import type { RestoredOutputs } from './restore-outputs.js';

/**
 * What a Parquet or CSV export needs beyond a JSONL one: its columns (from the schema of `app`, `configUrl` or
 * `model`, or inferred), the combinations it refuses, and how a resumed Parquet export redoes unfinished slices.
 */

/** Refuses what a tabular export cannot do, before anything is opened; `resumed`: a checkpoint with progress. */
export function checkTabularExport(options: ExportOptions, format: OutputFormat, resumed: boolean): void {
  if (!isTabular(format)) return;
  if (options.includeRemoves === true)
    throw usage(
      `--format ${format} has no place for removed documents, which --include-removes and --since export: use --format jsonl or feed`,
    );
  if (format !== 'parquet') return;
  const single = options.outputDir === undefined;
  if (single && options.output?.endsWith('.gz') === true)
    throw usage('--format parquet compresses inside the file (snappy): name the output .parquet, not .gz');
  if (options.gzip === true) throw usage('--format parquet compresses inside the file (snappy): leave out --gzip');
  // A Parquet file ends with its footer and cannot be continued: only one file per slice, redone when unfinished.
  if (single && options.checkpoint !== undefined) {
    throw usage(
      '--checkpoint with --format parquet needs --output-dir (one file per slice, each redone when a resumed export finds it unfinished): a single Parquet file cannot be continued after a stop',
    );
  }
  if (resumed && single) throw usage('a single Parquet output cannot be continued from a checkpoint');
}

/** The columns of the export: the schema's document type where a schema is given, otherwise inferred. */
export async function tabularLayout(options: ExportOptions): Promise<TabularLayout> {
  const layout: TabularLayout = options.rowGroupRows !== undefined ? { rowGroupRows: options.rowGroupRows } : {};
  const given = [options.app, options.configUrl, options.model].filter((o) => o !== undefined).length;
  if (given === 0) return layout;
  if (given > 1) throw usage('give the schema with one of --app DIR|ZIP or --config-url URL');
  const model: DocumentModel =
    options.model ??
    (options.app !== undefined
      ? await modelFromPackage(options.app)
      : await modelFromConfigServer({ ...options.configTarget, configUrl: options.configUrl! }));
  const name = options.documentType ?? (model.types.size === 1 ? [...model.types.keys()][0] : undefined);
  if (name === undefined)
    throw usage(
      `the schema has ${model.types.size} document types (${[...model.types.keys()].join(', ')}): visit one (namespace/type) to write its columns`,
    );
  const type = model.types.get(name);
  if (type === undefined)
    throw usage(`the schema has no document type '${name}' (it has ${[...model.types.keys()].join(', ')})`);
  return { ...layout, columns: columnsOfDocumentType(type) };
}

/**
 * A resumed Parquet export with `outputDir`: a slice is kept when every chain of it finished and its file is
 * there; any other slice is forgotten in the checkpoint read (its chains start again, its file is written anew).
 * Its unfinished file (`.partial`) is simply overwritten.
 */
export function forgetUnfinishedSlices(
  previous: VisitCheckpoint,
  chains: readonly ChainSpec[],
  pathOf: (slice: number) => string | undefined,
): RestoredOutputs {
  const bySlice = new Map<number, string[]>();
  for (const c of chains) bySlice.set(c.sliceId, [...(bySlice.get(c.sliceId) ?? []), c.key]);
  for (const [slice, keys] of bySlice) {
    const path = pathOf(slice);
    const kept = keys.every((k) => previous.slices[k]?.finished === true) && path !== undefined && existsSync(path);
    if (!kept) for (const k of keys) delete previous.slices[k];
  }
  return { lengths: {}, fresh: new Set() };
}

/** The column names of a CSV file being continued (its first line); undefined when it is empty or missing. */
export function csvHeaderOf(path: string): string[] | undefined {
  let head: Buffer;
  try {
    const fd = openSync(path, 'r');
    try {
      const buf = Buffer.alloc(1 << 16);
      head = buf.subarray(0, readSync(fd, buf, 0, buf.length, 0));
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
  if (path.endsWith('.gz') && head.length > 0) head = gunzipSync(head, { finishFlush: zlibConstants.Z_SYNC_FLUSH });
  const end = head.indexOf(0x0a);
  if (end <= 0) return undefined;
  // Column names are field names (identifiers) and `id`: never quoted.
  return head.toString('utf8', 0, end).split(',');
}

function usage(message: string): VespaBulkError {
  return new VespaBulkError('VB_USAGE', message);
}
