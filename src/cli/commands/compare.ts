import type { AnyCommand } from '../command.js';
import { listedCommand } from '../command-list.js';
import type { Argv, CommandModule } from 'yargs';
import { compare } from '../../compare/compare.js';
import { securityHeaders, transportSecurity } from '../../http/tls.js';
import { parseDocumentSpec } from '../../visit/query.js';
import { VespaBulkError } from '../../core/errors.js';
import type { CompareClusterSide, CompareProgress, CompareSide } from '../../compare/options.js';
import { repeatable } from '../repeatable.js';
import { securityFromArgs, withSecurityOptions, type SecurityArgs } from '../security-options.js';
import { parseHeaderFlags } from '../header-flags.js';
import { withFlagNames } from '../option-flags.js';
import { ProgressLine, rateMeter } from '../progress.js';
import type { ProgressSnapshot } from '../progress-format.js';
import { stopOnSignal } from '../stop-on-signal.js';
import { exitCodeOfSignal } from '../exit-codes.js';
import { compareSummaryJson, writeSummary } from '../summary-names.js';

/** `compare A B`: each side a cluster (an http(s) URL) or an export (a file or a directory); flags into options, the summary onto stdout. */

interface CompareArgs extends SecurityArgs {
  a: string;
  b: string;
  document?: string;
  selection?: string;
  cluster?: string;
  'bucket-space'?: string;
  'field-set'?: string;
  slices?: number;
  timeout?: string;
  'max-retries': number;
  header?: string[];
  'a-header'?: string[];
  'b-header'?: string[];
  diff?: string;
  partitions?: number;
  'temp-dir'?: string;
  examples: number;
  quiet: boolean;
  app?: string;
}

const compareFlags: Record<string, string> = {
  'a.files': 'A',
  'b.files': 'B',
  tempDir: '--temp-dir',
  diff: '--diff',
  partitions: '--partitions',
  examples: '--examples',
};

