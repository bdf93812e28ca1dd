import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { VespaBulkError } from '../core/errors.js';
import { readSources } from '../feed/source.js';
import { parseOperation } from '../document/operation.js';
import { topLevelValue } from '../core/json-scan.js';
import { visit } from '../visit/visit.js';
import { discoverContentClusters } from '../visit/discover-cluster.js';
import type { VisitOptions } from '../visit/options.js';
import type { VisitReport } from '../visit/visitor.js';
import { isExportSide, type CompareClusterSide, type CompareExportSide, type CompareSide } from './options.js';

/**
 * The readers of the two kinds of side. Each hands every document it reads (`id`, the bytes of its `fields`) or
 * remove (`null`) to `add`, in the order read; neither keeps documents. A cluster is visited with the visitor's
 * guarantees (sliced, every document once, retries); an export is read as `vespa-bulk feed` reads its input.
 */

/** Where a side's documents go. */
export type RecordSink = (id: string, fields: Buffer | null) => Promise<void> | void;

/** What was read of a side: its description and, for a cluster, the visit's report. */
export interface SideRead {
  /** The endpoint, or the files read. */
  source: string;
  visit?: VisitReport;
}

const emptyFields = Buffer.from('{}');

/** Reads one side into `add`. */
export async function readSide(side: CompareSide, add: RecordSink, signal: AbortSignal): Promise<SideRead> {
  return isExportSide(side) ? readExport(side, add, signal) : readCluster(side, add, signal);
}

async function readCluster(side: CompareClusterSide, add: RecordSink, signal: AbortSignal): Promise<SideRead> {
  const options: VisitOptions = { ...side, signal };
  if (
    options.documentType === undefined &&
    options.cluster === undefined &&
    (options.clusters === undefined || options.clusters.length === 0)
  ) {
    // The whole cluster: each content cluster, as `vespa-bulk visit` visits them.
    const { endpoint, headers, tls, protocol, proxy, proxyTls } = options;
    options.clusters = await discoverContentClusters({
      endpoint,
      signal,
      ...(headers && { headers }),
      ...(tls && { tls }),
      ...(proxy !== undefined && { proxy }),
      ...(proxyTls && { proxyTls }),
      ...(protocol && { protocol }),
    });
  }
  const documents = visit(options);
  for await (const d of documents) {
    if (d.kind === 'remove') continue;
    const line = d.toFeedLine();
    const at = topLevelValue(line, 0, line.length, 'fields');
    const pending = add(d.id, at === undefined ? emptyFields : line.subarray(at.start, at.end));
    if (pending !== undefined) await pending;
  }
  return { source: side.endpoint, visit: await documents.report };
}

/** Data files as `vespa-bulk visit --output-dir` and the feed's inputs name them; others in a directory are left alone. */
const dataFile = /\.(?:jsonl|ndjson|json|csv|tsv|parquet)(?:\.(?:gz|zst))?$/i;

/** The paths of an export side as given: files and directories. */
function givenFiles(side: CompareExportSide): string[] {
  return typeof side.files === 'string' ? [side.files] : [...side.files];
}

/** The files of an export side: files as given, and the data files of each directory (sorted by name). */
export function exportFiles(side: CompareExportSide): string[] {
  return givenFiles(side).flatMap((path) => {
    let isDirectory: boolean;
    try {
      isDirectory = statSync(path).isDirectory();
    } catch (err) {
      throw new VespaBulkError('VB_USAGE', `cannot read '${path}': ${(err as Error).message}`, { cause: err });
    }
    if (!isDirectory) return [path];
    const names = readdirSync(path, { withFileTypes: true })
      .filter((e) => e.isFile() && !e.name.startsWith('.') && dataFile.test(e.name))
      .map((e) => e.name)
      .sort();
    if (names.length === 0)
      throw new VespaBulkError('VB_USAGE', `'${path}' holds no export files (.jsonl, .json, .gz...)`);
    return names.map((n) => join(path, n));
  });
}

async function readExport(side: CompareExportSide, add: RecordSink, signal: AbortSignal): Promise<SideRead> {
  const files = exportFiles(side);
  for await (const batch of readSources(files, side.rows !== undefined ? { rows: side.rows } : {})) {
    // Stopped (or the other side failed): what was read is of no use.
    if (signal.aborted) break;
    for (const item of batch.items) {
      const place = { file: batch.name, line: item.line };
      // A table row that did not become a document: its bytes are its cells, not an operation to read.
      if (item.error !== undefined)
        throw new VespaBulkError(item.error.code, item.error.message, { place, cause: item.error });
      let op;
      try {
        op = parseOperation(item.bytes);
      } catch (err) {
        if (err instanceof VespaBulkError) throw new VespaBulkError(err.code, err.message, { place, cause: err });
        throw err;
      }
      if (op.kind === 'update') {
        throw new VespaBulkError(
          'VB_BAD_OPERATION',
          'an update in an export: compare reads documents (puts) and removes only',
          { place: { ...place, documentId: op.id } },
        );
      }
      const pending = add(op.id, op.kind === 'remove' ? null : (op.fields ?? emptyFields));
      if (pending !== undefined) await pending;
    }
  }
  // As given: a directory of 256 slice files is named once, not file by file.
  return { source: givenFiles(side).join(', ') };
}
