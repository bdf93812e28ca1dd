/** Exporting: `exportDocuments` and its options, the entry of this folder (the rest of it is how one export runs). */
import { Export } from './export-run.js';
import type { ExportOptions, ExportSummary } from './export-options.js';

export type { ExportOptions, ExportResumed, ExportSummary } from './export-options.js';

/**
 * Visits and writes the documents to stdout, a file or a file per slice; resolves with the summary.
 * @example
 * ```ts
 * import { exportDocuments } from 'vespa-bulk';
 *
 * const summary = await exportDocuments({
 *   endpoint: 'http://127.0.0.1:8080', cluster: 'content', namespace: 'mynamespace', documentType: 'music',
 *   output: 'music.jsonl.gz', checkpoint: 'music.ckpt', // run it again after a stop: it goes on from the checkpoint
 * });
 * console.log(summary.documents);
 * ```
 */
export async function exportDocuments(options: ExportOptions): Promise<ExportSummary> {
  return (await Export.prepare(options)).run();
}
