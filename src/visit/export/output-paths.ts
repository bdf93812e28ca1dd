import { prepareOutputFile, prepareOutputFolder } from '../../fs/output-file.js';
import type { ExportOptions } from './export-options.js';

/** How the paths of an export are named in a refusal: the options' names, or a caller's (the CLI's flags). */
export interface ExportPathNames {
  output: string;
  outputDir: string;
  checkpoint: string;
}

const optionNames: ExportPathNames = { output: 'output', outputDir: 'outputDir folder', checkpoint: 'checkpoint' };

/**
 * Every file and folder an export will write, made ready before its first request (see `prepareOutputFile`): a
 * missing folder made, a path that cannot be written refused (VB_USAGE). Found at the first write instead, the
 * fault would come after documents were visited (a checkpoint's folder: after they were written, with nothing
 * saved to resume them from).
 */
export function prepareExportPaths(
  options: Pick<ExportOptions, 'output' | 'outputDir' | 'checkpoint'>,
  names: ExportPathNames = optionNames,
): void {
  if (options.output !== undefined && options.output !== '-') prepareOutputFile(options.output, names.output);
  if (options.outputDir !== undefined) prepareOutputFolder(options.outputDir, names.outputDir);
  if (options.checkpoint !== undefined) prepareOutputFile(options.checkpoint, names.checkpoint);
}
