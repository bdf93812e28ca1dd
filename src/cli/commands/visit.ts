import type { AnyCommand } from '../command.js';
import { listedCommand } from '../command-list.js';
import type { Argv, CommandModule } from 'yargs';
import { isVespaBulkError, VespaBulkError } from '../../core/errors.js';
import { authFailureHint, isAuthFailure, securityHeaders, transportSecurity } from '../../http/tls.js';
import type { ConnectionOptions } from '../../http/connection-options.js';
import { fieldsTextOf } from '../../document/single-operation.js';
import { tensorFormats, type TensorFormat } from '../../document/tensor-format.js';
import {
  bulkOperation,
  validateBulkOptions,
  type BulkKind,
  type BulkOptions,
  type BulkSummary,
} from '../../visit/bulk.js';
import { exportDocuments } from '../../visit/export/index.js';
import { OutputChangedError } from '../../visit/export/output-changed.js';
import { prepareExportPaths } from '../../visit/export/output-paths.js';
import { prepareOutputFile } from '../../fs/output-file.js';
import { migrationResumeHint, shellWord, visitResumeHint } from '../resume-hint.js';
import type { ExportResumed } from '../../visit/export/export-options.js';
import { outputFormats, type OutputFormat } from '../../sinks/output-format.js';
import { migrate } from '../../migrate/migrate.js';
import { defaultVisitSlices, type VisitMessage, type VisitOptions } from '../../visit/options.js';
import { discoverContentClusters } from '../../visit/discover-cluster.js';
import { bucketSpacesOf, checkVisitOptionValues, parseDocumentSpec, slicesOf } from '../../visit/query.js';
import { parseTimeRange } from '../../visit/time-range.js';
import type { VisitReport, VisitRun } from '../../visit/visitor.js';
import { repeatable } from '../repeatable.js';
import { securityFromArgs, withSecurityOptions, type SecurityArgs } from '../security-options.js';
import { connectionFromArgs, describeTargetOrigin, withTargetOptions, type TargetArgs } from '../target-options.js';
import { readSource, tensorFormatHelp } from './document.js';
import { reportFailuresFile } from './feed.js';
import { visitFlags, withFlagNames } from '../option-flags.js';
import { ProgressLine, rateMeter } from '../progress.js';
import { formatCount, type ProgressSnapshot } from '../progress-format.js';
import { red, yellow } from '../color.js';
import { waitIfAsked, withWaitOption, type WaitArgs } from '../wait-option.js';
import { exitCodeOfSignal, exitCodesEpilog } from '../exit-codes.js';
import { stopOnSignal } from '../stop-on-signal.js';
import { visitSampler } from '../../report/sample.js';
import { selectionModel } from '../selection-model.js';
import { checkSelection } from '../../visit/selection-check.js';
import { RunOutputs, withRunOutputOptions, type RunOutputArgs } from '../run-outputs.js';
import {
  endpointVia,
  protocolFromArgs,
  tellProtocolOnce,
  withProtocolOption,
  type ProtocolArgs,
} from '../transport-options.js';
import { bulkSummaryJson, exportSummaryJson, migrateSummaryJson, writeSummary } from '../summary-names.js';
import { defaultFailuresPath } from '../default-paths.js';
import { parseHeaderFlags } from '../header-flags.js';

/** `visit`, `update-where`, `delete-where` and `copy`: flags into options, results into output. */

interface CommonArgs extends SecurityArgs, TargetArgs, WaitArgs, ProtocolArgs {
  document?: string;
  selection?: string;
  cluster?: string;
  'bucket-space'?: string;
  from?: string;
  to?: string;
  timeout?: string;
  tracelevel?: number;
  header?: string[];
  'max-retries': number;
  quiet: boolean;
  app?: string;
  'config-url'?: string;
}

interface VisitArgs extends CommonArgs, RunOutputArgs {
  'field-set'?: string;
  'tensor-format'?: TensorFormat;
  'include-removes': boolean;
  'wanted-document-count'?: number;
  concurrency?: number;
  slices?: number;
  'slice-id'?: string[];
  stream: boolean;
  output?: string;
  'output-dir'?: string;
  gzip?: boolean;
  'direct-io'?: boolean;
  format: OutputFormat;
  'row-group-rows'?: number;
  transform?: string;
  shuffle?: boolean;
  'make-feed': boolean;
  checkpoint?: string;
  restart?: boolean;
  since?: string;
  'since-margin'?: number;
  workers?: number;
  continuation?: string;
  'to-endpoint'?: string;
  failures?: string;
  'to-ca'?: string;
  'to-cert'?: string;
  'to-key'?: string;
  'to-token'?: string;
  'to-header'?: string[];
  verify?: boolean;
  'verify-diff'?: string;
  verbose: boolean;
}

interface BulkArgs extends CommonArgs {
  update?: string;
  assign?: string[];
  'destination-cluster'?: string;
  'time-chunk'?: string;
  continuation?: string;
  'dry-run': boolean;
}