/** A side: an http(s) URL is a cluster, anything else an export's file or directory. */
function sideOf(args: CompareArgs, name: 'a' | 'b'): CompareSide {
  const given = args[name];
  if (!/^https?:\/\//i.test(given)) return { files: given, ...(args.app !== undefined && { rows: { app: args.app } }) };
  const security = securityFromArgs(args, {
    ...parseHeaderFlags(args.header),
    ...parseHeaderFlags(args[`${name}-header`]),
  });
  const side: CompareClusterSide = {
    endpoint: given,
    headers: securityHeaders(security),
    ...transportSecurity(security),
    ...parseDocumentSpec(args.document),
    ...(args.selection !== undefined && { selection: args.selection }),
    ...(args.cluster !== undefined && { cluster: args.cluster }),
    ...(args['bucket-space'] !== undefined && { bucketSpace: args['bucket-space'] }),
    ...(args['field-set'] !== undefined && { fieldSet: args['field-set'] }),
    ...(args.slices !== undefined && { slices: args.slices }),
    ...(args.timeout !== undefined && { serviceTimeout: args.timeout }),
    retry: { maxRetries: args['max-retries'] },
  };
  return side;
}

const compareCommand: CommandModule<object, CompareArgs> = {
  ...listedCommand('compare'),
  builder: (y) =>
    withSecurityOptions(y)
      .positional('a', {
        type: 'string',
        demandOption: true,
        describe: 'Side A: an endpoint URL (a cluster) or an export file or directory',
      })
      .positional('b', { type: 'string', demandOption: true, describe: 'Side B, the same' })
      .positional('document', {
        type: 'string',
        describe: '<namespace>/<document-type> of the clusters; omit for the whole cluster',
      })
      .option('selection', {
        alias: 's',
        type: 'string',
        describe: "Document selection on both clusters, e.g. 'music.year > 2000'",
      })
      .option('cluster', {
        alias: 'content-cluster',
        type: 'string',
        describe: 'Content cluster of both clusters (found when not given)',
      })
      .option('bucket-space', {
        type: 'string',
        choices: ['default', 'global'],
        describe: 'Bucket space of a whole-cluster visit',
      })
      .option('field-set', { type: 'string', describe: 'Fields compared: [document] (default), <type>:f1,f2' })
      .option('slices', { type: 'number', describe: "Split each cluster's visit in N slices (default: as visit)" })
      .option('timeout', { type: 'string', describe: 'Server-side timeout of each visit request, e.g. 60s' })
      .option('max-retries', {
        type: 'number',
        default: 10,
        describe: 'Failed visit requests in a row before giving up',
      })
      .option('header', repeatable("Request header 'Name: value' for both clusters (repeatable)"))
      .option('a-header', repeatable('Request header for cluster A only (repeatable)'))
      .option('b-header', repeatable('Request header for cluster B only (repeatable)'))
      .option('diff', {
        type: 'string',
        describe:
          'Write every difference to FILE (JSONL: {"id","side"} for a document on one side only, {"id","field","a","b"} for a field that differs)',
      })
      .option('partitions', {
        type: 'number',
        describe:
          'Parts the sides are split into (by id) and compared one at a time; more for less memory (default 256)',
      })
      .option('temp-dir', {
        type: 'string',
        describe: "Directory for the spill files, about the size of both corpora (default: the OS's temp dir)",
      })
      .option('examples', {
        type: 'number',
        default: 10,
        describe: 'Ids of each kind of difference listed in the summary',
      })
      .option('app', {
        type: 'string',
        describe:
          'Application package (DIR|ZIP) whose schema types the cells of CSV, TSV and Parquet exports (without it CSV cells are text)',
      })
      .option('quiet', { alias: 'q', type: 'boolean', default: false, describe: 'No progress on stderr' })
      .example('$0 compare http://old:8080 http://new:8080 music/song', 'Compare one document type of two clusters')
      .example(
        '$0 compare backup/ http://new:8080 music/song --diff diff.jsonl',
        'Compare an export (visit --output-dir backup/) with a cluster',
      )
      .epilog(
        'Exit codes: 0 the sides are equal, 1 they differ (or a side could not be read whole), 2 bad usage, 130/143 stopped by a signal.',
      ) as unknown as Argv<CompareArgs>,
  handler: async (args) => {
    const a = sideOf(args, 'a');
    const b = sideOf(args, 'b');
    const controller = new AbortController();
    const stop = stopOnSignal(controller, { message: 'vespa-bulk: stopping (again to quit at once)' });
    let latest: CompareProgress | undefined;
    let over = false;
    const started = performance.now();
    const docsRate = rateMeter();
    const progress = new ProgressLine(
      () => {
        const seconds = (performance.now() - started) / 1000;
        const done = latest === undefined ? 0 : latest.read.a + latest.read.b;
        // Over is done, even when a signal stopped it.
        let state: ProgressSnapshot['state'] = 'running';
        if (over) state = 'done';
        else if (stop.signalled !== undefined) state = 'stopping';
        return {
          label: latest?.phase === 'comparing' ? 'compare (comparing)' : 'compare (reading)',
          state,
          seconds,
          done,
          unit: 'docs',
          rate: docsRate(done, seconds, over),
          ...(latest?.phase === 'comparing' && { percent: (100 * latest.compared) / latest.partitions }),
        };
      },
      { enabled: !args.quiet },
    );
    try {
      if (args.examples < 0) throw new VespaBulkError('VB_USAGE', '--examples must be 0 or more');
      const summary = await withFlagNames(compareFlags, () =>
        compare({
          a,
          b,
          ...(args.diff !== undefined && { diff: args.diff }),
          ...(args.partitions !== undefined && { partitions: args.partitions }),
          ...(args['temp-dir'] !== undefined && { tempDir: args['temp-dir'] }),
          examples: args.examples,
          signal: controller.signal,
          onProgress: (p) => (latest = p),
        }),
      );
      over = true;
      progress.stop();
      writeSummary(compareSummaryJson(summary));
      if (!summary.equal) process.exitCode = 1;
    } catch (err) {
      if (stop.signalled !== undefined) {
        process.exitCode = exitCodeOfSignal(stop.signalled);
        return;
      }
      throw err;
    } finally {
      progress.stop(false);
      stop.release();
    }
  },
};

export const commands: AnyCommand[] = [compareCommand];
