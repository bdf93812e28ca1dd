/** Exporting: `exportDocuments` and its options, the entry of this folder (the rest of it is how one export runs). */
import { Export } from './export-run.js';
import type { ExportOptions, ExportSummary } from './export-options.js';

export type { ExportOptions, ExportResumed, ExportSummary } from './export-options.js';

/** Visits and writes the documents to stdout, a file or a file per slice; resolves with the summary. */
export async function exportDocuments(options: ExportOptions): Promise<ExportSummary> {
  return (await Export.prepare(options)).run();
}