function commonOptions<T>(y: Argv<T>) {
  return withProtocolOption(withWaitOption(withTargetOptions(withSecurityOptions(y))))
    .positional('document', {
      type: 'string',
      describe: '<namespace>/<document-type>; omit to visit the whole cluster',
    })
    .option('selection', { alias: 's', type: 'string', describe: "Document selection, e.g. 'music.year > 2000'" })
    .option('app', {
      type: 'string',
      describe:
        'The application package (DIR or ZIP) whose schemas the selection is checked against (a field it lacks is refused, with the near name), and with --format parquet|csv the columns typed by',
    })
    .option('config-url', {
      type: 'string',
      describe:
        'The same from the application active on this config server (default with a selection and an endpoint on this machine: port 19071 there, when it answers)',
    })
    .option('cluster', {
      alias: 'content-cluster',
      type: 'string',
      describe: 'Content cluster (needed when there are several)',
    })
    .option('bucket-space', {
      type: 'string',
      choices: ['default', 'global'],
      describe: 'Bucket space (a visit without a document type goes through both unless this names one)',
    })
    .option('from', {
      type: 'string',
      describe:
        'Only documents changed at or after this time: epoch seconds, <n>ms or an ISO date (UTC unless a zone is given)',
    })
    .option('to', { type: 'string', describe: 'Only documents changed at or before this time (same forms as --from)' })
    .option('timeout', { type: 'string', describe: 'Server-side timeout of each request, e.g. 60s' })
    .option('tracelevel', { type: 'number', describe: 'Trace level 1-9; traces go to stderr' })
    .option('header', repeatable("Extra request header 'Name: value' (repeatable)"))
    .option('max-retries', {
      type: 'number',
      default: 10,
      describe: 'Failed requests in a row (429, 502, 503, 504, cut responses) before giving up',
    })
    .option('quiet', { alias: 'q', type: 'boolean', default: false, describe: 'No progress on stderr' });
}

/** How the commands here reach the service: the endpoint and the `ConnectionOptions` of VisitOptions and BulkOptions alike. */
type ServiceAccess = Pick<VisitOptions, 'endpoint'> & Omit<ConnectionOptions, 'transport'>;

/**
 * Endpoint (the target), request headers (--header, then the token), TLS options (--ca, --cert, --key) and the HTTP
 * (--protocol) from the flags, the environment and the official CLI's configuration; the HTTP spoken is said once on
 * stderr through `log` (not with --quiet).
 */
function connectionOf(args: CommonArgs, log: (line: string) => void): ServiceAccess {
  const connection = connectionFromArgs(args, parseHeaderFlags(args.header));
  const note = describeTargetOrigin(connection);
  if (note !== undefined && !args.quiet) process.stderr.write(`vespa-bulk: ${note}\n`);
  const security = connection.security;
  const { protocol } = protocolFromArgs(args);
  return {
    endpoint: connection.url,
    headers: securityHeaders(security),
    ...transportSecurity(security),
    ...(protocol !== undefined && { protocol }),
    ...(!args.quiet && { onProtocol: tellProtocolOnce(endpointVia(connection.url, security.proxy), protocol, log) }),
  };
}

/**
 * The schema a selection is checked against (`--app`, `--config-url`, or the local config server's: see
 * `selectionModel`): given, it is the options' `model` (which also types a Parquet or CSV export's columns); guessed,
 * it checks the selection here and goes no further.
 */
async function useSchema(args: CommonArgs, options: VisitOptions | BulkOptions): Promise<void> {
  const known = await selectionModel({
    selection: args.selection,
    app: args.app,
    configUrl: args['config-url'],
    endpoint: options.endpoint,
  });
  if (known === undefined) return;
  if (known.guessed) checkSelection(args.selection, known.model.types);
  else options.model = known.model;
}

function selectionOf(
  args: CommonArgs,
): Pick<
  VisitOptions,
  'namespace' | 'documentType' | 'selection' | 'cluster' | 'bucketSpace' | 'fromTimestamp' | 'toTimestamp'
> {
  return {
    ...parseDocumentSpec(args.document),
    ...(args.selection !== undefined && { selection: args.selection }),
    ...(args.cluster !== undefined && { cluster: args.cluster }),
    ...(args['bucket-space'] !== undefined && { bucketSpace: args['bucket-space'] }),
    ...parseTimeRange(args.from, args.to),
  };
}

/**
 * A whole-cluster request (no document type) needs the content cluster, and the bulk operations need it on every
 * path (`always`). Without --cluster it is found as the official `vespa visit` finds it: from the service's answer
 * naming its clusters. One cluster is taken; several are each visited, as `vespa visit` does (client/go/internal/cli/cmd/visit.go
 * visitClusters); the bulk operations (`always`) work on one, which the user picks.
 */
async function discoverCluster(
  options: ServiceAccess & Pick<VisitOptions, 'documentType' | 'cluster' | 'clusters'>,
  quiet: boolean,
  always = false,
): Promise<void> {
  if (options.cluster !== undefined || (options.documentType !== undefined && !always)) return;
  let clusters: string[];
  try {
    const { endpoint, headers, tls, proxy, proxyTls, protocol, onProtocol } = options;
    clusters = await discoverContentClusters({
      endpoint,
      ...(headers && { headers }),
      ...(tls && { tls }),
      ...(proxy !== undefined && { proxy }),
      ...(proxyTls && { proxyTls }),
      ...(protocol && { protocol }),
      ...(onProtocol && { onProtocol }),
    });
  } catch (err) {
    if (isVespaBulkError(err, 'VB_TRANSPORT') || isVespaBulkError(err, 'VB_TIMEOUT')) {
      throw new VespaBulkError(
        err.code,
        `cannot reach ${options.endpoint} to find its content cluster: ${err.message} (check --target, or name the cluster with --cluster)`,
        { cause: err },
      );
    }
    throw err;
  }
  if (clusters.length > 1 && !always) {
    options.clusters = clusters;
    if (!quiet)
      process.stderr.write(`vespa-bulk: content clusters ${clusters.map((c) => `'${c}'`).join(', ')}: visiting each\n`);
    return;
  }
  if (clusters.length > 1) {
    throw new VespaBulkError(
      'VB_USAGE',
      `the service has several content clusters (${clusters.map((c) => `'${c}'`).join(', ')}): name one with --cluster`,
    );
  }
  options.cluster = clusters[0]!;
  if (!quiet) process.stderr.write(`vespa-bulk: content cluster '${options.cluster}' (the service's only one)\n`);
}

