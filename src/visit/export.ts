import { Export } from './export/export-run.js';
import type { ExportOptions, ExportSummary } from './export/export-options.js';

export type { ExportOptions, ExportResumed, ExportSummary } from './export/export-options.js';

/** Visits and writes the documents to stdout, a file or a file per slice; resolves with the summary. */
export async function exportDocuments(options: ExportOptions): Promise<ExportSummary> {
  return (await Export.prepare(options)).run();
}
