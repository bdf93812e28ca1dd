import type { Argv, CommandModule } from 'yargs';
import { listedCommand } from '../command-list.js';
import { VespaBulkError } from '../../core/errors.js';
import { writeFileAtomically } from '../../fs/atomic-write.js';
import { renderReport } from '../../report/html.js';
import { mergeRuns } from '../../report/merge.js';
import { readStatsFile } from '../../report/stats-file.js';
import { exitCodesEpilog } from '../exit-codes.js';

/** `vespa-bulk report A.jsonl B.jsonl -o r.html`: one report from the stats files of one or more shards. */
interface ReportArgs {
  files: string[];
  output: string;
}

const epilog = `Each FILE is a --stats file of feed or visit. Several files are the shards of one run on several machines: their seconds are lined up by wall clock and added, latency histograms merged exactly (percentiles are of all shards together), summaries added with rates recomputed over the whole span, and each shard's parameters listed. Keep the machines' clocks in sync (NTP).

${exitCodesEpilog}`;

const reportCommand: CommandModule<object, ReportArgs> = {
  ...listedCommand('report'),
  builder: (y: Argv) =>
    y
      .positional('files', { type: 'string', array: true, describe: 'Stats files (JSONL) written with --stats' })
      .option('output', { alias: 'o', type: 'string', demandOption: true, describe: 'The HTML report to write' })
      .example('$0 report a.jsonl b.jsonl -o run.html', "One report from two machines' shards")
      .epilog(epilog) as unknown as Argv<ReportArgs>,
  handler: async (argv) => {
    if (argv.files.includes(argv.output))
      throw new VespaBulkError('VB_USAGE', `-o ${argv.output} is one of the stats files`);
    const run = mergeRuns(argv.files.map((f) => readStatsFile(f)));
    if (run.points.length === 0)
      throw new VespaBulkError('VB_USAGE', `${argv.files.join(', ')}: no per-second points to draw`);
    await writeFileAtomically(argv.output, renderReport(run));
    process.stderr.write(
      `vespa-bulk: report of ${run.params.length} run${run.params.length > 1 ? 's' : ''} (${run.points.length} s) written to ${argv.output}\n`,
    );
  },
};

/** The `report` command, for main.ts' list. */
export const commands = [reportCommand];