function parseSliceIds(values: string[] | undefined): number[] | undefined {
  if (values === undefined || values.length === 0) return undefined;
  const ids = values
    .flatMap((v) => v.split(','))
    .map((s) => s.trim())
    .filter((s) => s !== '');
  return ids.map((s) => {
    if (!/^\d+$/.test(s)) throw new VespaBulkError('VB_USAGE', `--slice-id '${s}': expected slice numbers, e.g. 0,2`);
    return Number(s);
  });
}

const checkpointHelp =
  "Save each slice's continuation in FILE as the export advances (after the documents it covers are written); running the same command again continues from it and appends to the output. " +
  'What may be repeated: nothing after a clean stop (end, failed slice, Ctrl-C): the file also lists the documents written after each saved token, and the rerun skips them. ' +
  'After a crash (kill -9), the documents of the last second or so before it (written after the last save) are written again. ' +
  'Once the export finished, running it again exports nothing and says so (--restart exports again); an output changed since the checkpoint (shorter, gone, or longer than a finished export left it) is refused (exit 2).';

const sinceHelp =
  'Export only what changed since an earlier export, removes included as {"remove":id}: FILE is that export\'s --checkpoint file or its summary JSON ' +
  '(stdout of an export to -o/--output-dir), or a time (epoch seconds, <n>ms, <n>us, ISO date). Every export records when it started (visit.started), so increments chain. ' +
  'Feed the full export, then each increment in order, to restore. Not with --from/--to.';

/** `--since`/`--since-margin` into the export's options; `--from`/`--to` set the range some other way. */
function sinceOptions(args: VisitArgs): { since?: string; sinceMarginMs?: number } {
  if (args.since === undefined) {
    if (args['since-margin'] !== undefined) throw new VespaBulkError('VB_USAGE', '--since-margin applies to --since');
    return {};
  }
  if (args['to-endpoint'] !== undefined)
    throw new VespaBulkError(
      'VB_USAGE',
      '--since is not supported with --to-endpoint: export the increment and feed it',
    );
  if (args.from !== undefined || args.to !== undefined)
    throw new VespaBulkError(
      'VB_USAGE',
      '--since starts the visit where the earlier export started: give --since or --from/--to, not both',
    );
  const margin = args['since-margin'];
  if (margin !== undefined && !(Number.isFinite(margin) && margin >= 0))
    throw new VespaBulkError('VB_USAGE', `--since-margin must be seconds >= 0, not ${margin}`);
  return { since: args.since, ...(margin !== undefined && { sinceMarginMs: margin * 1000 }) };
}

/**
 * `directIo` of the export: `--direct-io` as given, else off where the environment has `VESPA_BULK_DIRECT_IO=0`
 * (`1`, or nothing, leaves the library's default: on).
 */
export function directIoOption(
  flag: boolean | undefined,
  env: NodeJS.ProcessEnv = process.env,
): { directIo?: boolean } {
  if (flag !== undefined) return { directIo: flag };
  return env.VESPA_BULK_DIRECT_IO === '0' ? { directIo: false } : {};
}

/** How a message of the visit is shown on stderr, by its severity. */
const severityColor: Record<VisitMessage['severity'], (line: string) => string> = {
  error: red,
  warning: yellow,
  info: (line) => line,
};

const visitCommand: CommandModule<object, VisitArgs> = {
  ...listedCommand('visit'),
  builder: (y) =>
    withRunOutputOptions(commonOptions(y))
      .option('field-set', { type: 'string', describe: 'Fields to return: [all], [document], [id], <type>:f1,f2' })
      .option('tensor-format', { type: 'string', choices: tensorFormats, describe: tensorFormatHelp })
      .option('include-removes', {
        type: 'boolean',
        default: false,
        describe: 'Include tombstones of removed documents ({"remove":id})',
      })
      .option('wanted-document-count', {
        alias: 'chunk-count',
        type: 'number',
        describe: 'Documents per response (default: unbounded when streaming, 1000 with --no-stream)',
      })
      .option('concurrency', { type: 'number', describe: 'Server-side visitor concurrency per request' })
      .option('slices', {
        type: 'number',
        describe: `Split the corpus in N slices, all visited at once (default ${defaultVisitSlices}; 1: one chain of requests)`,
      })
      .option(
        'slice-id',
        repeatable('Visit only these slices (e.g. 0,2; repeatable): several machines split one export'),
      )
      .option('stream', {
        type: 'boolean',
        default: true,
        describe: 'Streamed responses (JSONL); --no-stream pages with continuations',
      })
      .option('output', { alias: 'o', type: 'string', describe: 'Write to FILE instead of stdout (.gz compresses)' })
      .option('output-dir', {
        type: 'string',
        describe:
          'Files in DIR: one per slice (slice-0000.jsonl, ...); a Parquet or CSV table without --checkpoint in files of up to 1,000,000 rows (part-0000.parquet, ...)',
      })
      .option('gzip', {
        type: 'boolean',
        describe: 'Compress the --output-dir files (slice-0000.jsonl.gz, ...); -o compresses by its .gz name',
      })
      .option('direct-io', {
        type: 'boolean',
        describe:
          'Write plain output files with O_DIRECT, sparing the page cache (default on unless VESPA_BULK_DIRECT_IO=0; --no-direct-io turns it off)',
      })
      .option('format', {
        type: 'string',
        choices: outputFormats,
        default: 'jsonl' as OutputFormat,
        describe:
          'jsonl: as received; feed: {"put"/"remove"} lines for vespa-bulk feed; json: one array; parquet, csv: a row per document (docs/export-formats.md)',
      })
      .option('row-group-rows', {
        type: 'number',
        describe:
          'With --format parquet|csv: rows per Parquet row group, and rows the columns are inferred from without a schema (default 10000)',
      })
      .option('make-feed', { type: 'boolean', default: false, describe: 'Same as --format feed' })
      .option('checkpoint', { type: 'string', describe: checkpointHelp })
      .option('restart', {
        type: 'boolean',
        describe:
          'With --checkpoint: start afresh, as if FILE did not exist (it is replaced at the first save, and the output written anew): to export again after a finished export, or after its output was changed',
      })
      .option('since', { type: 'string', describe: sinceHelp })
      .option('since-margin', {
        type: 'number',
        describe:
          'Seconds taken off the --since time for clock skew between this machine and the content nodes (default 60)',
      })
      .option('workers', {
        type: 'number',
        describe:
          'Worker threads that visit the slices and encode (and for a .gz output or --gzip compress) the documents (default 1: all in one thread; not with --format json)',
      })
      .option('continuation', {
        type: 'string',
        describe: 'Start from this token (reported for a failed slice); needs a single slice',
      })
      .option('to-endpoint', {
        alias: 'destination',
        type: 'string',
        describe:
          "Feed the documents into this endpoint instead of writing them (migration), with all the feeder's guarantees",
      })
      .option('failures', {
        type: 'string',
        describe:
          'With --to-endpoint: failure output of the feed (default: vespa-bulk-failures-<time>.jsonl when something fails)',
      })
      .option('to-header', repeatable("Header for --to-endpoint requests 'Name: value' (repeatable)"))
      .option('to-ca', { type: 'string', describe: 'CA certificate file (PEM) to trust for an https --to-endpoint' })
      .option('to-cert', { type: 'string', describe: 'Client certificate file (PEM) for --to-endpoint (mutual TLS)' })
      .option('to-key', { type: 'string', describe: 'Private key file (PEM) of --to-cert' })
      .option('transform', {
        type: 'string',
        describe:
          'ES module (FILE.mjs) whose default export maps each document, as {"put": id, "fields": {...}}, to what is written or fed: an operation, an array, or null to leave it out (docs/transform.md); not with --workers',
      })
      .option('shuffle', {
        type: 'boolean',
        describe:
          'With --to-endpoint: interleave the documents through a bounded buffer so the feed does not contend for one bucket at a time (default on; --no-shuffle)',
      })
      .option('to-token', {
        type: 'string',
        describe: 'Bearer token for --to-endpoint (the source credentials are never sent there)',
      })
      .option('verify', {
        type: 'boolean',
        describe:
          'With --to-endpoint: after the migration, compare the source with the destination (as vespa-bulk compare does) and exit 1 when they differ',
      })
      .option('verify-diff', {
        type: 'string',
        describe: 'With --verify: write the differences to FILE (JSONL, as compare --diff)',
      })
      .option('verbose', {
        alias: 'v',
        type: 'boolean',
        default: false,
        describe:
          'List every slice in the summary (documents, requests, retries, the token of an unfinished one) and every failed slice on stderr',
      })
      .example('$0 visit music/song --slices 4 -o songs.jsonl.gz', 'Export one type with four slices at once')
      .example('$0 visit music/song --slices 8 --slice-id 0,1,2,3', "This machine's half of an export split in two")
      .example('$0 visit music/song --make-feed --to-endpoint http://other:8080', 'Copy a type to another cluster')
      .epilog(exitCodesEpilog) as unknown as Argv<VisitArgs>,
  handler: async (args) => {
    const format: OutputFormat = args['make-feed'] ? 'feed' : args.format;
    if ((args.verify !== undefined || args['verify-diff'] !== undefined) && args['to-endpoint'] === undefined)
      throw new VespaBulkError('VB_USAGE', '--verify needs --to-endpoint (it checks a migration)');
    const sliceIds = parseSliceIds(args['slice-id']);
    const since = sinceOptions(args);
    let progress: ProgressLine | undefined;
    // Once the progress line runs, lines go through it so they never land in the middle of it.
    const log = (line: string): void =>
      progress !== undefined ? progress.log(line) : void process.stderr.write(`${line}\n`);
    const options: VisitOptions = {
      ...connectionOf(args, log),
      ...selectionOf(args),
      ...(args['field-set'] !== undefined && { fieldSet: args['field-set'] }),
      ...(args['tensor-format'] !== undefined && { tensorFormat: args['tensor-format'] }),
      // --since carries the removes itself (and refuses an explicit false).
      ...(args['include-removes'] && { includeRemoves: true }),
      ...(args['wanted-document-count'] !== undefined && { wantedDocumentCount: args['wanted-document-count'] }),
      ...(args.concurrency !== undefined && { concurrency: args.concurrency }),
      ...(args.timeout !== undefined && { serviceTimeout: args.timeout }),
      ...(args.tracelevel !== undefined && { tracelevel: args.tracelevel }),
      ...(args.slices !== undefined && { slices: args.slices }),
      ...(sliceIds !== undefined && { sliceIds }),
      stream: args.stream,
      retry: { maxRetries: args['max-retries'] },
    };
    await useSchema(args, options);
    if (args.continuation !== undefined) {
      // A token alone continues a visit of one chain (as `vespa visit --continuation` does): no slicing.
      if (args.slices === undefined && sliceIds === undefined) options.slices = 1;
      const ids = sliceIds ?? (options.slices === 1 ? [0] : []);
      if (ids.length !== 1)
        throw new VespaBulkError(
          'VB_USAGE',
          '--continuation applies to one slice: give --slice-id with one id (or no --slices)',
        );
      // A token belongs to one bucket space; the whole cluster is otherwise visited in both.
      if (bucketSpacesOf(options).length !== 1)
        throw new VespaBulkError(
          'VB_USAGE',
          "--continuation of a whole-cluster visit needs --bucket-space (the failed slice's report says which)",
        );
      options.resumeFrom = { [ids[0]!]: { continuation: args.continuation } };
    }
    withFlagNames(visitFlags, () => checkVisitOptionValues(options));
    // Before the signal handlers are set (a refusal here leaves nothing to release) and before the first request.
    if (args['to-endpoint'] !== undefined) {
      if (args.checkpoint !== undefined)
        throw new VespaBulkError(
          'VB_USAGE',
          '--checkpoint is not supported with --to-endpoint (the feeder keeps its own)',
        );
      if (args['verify-diff'] !== undefined && args.verify !== true)
        throw new VespaBulkError('VB_USAGE', '--verify-diff needs --verify');
      if (args.output !== undefined || args['output-dir'] !== undefined)
        throw new VespaBulkError('VB_USAGE', 'give --to-endpoint or --output/--output-dir, not both');
      if (args.restart === true) throw new VespaBulkError('VB_USAGE', '--restart applies to --checkpoint');
      for (const [flag, path] of [
        ['--failures', args.failures],
        ['--verify-diff', args['verify-diff']],
      ] as const)
        if (path !== undefined) prepareOutputFile(path, `${flag} file`);
    } else {
      if (args.restart === true && args.checkpoint === undefined)
        throw new VespaBulkError('VB_USAGE', '--restart applies to --checkpoint (it starts an export with one afresh)');
      // Every path the export writes, before the first request: a missing folder made, or the run refused.
      prepareExportPaths(
        { output: args.output, outputDir: args['output-dir'], checkpoint: args.checkpoint },
        { output: '-o file', outputDir: '--output-dir folder', checkpoint: '--checkpoint file' },
      );
    }
    const controller = new AbortController();
    options.signal = controller.signal;
    const stop = stopOnSignal(controller, { message: 'vespa-bulk: stopping (again to quit at once)' });
    const toStdout =
      args['to-endpoint'] === undefined &&
      args['output-dir'] === undefined &&
      (args.output === undefined || args.output === '-');
    const messages = new Set<string>();
    options.onMessage = (m) => {
      if (args.quiet && m.severity === 'info') return;
      const line = `vespa-bulk: ${m.text}`;
      if (m.severity !== 'info' || args.tracelevel) process.stderr.write(`${severityColor[m.severity](line)}\n`);
      else if (!messages.has(m.text)) messages.add(m.text);
    };
    let state: ProgressSnapshot['state'] = 'running';
    const outputs = await RunOutputs.open(args, {
      command: 'visit',
      target: options.endpoint,
      argv: args as unknown as Record<string, unknown>,
    });
    let recorded: Record<string, unknown> | undefined;
    // A resumed export counts the documents of the runs before it too.
    let before = 0;
    // The checkpoint is of a finished export: nothing to visit, no progress to draw.
    let finishedBefore = false;
    const onResume = (resumed: ExportResumed): void => {
      before = resumed.documents;
      finishedBefore = resumed.finished;
      if (resumed.finished) {
        const output = toStdout ? 'nothing was written' : outputsLeft(args);
        // Said with --quiet too: without it, a run that did nothing would look like one that exported nothing.
        log(
          `vespa-bulk: ${args.checkpoint} is of a finished export (${formatCount(resumed.documents)} ${resumed.documents === 1 ? 'document' : 'documents'}, ${formatCount(resumed.finishedChains)} of ${formatCount(resumed.chains)} slices finished): nothing was exported this time, and ${output}. To export again, add --restart (or remove ${shellWord(args.checkpoint!)})`,
        );
        return;
      }
      if (!args.quiet)
        log(
          `vespa-bulk: resumed from ${args.checkpoint}: ${formatCount(resumed.documents)} ${resumed.documents === 1 ? 'document' : 'documents'} done before, ${formatCount(resumed.finishedChains)} of ${formatCount(resumed.chains)} slices finished`,
        );
    };
    const startProgress = (run: VisitRun): void => {
      outputs.attach(visitSampler(run));
      if (finishedBefore) return;
      progress = new ProgressLine(
        visitProgressOf(
          run,
          performance.now(),
          () => (stop.signalled !== undefined && state === 'running' ? 'stopping' : state),
          before,
        ),
        { enabled: !args.quiet },
      );
    };
    const detail = { slices: args.verbose };
    try {
      await waitIfAsked(args, options.endpoint, options, controller.signal);
      await discoverCluster(options, args.quiet);
      if (args['to-endpoint'] !== undefined) {
        // The destination's own credentials only: an empty environment keeps the source's variables out.
        const destination = securityFromArgs(
          {
            ca: args['to-ca'],
            cert: args['to-cert'],
            key: args['to-key'],
            token: args['to-token'],
            proxy: args.proxy,
            'proxy-ca': args['proxy-ca'],
          },
          parseHeaderFlags(args['to-header']),
          {},
        );
        const summary = await withFlagNames(visitFlags, () =>
          migrate({
            ...options,
            destination: args['to-endpoint']!,
            destinationHeaders: securityHeaders(destination),
            feed: {
              ...transportSecurity(destination),
              ...(!args.quiet && {
                onProtocol: tellProtocolOnce(
                  endpointVia(args['to-endpoint']!, destination.proxy),
                  options.protocol,
                  log,
                ),
              }),
              // The library writes no file it was not asked for; this default is the CLI's.
              failures: args.failures ?? defaultFailuresPath(),
              ...(args.transform !== undefined && { transform: args.transform }),
              ...(args.shuffle !== undefined && { shuffle: args.shuffle }),
            },
            onStart: startProgress,
            ...(args.verify === true && {
              verify: args['verify-diff'] !== undefined ? { diff: args['verify-diff'] } : true,
            }),
          }),
        );
        // Stopped by a signal, by the feed (the destination refused or did not answer) or by the visit failing: the
        // line says so, not `done`.
        const visitEnded = 'ok' in summary.visit && summary.visit.ok;
        state = stop.signalled !== undefined || summary.stopped !== undefined || !visitEnded ? 'stopped' : 'done';
        progress?.stop();
        recorded = migrateSummaryJson(summary, { slices: true });
        if (summary.verify?.equal === false)
          process.stderr.write(
            `${red(`vespa-bulk: the destination differs from the source: ${summary.verify.onlyInA} missing, ${summary.verify.onlyInB} extra, ${summary.verify.differing} differing`)}\n`,
          );
        writeSummary(migrateSummaryJson(summary, detail));
        if (!('error' in summary.visit)) reportFailures(summary.visit, undefined, slicesOf(options), args.verbose);
        if (summary.failuresFile !== undefined) reportFailuresFile(summary.feed.errors, summary.failuresFile);
        if (summary.stopped === 'unauthorized')
          process.stderr.write(
            'vespa-bulk: migration stopped: the destination refused the credentials: check --to-token (or --to-cert/--to-key)\n',
          );
        if (summary.stopped === 'unreachable')
          process.stderr.write(
            `${red(`vespa-bulk: migration stopped: nothing answers at the destination ${args['to-endpoint']}: check --to-endpoint`)}\n`,
          );
        if (stop.signalled !== undefined)
          process.stderr.write(`${red(`vespa-bulk: migration interrupted: ${migrationResumeHint()}`)}\n`);
        if (!summary.ok) process.exitCode = stop.signalled !== undefined ? exitCodeOfSignal(stop.signalled) : 1;
        return;
      }
      const summary = await withFlagNames(visitFlags, () =>
        exportDocuments({
          ...options,
          format,
          ...(args.output !== undefined && { output: args.output }),
          ...(args['output-dir'] !== undefined && { outputDir: args['output-dir'] }),
          ...(args.gzip !== undefined && { gzip: args.gzip }),
          ...directIoOption(args['direct-io']),
          ...(args.checkpoint !== undefined && { checkpoint: args.checkpoint }),
          ...(args.restart === true && { restart: true }),
          ...since,
          ...(args.workers !== undefined && { workers: args.workers }),
          ...(args['row-group-rows'] !== undefined && { rowGroupRows: args['row-group-rows'] }),
          ...(args.transform !== undefined && { transform: args.transform }),
          onStart: startProgress,
          onResume,
        }).catch((err: unknown) => {
          // The way to start afresh, in the flags of this command.
          if (err instanceof OutputChangedError)
            throw new VespaBulkError(
              'VB_USAGE',
              // The message names the file: a place would name it twice.
              err.messageWith(`add --restart, or remove ${shellWord(err.checkpoint)}`),
              { cause: err },
            );
          throw err;
        }),
      );
      state = stop.signalled !== undefined ? 'stopped' : 'done';
      progress?.stop();
      // The recording (--stats, --report) keeps every slice: the report is where the detail is read.
      recorded = exportSummaryJson(summary, { slices: true });
      writeSummary(exportSummaryJson(summary, detail), { dataOnStdout: toStdout });
      reportFailures(summary, args.checkpoint, slicesOf(options), args.verbose);
      if (stop.signalled !== undefined && !summary.ok)
        process.stderr.write(
          `${red(`vespa-bulk: visit interrupted: ${visitResumeHint(args.checkpoint, toStdout)}`)}\n`,
        );
      if (stop.signalled !== undefined) process.exitCode = exitCodeOfSignal(stop.signalled);
      else if (!summary.ok) process.exitCode = 1;
    } finally {
      progress?.stop(false);
      await outputs.finish(recorded, args.quiet);
      stop.release();
    }
  },
};

/** The files of an export to files that a run left alone, for a sentence. */
function outputsLeft(args: Pick<VisitArgs, 'output' | 'output-dir'>): string {
  if (args['output-dir'] !== undefined) return `the files in ${args['output-dir']} were left as they are`;
  return `${args.output} was left as it is`;
}

function visitProgressOf(
  run: VisitRun,
  started: number,
  state: () => ProgressSnapshot['state'],
  before: number,
): () => ProgressSnapshot {
  const docsRate = rateMeter();
  const bytesRate = rateMeter();
  return () => {
    const seconds = (performance.now() - started) / 1000;
    const docs = run.documents();
    const percent = run.percentFinished();
    const now = state();
    // The last line of an ended visit: rates over the whole run, and nothing in flight.
    const ended = now === 'done' || now === 'stopped';
    return {
      label: 'visit',
      state: now,
      seconds,
      done: before + docs,
      unit: 'docs',
      percent,
      rate: docsRate(docs, seconds, ended),
      mbPerSecond: bytesRate(run.bytes(), seconds, ended) / 1e6,
      slices: { finished: run.slices.filter((s) => s.status === 'finished').length, total: run.slices.length },
      // Slices are what fails in a visit: a failed one is reported with its token.
      failed: run.slices.filter((s) => s.status === 'failed').length,
      retried: run.slices.reduce((n, s) => n + s.retries, 0),
      ...(!ended && { inflight: { now: run.inflight().running, limit: run.inflight().limit } }),
      ...(percent > 0.5 && percent < 100 && { etaSeconds: (seconds * (100 - percent)) / percent }),
    };
  };
}

/** Failed slices with a token of their own shown one by one, unless --verbose asks for all of them. */
const shownFailedSlices = 5;

/**
 * Each failed slice on stderr: why, and what to run to continue it. Slices that failed alike with the same remedy
 * (a service refusing every request fails all 256 so) are one line with their count.
 */
function reportFailures(summary: VisitReport, checkpoint: string | undefined, slices: number, all: boolean): void {
  type Slice = VisitReport['slices'][number];
  const groups = new Map<string, { line: ReturnType<typeof failedSliceLine>; slices: Slice[] }>();
  let own = 0;
  for (const s of summary.slices) {
    if (s.status !== 'failed') continue;
    const line = failedSliceLine(s, checkpoint, slices);
    if (all || line.perSlice) {
      if (all || own++ < shownFailedSlices)
        process.stderr.write(`${red(`vespa-bulk: ${line.which} failed: ${line.why}; ${line.how}`)}\n`);
      continue;
    }
    const key = `${line.why}\u0000${line.how}`;
    const group = groups.get(key) ?? { line, slices: [] };
    group.slices.push(s);
    groups.set(key, group);
  }
  for (const { line, slices: alike } of groups.values()) {
    const which = alike.length === 1 ? line.which : `${alike.length} slices${whereFailed(alike)}`;
    process.stderr.write(`${red(`vespa-bulk: ${which} failed: ${line.why}; ${line.how}`)}\n`);
  }
  if (own > shownFailedSlices)
    process.stderr.write(
      `${red(`vespa-bulk: ${own - shownFailedSlices} more slices failed, each with its token: --verbose lists them all`)}\n`,
    );
}

/** Where slices that failed alike were: their clusters and bucket spaces, e.g. ` (default and global bucket spaces)`. */
function whereFailed(slices: VisitReport['slices']): string {
  const names = (values: Array<string | undefined>): string[] =>
    [...new Set(values.filter((v) => v !== undefined))].sort();
  const clusters = names(slices.map((s) => s.cluster));
  const spaces = names(slices.map((s) => s.bucketSpace));
  const parts = [
    ...(clusters.length > 0
      ? [`cluster${clusters.length > 1 ? 's' : ''} ${clusters.map((c) => `'${c}'`).join(' and ')}`]
      : []),
    ...(spaces.length > 0 ? [`${spaces.join(' and ')} bucket space${spaces.length > 1 ? 's' : ''}`] : []),
  ];
  return parts.length === 0 ? '' : ` (${parts.join(', ')})`;
}

/** One failed slice: which, why, and what to do; `perSlice` when the remedy names the slice (its token). */
function failedSliceLine(
  s: VisitReport['slices'][number],
  checkpoint: string | undefined,
  slices: number,
): { which: string; why: string; how: string; perSlice: boolean } {
  const space = s.bucketSpace === undefined ? '' : ` --bucket-space ${s.bucketSpace}`;
  // A refused request (400, 404...) fails the same way again until the request is changed.
  const refused =
    s.status_code !== undefined &&
    s.status_code >= 400 &&
    s.status_code < 500 &&
    s.status_code !== 429 &&
    !isAuthFailure(s.status_code);
  const perSlice = !refused && checkpoint === undefined && s.continuation !== undefined;
  const how = remedyOf(s, refused, checkpoint, slices, space);
  const hint =
    s.status_code !== undefined && isAuthFailure(s.status_code) ? ` (${authFailureHint(s.status_code)})` : '';
  const which = `${s.cluster === undefined ? '' : `cluster '${s.cluster}' `}slice ${s.slice}${s.bucketSpace === undefined ? '' : ` (${s.bucketSpace} bucket space)`}`;
  return { which, why: `${s.error ?? 'unknown error'}${hint}`, how, perSlice };
}

/** What to do about a failed slice: change a refused request; else run again, from where it got to if that is known. */
function remedyOf(
  s: VisitReport['slices'][number],
  refused: boolean,
  checkpoint: string | undefined,
  slices: number,
  space: string,
): string {
  if (refused) return 'the service refused the request: fix it and run again';
  if (checkpoint !== undefined) return 'rerun the same command to continue';
  if (s.continuation === undefined) return 'start it again';
  return `continue with ${[...(slices === 1 ? [] : [`--slices ${slices} --slice-id ${s.slice}`]), ...(space === '' ? [] : [space.trim()]), `--continuation '${s.continuation}'`].join(' ')}`;
}

/** update-where body: a JSON text, a file, '-' (stdin), and/or --assign field=JSON; as text, so longs stay exact. */
function updateFieldsOf(args: BulkArgs): { fields: Record<string, unknown>; fieldsText: string } {
  const text = args.update === undefined ? undefined : readSource(args.update)!;
  if (text !== undefined) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new VespaBulkError(
        'VB_USAGE',
        'the update is not valid JSON: expected {"fields":{"<field>":{"assign":<value>}}}',
      );
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      throw new VespaBulkError('VB_USAGE', 'the update must be a JSON object');
  }
  // {"fields":{...}} as in a feed file, or the field operations alone.
  const given = fieldsTextOf(text, args.assign);
  return { fields: given.fields, fieldsText: given.text };
}

/** A signal makes the run stopping, and stopped once over; without one it is running, then done. */
function bulkState(over: boolean, signalled: boolean): ProgressSnapshot['state'] {
  if (signalled) return over ? 'stopped' : 'stopping';
  return over ? 'done' : 'running';
}

function bulkCommand(kind: BulkKind): CommandModule<object, BulkArgs> {
  return {
    ...listedCommand(kind),
    builder: (y) => {
      let b = commonOptions(y)
        .option('time-chunk', { type: 'string', describe: 'Server-side work per request (timeChunk), e.g. 60s' })
        .option('continuation', { type: 'string', describe: 'Continue a stopped run from this token' })
        .option('dry-run', {
          type: 'boolean',
          default: false,
          describe:
            'Change nothing; count the selected documents (the service has no dry run for bulk operations, so they are visited, ids only)',
        });
      if (kind === 'update-where') {
        b = b
          .positional('update', {
            type: 'string',
            describe: 'The update: JSON {"fields":{"f":{"assign":v}}}, a file, or - for stdin',
          })
          .option('assign', repeatable('Shorthand: field=<JSON value> (repeatable)'));
      }
      if (kind === 'copy')
        b = b.option('destination-cluster', { type: 'string', describe: 'Cluster to copy the documents to' });
      return b.epilog(exitCodesEpilog) as unknown as Argv<BulkArgs>;
    },
    handler: async (args) => {
      let progress: ProgressLine | undefined;
      const log = (line: string): void =>
        progress !== undefined ? progress.log(line) : void process.stderr.write(`${line}\n`);
      const where = { ...connectionOf(args, log), ...selectionOf(args) };
      const controller = new AbortController();
      // As this command always did: no message, and a second signal does not quit at once (visit's does).
      const stop = stopOnSignal(controller, { quitOnSecond: false });
      let documents = 0;
      let over = false;
      let summary: BulkSummary;
      const bulkOptions: BulkOptions = {
        kind,
        ...where,
        ...(kind === 'update-where' && updateFieldsOf(args)),
        ...(args['destination-cluster'] !== undefined && { destinationCluster: args['destination-cluster'] }),
        ...(args['time-chunk'] !== undefined && { timeChunk: args['time-chunk'] }),
        ...(args.timeout !== undefined && { serviceTimeout: args.timeout }),
        ...(args.tracelevel !== undefined && { tracelevel: args.tracelevel }),
        ...(args.continuation !== undefined && { continuation: args.continuation }),
        dryRun: args['dry-run'],
        retry: { maxRetries: args['max-retries'] },
        signal: controller.signal,
        onProgress: (n) => (documents = n),
        onMessage: (text) => {
          if (!args.quiet) process.stderr.write(`vespa-bulk: ${text}\n`);
        },
      };
      try {
        await useSchema(args, bulkOptions);
        // A usage error (no --selection) before anything is drawn or asked, so it is the only thing said.
        withFlagNames(visitFlags, () => validateBulkOptions(bulkOptions));
        await waitIfAsked(args, where.endpoint, where, controller.signal);
        // Without a selection the library refuses the request locally; no need to ask the service anything first.
        if (args.selection !== undefined) await discoverCluster(where, args.quiet, true);
        const started = performance.now();
        const docsRate = rateMeter();
        progress = new ProgressLine(
          () => {
            const seconds = (performance.now() - started) / 1000;
            return {
              label: `${kind}${args['dry-run'] ? ' (dry run)' : ''}`,
              state: bulkState(over, stop.signalled !== undefined),
              seconds,
              done: documents,
              unit: 'docs',
              rate: docsRate(documents, seconds),
            };
          },
          { enabled: !args.quiet },
        );
        summary = await withFlagNames(visitFlags, () => bulkOperation(bulkOptions));
      } finally {
        over = true;
        progress?.stop();
        stop.release();
      }
      writeSummary(bulkSummaryJson(summary));
      if (!summary.ok) {
        process.stderr.write(
          `${red(`vespa-bulk: ${kind} failed: ${summary.error ?? 'unknown error'}${summary.continuation !== undefined ? `; continue with --continuation '${summary.continuation}'` : ''}`)}\n`,
        );
        process.exitCode = stop.signalled !== undefined ? exitCodeOfSignal(stop.signalled) : 1;
      }
    },
  };
}

export const commands: AnyCommand[] = [
  visitCommand,
  bulkCommand('update-where'),
  bulkCommand('delete-where'),
  bulkCommand('copy'),
];
