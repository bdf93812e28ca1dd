import type { AnyCommand } from '../command.js';
import { listedCommand } from '../command-list.js';
import type { Argv } from 'yargs';
import { VespaBulkError, isVespaBulkError } from '../../core/errors.js';
import { authFailureHint, securityHeaders, transportSecurity } from '../../http/tls.js';
import { Feeder } from '../../feed/feeder.js';
import type { FeedOutcome } from '../../feed/feeder.js';
import {
  CheckpointUnwritableError,
  checkInputs,
  checkResumable,
  readFeedCheckpoint,
} from '../../feed/feed-checkpoint.js';
import { InputChangedError } from '../../feed/input-identity.js';
import { prepareOutputFile } from '../../fs/output-file.js';
import { resumedOptions, ResumeConflictError } from '../../feed/recorded-options.js';
import { removeLeftoverTemporaryFiles } from '../../fs/atomic-write.js';
import { parseShard } from '../../feed/shard.js';
import { checkFeedOptions, type Compression, type FeedOptions } from '../../feed/options.js';
import type { FeedSource } from '../../feed/source.js';
import type { OperationResult } from '../../feed/operation-result.js';
import type { FeedSummary } from '../../feed/stats.js';
import { loadTransform } from '../../transform/transform.js';
import { tookDefault } from '../given-flags.js';
import { repeatable } from '../repeatable.js';
import { withSecurityOptions, type SecurityArgs } from '../security-options.js';
import { connectionFromArgs, describeTargetOrigin, withTargetOptions, type TargetArgs } from '../target-options.js';
import { ProgressLine, rateMeter } from '../progress.js';
import type { ProgressSnapshot } from '../progress-format.js';
import { red } from '../color.js';
import { unreachableHint, waitIfAsked, withWaitOption, type WaitArgs } from '../wait-option.js';
import { exitCodeOfSignal } from '../exit-codes.js';
import { stopOnSignal } from '../stop-on-signal.js';
import { holdYoungGeneration } from '../young-generation.js';
import { existsSync, rmSync } from 'node:fs';
import { feedFlags, flagName, withFlagNames } from '../option-flags.js';
import { RunOutputs, withRunOutputOptions, type RunOutputArgs } from '../run-outputs.js';
import {
  compressionFlag,
  endpointVia,
  protocolNote,
  transportFromArgs,
  withTransportOptions,
  type TransportArgs,
} from '../transport-options.js';
import { feedSummaryJson, writeSummary } from '../summary-names.js';
import { formatCount } from '../progress-format.js';
import { defaultCheckpointPath, defaultFailuresPath, isDefaultCheckpointName } from '../default-paths.js';
import { estimateRemainingSeconds } from '../eta.js';
import { parseHeaderFlags } from '../header-flags.js';
import { resumeHint, shellWord } from '../resume-hint.js';
import type { FeedCheckpoint } from '../../feed/feed-checkpoint.js';
import type { InputFormat } from '../../tabular/input-format.js';
import type { RowOptions } from '../../tabular/row-operation.js';

const tables = 'Tables (CSV, TSV, Parquet; see docs/input-formats.md):';

/** `vespa-bulk feed`: flags into FeedOptions, the outcome into a summary on stdout and an exit code. */
interface FeedArgs extends SecurityArgs, TargetArgs, WaitArgs, RunOutputArgs, TransportArgs {
  files?: string[];
  inflight?: number;
  timeout?: number;
  route?: string;
  trace?: number;
  header?: string[];
  compression: Compression;
  verbose: boolean;
  'max-retries': number;
  'max-request-bytes'?: number;
  'max-failure-seconds': number;
  failures?: string;
  resume?: string;
  'resume-to-other-target'?: boolean;
  'resume-changed'?: boolean;
  restart?: boolean;
  checkpoint?: string;
  shard?: string;
  'dry-run': boolean;
  progress: number;
  quiet: boolean;
  speedtest?: number;
  'speedtest-duration': number;
  workers?: number;
  transform?: string;
  shuffle?: boolean;
  'shuffle-buffer'?: number;
  'input-format'?: InputFormat;
  'id-field'?: string;
  id?: string;
  'document-type'?: string;
  namespace?: string;
  operation?: 'put' | 'update' | 'remove';
  create?: boolean;
  'timestamp-unit'?: 's' | 'ms' | 'us';
  app?: string;
  'config-url'?: string;
}

// Paragraphs are single lines: yargs wraps them to the terminal.
const epilog = `Input: JSONL, a JSON array of operations, or whitespace-separated objects (detected), several files, '-' for stdin, '.gz' and '.zst' decompressed; CSV, TSV and Parquet tables (by extension or --input-format), each row becoming an operation (--id-field or --id, see docs/input-formats.md). Operations: {"put"|"id":ID,"fields":{...}}, {"update":ID,"fields":{...}, "create":true}, {"remove":ID}, each with an optional "condition". Any other key fails that operation only.

Retries: 429 always, with exponential backoff and jitter, until the operation's --timeout; 503, 502 and transport errors up to --max-retries; 507 (feed block) is waited out: the writes that met it wait together while one probes at a time (1 s, then doubling up to 10 s apart), until one succeeds and all go on, or --timeout; removes go on; 504 and transport errors that may have reached the service only for operations safe to repeat (put, remove, update with only 'assign'; none with a condition), final otherwise. Other 4xx are final.

Failures: every operation that finally failed goes to --failures FILE (default: vespa-bulk-failures-<time>.jsonl in the working directory, created only when something fails), one per line, as feed input that can be fed again unchanged; a line that could not be read is kept verbatim. Why each failed (status, message, attempts, input file and line) is in FILE.reasons.jsonl, line N for line N.

Ctrl-C (or the circuit breaker after --max-failure-seconds of only failures, or a 401/403: refused credentials refuse every operation alike) stops reading, lets in-flight operations finish for up to 10 s, and writes a checkpoint. --checkpoint FILE also saves progress every second (so a feed killed outright, or a lost machine, loses at most that), never past an operation that has not finished (succeeded, or in the failure output and on disk); when FILE exists the feed continues from it, so the same command run again goes on, appending to the same failure output. A checkpoint of other input files or another --shard is refused (exit 2), and so is one whose input changed before where it stands (a line fixed or inserted: its offsets would skip operations never sent) or, finished, grew since (the new lines never sent): --restart starts afresh, --resume-changed goes on (a finished checkpoint feeding only what was added). Every output path (--failures, --checkpoint, --stats, --report) is checked before anything is sent: a missing folder is made, one that cannot be is refused (exit 2). --resume CHECKPOINT is the same for a checkpoint already written. A checkpoint records the target (without credentials) and the settings that change what is sent (--route, --dry-run, --transform, --input-format, the table flags, --shard): a resume feeds the rest there and so, taking each one left out from the checkpoint; a target or setting given that differs is refused (exit 2), a target (and --route) unless --resume-to-other-target. Operations not finished at the checkpoint are sent again (put and remove are idempotent; an update that is not assign-only may apply twice).

Inputs may be http:// or https:// URLs (presigned object-store links): streamed, not downloaded first; .gz (by the path, or Content-Encoding/Content-Type gzip) decompressed on the fly. The request uses the same TLS options as the target (--ca is trusted too). A connection cut mid-body is reopened with Range: bytes=N- (a server that ignores Range is re-read and the first N bytes dropped), up to --max-retries times in a row. A checkpoint resumes a plain URL with a Range request at its position; a .gz one is re-read from the start and skipped to it. A URL's query (a presigned signature) is shown as ?… in logs, reasons and checkpoints; a checkpoint matches a URL by origin and path, so a freshly signed link continues it.

Nothing answering at the start (connection refused, unknown host, TLS handshake failed) stops the feed at once with a checkpoint, naming the cause; --wait S waits up to S seconds for the endpoint first. Outages after the first answer are retried as above.

A resumed feed's summary and progress count the whole feed (the runs before included, as the checkpoint counts them), with this run's figures beside (feeder.run.*); see docs/feed.md#the-summary.

Exit code: 0 all succeeded, 1 some failed (of a resumed feed: in this run or before) or the feed was stopped, 2 bad usage, 130 after Ctrl-C (SIGINT), 143 after SIGTERM.`;

/**
 * The help's groups, in the order shown: what nearly every feed names first (its files, the target, the
 * checkpoint and failure output), the rest after. Groups of the shared options (`Target:`, `Security:`, ...) are
 * placed here too: yargs shows groups in the order they are first named.
 */
const helpGroups: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['Target:', []],
  [
    'Failures & resume:',
    ['checkpoint', 'failures', 'resume', 'restart', 'resume-changed', 'resume-to-other-target', 'max-failure-seconds'],
  ],
  ['Input:', ['transform', 'shard', 'shuffle', 'shuffle-buffer', 'dry-run']],
  [
    'Throughput:',
    ['inflight', 'workers', 'timeout', 'max-retries', 'max-request-bytes', 'speedtest', 'speedtest-duration'],
  ],
  [
    'Connection:',
    [
      'wait',
      'protocol',
      'http2',
      'connections',
      'max-streams',
      'pipelining',
      'header',
      'compression',
      'route',
      'trace',
    ],
  ],
  ['Output:', ['verbose', 'quiet', 'progress']],
  [tables, []],
  ['Security:', []],
  ['Proxy:', []],
  ['Recording:', []],
];

function builder(y: Argv): Argv<FeedArgs> {
  let first = y.positional('files', {
    type: 'string',
    array: true,
    describe:
      "Feed files ('-' for stdin, http(s):// URLs streamed, .gz and .zst decompressed; .csv, .tsv, .parquet read as tables)",
  });
  for (const [name, keys] of helpGroups) first = first.group([...keys], name);
  return (
    withTransportOptions(withRunOutputOptions(withWaitOption(withTargetOptions(withSecurityOptions(first)))))
      .example('$0 feed docs.jsonl -t local', 'Feed a file to the container at http://127.0.0.1:8080')
      .example(
        '$0 feed docs.jsonl.gz --checkpoint ck.json',
        'Save progress; after a stop (Ctrl-C, a lost machine) the same command goes on where it stopped',
      )
      .example(
        '$0 feed docs.jsonl --failures failed.jsonl',
        'Failed operations to failed.jsonl, their reasons in failed.jsonl.reasons.jsonl; feed that file again to retry them',
      )
      .example('zcat docs.jsonl.gz | $0 feed -', 'Feed standard input')
      .example("$0 feed items.csv --id 'id:ns:item::{n}'", 'A CSV table, each row a put of its columns')
      .option('inflight', {
        type: 'number',
        describe:
          'Fixed in-flight limit (default: adaptive, from 8 up to 1024, settling at the knee of the cluster by throughput and latency)',
      })
      .option('timeout', {
        type: 'number',
        describe: 'Per-operation deadline in seconds, across retries; also sent as ?timeout= (default 600, not sent)',
      })
      .option('route', { type: 'string', describe: 'Route for every operation' })
      .option('trace', { type: 'number', describe: 'Trace level 1-9, sent as ?tracelevel=' })
      // Not an array option: that would swallow the file names after it. Repeated flags still collect.
      .option('header', repeatable("Extra header 'Name: value' (repeatable)"))
      .option('compression', compressionFlag)
      .option('verbose', {
        alias: 'v',
        type: 'boolean',
        default: false,
        describe:
          "Print every failed operation and its reason on stderr, and an answer that is not the service's JSON (a proxy's page) whole",
      })
      .option('max-retries', {
        type: 'number',
        default: 10,
        describe: 'Retries for 503, 502, 504 and transport errors',
      })
      .option('max-request-bytes', {
        type: 'number',
        describe:
          "An operation whose body is over this many bytes is not sent and fails at once (default 104857600, the container's 100 MiB; set it to the cluster's maxDocumentOperationRequestSizeMib)",
      })
      .option('max-failure-seconds', {
        alias: 'deadline',
        type: 'number',
        default: 60,
        describe:
          'Stop (with a checkpoint) after this long with only failures; 0 never (--deadline, as the official CLI names it)',
      })
      .option('failures', {
        type: 'string',
        describe: 'Failure output file (default: vespa-bulk-failures-<time>.jsonl when something fails)',
      })
      .option('resume', {
        type: 'string',
        describe:
          'Continue a stopped feed from this checkpoint file (and save progress there, unless --checkpoint names another): to the target it records, with the settings it records',
      })
      .option('resume-to-other-target', {
        type: 'boolean',
        describe:
          'With --resume (or an existing --checkpoint): feed the rest to the target (and --route) given, although the checkpoint records another',
      })
      .option('resume-changed', {
        type: 'boolean',
        describe:
          'With --resume (or an existing --checkpoint): go on although an input changed since the checkpoint (refused otherwise): operations before its position are not sent again, and operations moved across it may be lost or sent twice; a finished checkpoint feeds only what was added to its inputs',
      })
      .option('restart', {
        type: 'boolean',
        describe: 'With an existing --checkpoint: remove it and feed everything from the start',
      })
      .option('checkpoint', {
        type: 'string',
        describe:
          'Save progress here every second and at every stop, and continue from it when it exists, so the same command run again goes on (default: vespa-bulk-checkpoint-<time>.json, written only when the feed is stopped)',
      })
      .option('shard', { type: 'string', describe: 'Feed only shard i of N (i/N) by a hash of the document id' })
      .option('dry-run', {
        type: 'boolean',
        default: false,
        describe: 'Send dryRun=true: the service validates, stores nothing',
      })
      .option('progress', {
        type: 'number',
        default: 5,
        describe: 'Seconds between progress lines when stderr is not a terminal',
      })
      .option('quiet', { alias: 'q', type: 'boolean', default: false, describe: 'No progress line' })
      .option('workers', {
        type: 'number',
        describe:
          'Worker threads, each with its own connections and its share of the in-flight limit; operations on one id stay on one (default 1: one thread fed as fast as two against the container on 2 cores)',
      })
      .option('speedtest', {
        type: 'number',
        describe:
          "Network speed test, as 'vespa feed --speedtest': generated dry-run puts (id:test:test::<8 letters>, one field 'test' of this many random letters) instead of files",
      })
      .option('speedtest-duration', { type: 'number', default: 60, describe: 'Duration of the speed test, in seconds' })
      .option('transform', {
        type: 'string',
        describe:
          'ES module (FILE.mjs) whose default export maps each operation object to an operation, an array of them, or null to drop it (docs/transform.md); its errors go to the failure output',
      })
      .option('shuffle', {
        type: 'boolean',
        describe:
          "Interleave operations through a bounded buffer so consecutive ones go to different buckets (for input in an export's bucket order); operations on one id keep their order",
      })
      .option('shuffle-buffer', { type: 'number', describe: 'Operations --shuffle holds at most (default 10000)' })
      .option('input-format', {
        choices: ['jsonl', 'json', 'csv', 'tsv', 'parquet'] as const,
        group: tables,
        describe:
          'What the inputs hold (default: by extension .csv, .tsv, .parquet after .gz/.zst; else JSON/JSONL detected)',
      })
      .option('id-field', {
        type: 'string',
        group: tables,
        describe:
          "Column holding full document ids (with --document-type: the id's local part) (default: a column named 'id')",
      })
      .option('id', {
        type: 'string',
        group: tables,
        describe: "Document id template with {column} placeholders, e.g. 'id:shop:product::{doc_id}'",
      })
      .option('document-type', {
        type: 'string',
        group: tables,
        describe: 'Document type, with --id-field holding local parts: id:<namespace>:<type>::<value>',
      })
      .option('namespace', {
        type: 'string',
        group: tables,
        describe: 'Namespace of the ids made with --document-type (default: the document type)',
      })
      .option('operation', {
        choices: ['put', 'update', 'remove'] as const,
        group: tables,
        describe: 'What each row becomes (default put; update assigns each field; remove uses only the id)',
      })
      .option('create', {
        type: 'boolean',
        group: tables,
        describe: 'Updates create missing documents ("create": true)',
      })
      .option('timestamp-unit', {
        choices: ['s', 'ms', 'us'] as const,
        group: tables,
        describe: 'Timestamps become a long of seconds (default), milliseconds or microseconds since the epoch',
      })
      .option('app', {
        type: 'string',
        group: tables,
        describe: 'Application package (directory, .zip, gzipped tar) whose schemas type the row values',
      })
      .option('config-url', {
        type: 'string',
        group: tables,
        describe: "Config server URL: its active application's schemas type the row values",
      })
      .epilog(epilog) as unknown as Argv<FeedArgs>
  );
}

/** `argv` parsed; `raw`: the command line's arguments as given (after the program), read for a bare '-'. */
export async function toFeedOptions(
  argv: FeedArgs,
  raw: readonly string[],
): Promise<{
  files: string[];
  options: FeedOptions;
  targetNote?: string;
  resumedFrom?: string;
  /** What a user should know of the resume: inputs that could not be checked, or changed and resumed all the same. */
  notes?: string[];
  speedtest?: { bytes: number; seconds: number };
}> {
  // yargs drops a bare '-' from the positionals: put it back in its place from the raw arguments.
  let files = argv.files ?? [];
  if (raw.includes('-') && !files.includes('-')) {
    const after = raw.slice(raw.indexOf('feed') + 1);
    const rest = [...files];
    files = [];
    for (const a of after) {
      if (a === '-') files.push('-');
      else if (rest[0] === a) files.push(rest.shift()!);
    }
    files.push(...rest);
  }
  if (argv.restart && argv.resume !== undefined)
    throw new VespaBulkError('VB_USAGE', '--restart starts afresh, --resume goes on: give one of them');
  if (argv.restart && argv['resume-changed'])
    throw new VespaBulkError('VB_USAGE', '--restart starts afresh, --resume-changed goes on: give one of them');
  // Every output is checked before anything is read or sent: its folder made, or the run refused.
  for (const [flag, path] of [
    ['--failures', argv.failures],
    ['--checkpoint', argv.checkpoint],
    ['--stats', argv.stats],
    ['--report', argv.report],
  ] as const)
    if (path !== undefined) prepareOutputFile(path, `${flag} file`);
  // --restart: the checkpoint of an earlier run is removed, so nothing of it is skipped.
  if (argv.restart && argv.checkpoint !== undefined) rmSync(argv.checkpoint, { force: true });
  const resumeFrom =
    argv.resume ?? (argv.checkpoint !== undefined && existsSync(argv.checkpoint) ? argv.checkpoint : undefined);
  const checkpoint = resumeFrom !== undefined ? await readFeedCheckpoint(resumeFrom) : undefined;
  const headers = parseHeaderFlags(argv.header);
  let connection = connectionFromArgs(argv, headers);
  // No target given (no flag, config file or variable): a resume leaves the endpoint out, and the library takes the checkpoint's.
  const targetGiven = connection.target.from !== 'default';
  let options: FeedOptions = {
    ...(checkpoint === undefined || targetGiven ? { endpoint: connection.url } : {}),
    ...transportFromArgs(argv),
    compression: argv.compression,
    maxRetries: argv['max-retries'],
    maxFailureSeconds: argv['max-failure-seconds'],
  };
  if (argv.inflight !== undefined) options.inflight = argv.inflight;
  if (argv.timeout !== undefined) options.deadlineMs = argv.timeout * 1000;
  if (argv.route !== undefined) options.route = argv.route;
  if (argv.trace !== undefined) options.tracelevel = argv.trace;
  // Given either way, --dry-run is compared with a checkpoint's; left out, the checkpoint's is taken.
  if (argv['dry-run'] || !tookDefault(argv as unknown as Record<string, unknown>, 'dry-run'))
    options.dryRun = argv['dry-run'];
  if (argv.workers !== undefined) options.workers = argv.workers;
  if (argv['max-request-bytes'] !== undefined) options.maxRequestBytes = argv['max-request-bytes'];
  if (argv.transform !== undefined) options.transform = argv.transform;
  if (argv.shuffle !== undefined) options.shuffle = argv.shuffle;
  if (argv['shuffle-buffer'] !== undefined) options.shuffleBuffer = argv['shuffle-buffer'];
  if (argv['resume-to-other-target']) options.resumeToOtherTarget = true;
  if (argv['resume-changed']) options.resumeChanged = true;
  // The library writes no file it was not asked for; these defaults are the CLI's.
  options.failures = argv.failures ?? defaultFailuresPath();
  if (argv.shard !== undefined) options.shard = parseShard(argv.shard);
  // --checkpoint FILE: saved every second and at every stop, and continued when it exists. Without it, a checkpoint
  // is written only when the feed stops early, under a new name each time.
  options.checkpoint = argv.checkpoint ?? argv.resume ?? defaultCheckpointPath();
  if (argv.checkpoint === undefined && argv.resume === undefined) options.checkpointIntervalMs = 0;
  if (argv['input-format'] !== undefined) options.inputFormat = argv['input-format'];
  const rows: RowOptions = {};
  if (argv['id-field'] !== undefined) rows.idField = argv['id-field'];
  if (argv.id !== undefined) rows.id = argv.id;
  if (argv['document-type'] !== undefined) rows.documentType = argv['document-type'];
  if (argv.namespace !== undefined) rows.namespace = argv.namespace;
  if (argv.operation !== undefined) rows.operation = argv.operation;
  if (argv.create !== undefined) rows.create = argv.create;
  if (argv['timestamp-unit'] !== undefined) rows.timestampUnit = argv['timestamp-unit'];
  if (argv.app !== undefined) rows.app = argv.app;
  if (argv['config-url'] !== undefined) rows.configUrl = argv['config-url'];
  if (Object.keys(rows).length > 0) options.rows = rows;
  let resumedFrom: string | undefined;
  const notes: string[] = [];
  let targetNote = describeTargetOrigin(connection);
  if (checkpoint !== undefined) {
    const name = `checkpoint '${resumeFrom}'`;
    if (files.length === 0) files = checkpoint.inputs;
    // A checkpoint keeps a URL's origin and path only (its query may be a signature): the user gives it again.
    const masked = files.find((f) => f.endsWith('?…'));
    if (masked !== undefined)
      throw new VespaBulkError('VB_USAGE', `input ${masked} of ${name} lost its query when saved: give the URL again`);
    const given = options;
    try {
      options = resumedOptions(given, checkpoint, name);
    } catch (err) {
      // A target from a config file or VESPA_CLI_ENDPOINTS: say where it came from, since no flag named it.
      const from =
        err instanceof ResumeConflictError && err.option === 'endpoint' && !connection.target.from.startsWith('--')
          ? ` (${connection.url} is from ${connection.target.from})`
          : '';
      if (err instanceof ResumeConflictError)
        throw new VespaBulkError('VB_USAGE', `${err.messageWith((o) => flagName(o, feedFlags))}${from}`, {
          cause: err,
        });
      throw err;
    }
    checkResumable(checkpoint, files, options.shard, name);
    // The failures of the earlier run stay in one file with this run's.
    if (argv.failures === undefined && checkpoint.failures !== undefined) options.failures = checkpoint.failures;
    const inputs = await checkedInputs(checkpoint, files, argv, name, resumeFrom!);
    options.resume = inputs.checkpoint;
    notes.push(...inputs.notes);
    const before = doneBefore(checkpoint);
    const at = inputs.checkpoint.position;
    if (inputs.added !== undefined) {
      const where = inputs.added.map(
        (a) => `${a.input} from byte ${a.offset}${a.line !== undefined ? ` (line ${a.line})` : ''}`,
      );
      resumedFrom = `${resumeFrom}: finished before (${before}); feeding what was added since: ${where.join(', ')}`;
    } else if (at === null) resumedFrom = `${resumeFrom}: finished, nothing left to feed (${before})`;
    else resumedFrom = `${resumeFrom} at ${checkpoint.inputs[at.input] ?? '?'} line ${at.line}: ${before}`;
    if (!targetGiven && options.endpoint !== undefined) {
      // The key pair of the official CLI's home is picked for the target fed: resolve the checkpoint's as if given.
      connection = connectionFromArgs({ ...argv, target: options.endpoint }, headers);
      targetNote = `target ${connection.url} (from ${name})`;
    } else if (!targetGiven) {
      const why = checkpoint.version === 1 ? 'written by an earlier vespa-bulk' : 'nothing answered where it fed';
      targetNote = `${name} records no target (${why}): feeding ${connection.url}; give -t to feed another`;
    }
  }
  options.endpoint ??= connection.url;
  const security = connection.security;
  options.headers = securityHeaders(security);
  Object.assign(options, transportSecurity(security));
  // Loaded here once too, so a module that cannot be loaded is a usage error before anything is opened.
  if (typeof options.transform === 'string') await loadTransform(options.transform);
  withFlagNames(feedFlags, () => checkFeedOptions(options));
  if (argv.speedtest !== undefined) {
    const bytes = argv.speedtest;
    const seconds = argv['speedtest-duration'];
    if (!(Number.isInteger(bytes) && bytes >= 1))
      throw new VespaBulkError('VB_USAGE', `--speedtest must be a number of bytes >= 1, not ${bytes}`);
    if (!(Number.isFinite(seconds) && seconds > 0))
      throw new VespaBulkError('VB_USAGE', `--speedtest-duration must be a number of seconds > 0, not ${seconds}`);
    if (files.length > 0 || argv.resume !== undefined)
      throw new VespaBulkError('VB_USAGE', 'option --speedtest cannot be combined with feed files or --resume');
    // What the official CLI sends: the service answers a dry run before it looks at the document type.
    options.dryRun = true;
    return { files, options, ...(targetNote !== undefined && { targetNote }), speedtest: { bytes, seconds } };
  }
  if (files.length === 0) throw new VespaBulkError('VB_USAGE', "name at least one feed file ('-' for stdin)");
  if (files.filter((f) => f === '-').length > 1)
    throw new VespaBulkError('VB_USAGE', "'-' (stdin) can be given only once");
  return {
    files,
    options,
    ...(targetNote !== undefined && { targetNote }),
    ...(resumedFrom !== undefined && { resumedFrom }),
    ...(notes.length > 0 && { notes }),
  };
}

/** What the runs before a resume did, as the checkpoint counts it: `2,000 operations done before: ok 1,990, failed 10`. */
function doneBefore(checkpoint: FeedCheckpoint): string {
  const c = checkpoint.counts;
  // A checkpoint of an earlier vespa-bulk: its ok and errors may be one run's, so no figure is given for all.
  if (c === undefined) return 'earlier counts unknown (a checkpoint of an earlier vespa-bulk)';
  const n = c.ok + c.errors;
  const dropped = c.dropped > 0 ? `, dropped ${formatCount(c.dropped)}` : '';
  return `${formatCount(n)} ${n === 1 ? 'operation' : 'operations'} done before: ok ${formatCount(c.ok)}, failed ${formatCount(c.errors)}${dropped}`;
}

/**
 * The checkpoint's inputs checked against the files as they are now (`checkInputs`), a refusal worded with the
 * flags: --resume-changed, or --restart (a checkpoint given with --resume is removed by hand, or not given).
 */
async function checkedInputs(
  checkpoint: FeedCheckpoint,
  files: readonly string[],
  argv: FeedArgs,
  name: string,
  path: string,
): Promise<Awaited<ReturnType<typeof checkInputs>>> {
  try {
    const checked = await checkInputs(checkpoint, files, {
      resumeChanged: argv['resume-changed'] === true,
      file: name,
    });
    return { ...checked, notes: checked.notes.map((n) => n.replace('(resumeChanged)', '(--resume-changed)')) };
  } catch (err) {
    if (!(err instanceof InputChangedError)) throw err;
    const afresh =
      argv.resume !== undefined
        ? `--checkpoint ${shellWord(path)} --restart in place of --resume, or remove ${shellWord(path)}`
        : `add --restart, or remove ${shellWord(path)}`;
    throw new VespaBulkError('VB_USAGE', err.messageWith({ resumeChanged: '--resume-changed', afresh }), {
      cause: err,
    });
  }
}

function progressOf(feeder: Feeder, state: () => ProgressSnapshot['state']): () => ProgressSnapshot {
  const opsRate = rateMeter();
  const bytesRate = rateMeter();
  return () => {
    const p = feeder.progress();
    // The time left is this run's: its share of what it reads (the inputs a resume passes over are not read).
    const left = (p.totalBytes ?? 0) - (p.bytesBefore ?? 0);
    const eta = estimateRemainingSeconds(
      p.bytesBefore !== undefined && p.bytesBefore > 0 && left > 0
        ? { ...p, readShare: ((p.readBytes ?? 0) - p.bytesBefore) / left }
        : p,
    );
    const now = state();
    const whole = now === 'done' || now === 'stopped';
    // A resumed feed counts the whole: what the runs before finished, then this run's, without the items it passed
    // over as finished before (the checkpoint's, counted in `before`).
    const thisRun = p.finished - (p.passedOver ?? 0);
    const before = p.before;
    return {
      label: 'feed',
      state: now,
      seconds: p.seconds,
      // Earlier counts unknown (an earlier vespa-bulk's checkpoint): this run's alone, as its summary.
      done: (before !== undefined ? (p.finishedBefore ?? 0) : 0) + thisRun,
      ...(before !== undefined && { thisRun }),
      unit: 'ops',
      ...(p.readShare !== undefined && { percent: p.readShare * 100 }),
      ...(p.totalBytes !== undefined && { bytes: { read: p.readBytes ?? 0, total: p.totalBytes } }),
      rate: opsRate(p.ok + p.failed, p.seconds, whole),
      // Bytes sent, not read: the reader runs ahead in bursts, the requests go out at the service's pace.
      mbPerSecond: bytesRate(p.requestBytes ?? 0, p.seconds, whole) / 1e6,
      ok: (before?.ok ?? 0) + p.ok,
      failed: (before?.failed ?? 0) + p.failed,
      dropped: (before?.dropped ?? 0) + (p.dropped ?? 0),
      retried: p.retries,
      inflight: { now: p.inflight, limit: p.limit },
      // No latency before anything answered.
      ...(p.ok + p.failed > 0 && { p99Ms: p.p99Ms }),
      ...(eta !== undefined && { etaSeconds: eta }),
      ...(p.feedBlocked === true && { notice: 'cluster feed-blocked (507: resource limits)' }),
    };
  };
}

async function handler(argv: FeedArgs): Promise<void> {
  const { files, options, targetNote, resumedFrom, notes, speedtest } = await toFeedOptions(
    argv,
    process.argv.slice(2),
  );
  // Each run names its default checkpoint anew, so no later save to it finds what a killed run left beside its own.
  if (argv.checkpoint === undefined && argv.resume === undefined)
    await removeLeftoverTemporaryFiles('.', isDefaultCheckpointName);
  if (targetNote !== undefined && !argv.quiet) process.stderr.write(`vespa-bulk: ${targetNote}\n`);
  if (resumedFrom !== undefined && !argv.quiet) process.stderr.write(`vespa-bulk: resumed from ${resumedFrom}\n`);
  for (const note of notes ?? []) process.stderr.write(`vespa-bulk: note: ${note}\n`);
  const controller = new AbortController();
  options.signal = controller.signal;
  let shownFailures = 0;
  // Failures are printed through the progress line once it runs, so they never land in the middle of it.
  let log = (text: string): void => void process.stderr.write(`${text}\n`);
  const maxShown = argv.verbose ? Number.POSITIVE_INFINITY : 20;
  options.onProtocol = (protocol, why) => {
    if (!argv.quiet) log(protocolNote(protocol, endpointVia(options.endpoint!, options.proxy), options.protocol, why));
  };
  // Successes are not printed: with workers they then never cross between threads.
  options.onResultOnlyFailed = true;
  options.onResult = (r: OperationResult) => {
    if (r.ok) return;
    if (shownFailures++ < maxShown) {
      const what = r.id !== undefined ? `${r.kind} ${r.id}: ` : '';
      const message = r.message ?? 'failed';
      // A proxy's page titled "502 Bad Gateway" says its status itself.
      const status = r.status !== undefined && !message.startsWith(String(r.status)) ? `${r.status} ` : '';
      log(`${r.input}:${r.line}: ${what}${status}${message}${r.attempts > 1 ? ` (after ${r.attempts} attempts)` : ''}`);
      // --verbose: an answer that was not the service's JSON (its one line above is a page's title) in full.
      const body =
        argv.verbose && r.body !== null && typeof r.body === 'object'
          ? (r.body as { message?: unknown }).message
          : undefined;
      if (typeof body === 'string' && body.trim() !== message) log(body.trim());
    } else if (shownFailures === maxShown + 1) {
      log('(more failures: see the failure output; --verbose prints all)');
    }
  };
  await waitIfAsked(argv, options.endpoint!, {
    headers: options.headers ?? {},
    ...(options.tls !== undefined && { tls: options.tls }),
    ...(options.proxy !== undefined && { proxy: options.proxy }),
    ...(options.proxyTls !== undefined && { proxyTls: options.proxyTls }),
    ...(options.protocol !== undefined && { protocol: options.protocol }),
  });
  const outputs = await RunOutputs.open(argv, {
    command: 'feed',
    target: options.endpoint!,
    argv: argv as unknown as Record<string, unknown>,
  });
  let source: FeedSource = files.length === 1 ? files[0]! : files;
  if (speedtest !== undefined)
    source = (await import('../../bench/speedtest.js')).speedtestSource(speedtest.bytes, speedtest.seconds);
  const feeder = new Feeder(options);
  // On this thread only: the growth factor is the process's, and held while workers are small it would keep
  // their young generations small too (2 workers, 200k documents: 2 of 3 runs took 12-22 % more CPU).
  if (feeder.workers === 1) holdYoungGeneration();
  if (outputs.recording) outputs.attach((await import('../../report/sample.js')).feedSampler(feeder));
  const stop = stopOnSignal(controller, {
    message: 'vespa-bulk: stopping: finishing in-flight operations (Ctrl-C again to quit at once)',
  });
  let state: ProgressSnapshot['state'] = 'running';
  const progress = new ProgressLine(
    progressOf(feeder, () => (stop.signalled !== undefined && state === 'running' ? 'stopping' : state)),
    { enabled: !argv.quiet, plainIntervalMs: Math.max(0.1, argv.progress) * 1000 },
  );
  log = (text) => progress.log(text);
  let outcome: FeedOutcome;
  try {
    outcome = await feeder.run(source);
  } catch (err) {
    progress.stop(false);
    await outputs.finish(undefined);
    if (isVespaBulkError(err) && err.place?.file !== undefined && err.place.file === options.failures) {
      outputFailed(feeder, err, options.checkpoint, argv, files);
      return;
    }
    if (err instanceof CheckpointUnwritableError) {
      outputFailed(feeder, err, err.savedTo, argv, files);
      return;
    }
    if (isVespaBulkError(err)) throw err;
    throw new VespaBulkError('VB_TRANSPORT', (err as Error).message, { cause: err });
  } finally {
    stop.release();
  }
  state = outcome.stopped !== undefined ? 'stopped' : 'done';
  progress.stop(!argv.quiet);
  const s = outcome.summary;
  const printed = {
    ...feedSummaryJson(s),
    ...(outcome.failuresFile ? { 'feeder.failures.file': outcome.failuresFile } : {}),
  };
  // The summary first: a report that cannot be written (its folder gone) is said after it, and exits 1.
  writeSummary(printed);
  let unwritten = false;
  try {
    await outputs.finish(printed, argv.quiet);
  } catch (err) {
    unwritten = true;
    process.stderr.write(`${red(`vespa-bulk: the --report file could not be written: ${(err as Error).message}`)}\n`);
  }
  // The failures in the file: of the whole feed when it continues the checkpoint's, else this run's.
  const resumed = typeof options.resume === 'object' ? options.resume : undefined;
  const inFile = resumed?.failures === outcome.failuresFile ? s.errors : (s.runErrors ?? s.errors);
  if (outcome.failuresFile !== undefined && inFile > 0) {
    reportFailuresFile(inFile, outcome.failuresFile);
  }
  if (s.feedBlockedSeconds !== undefined && !argv.quiet)
    process.stderr.write(
      `vespa-bulk: cluster feed-blocked: resource limits (507) for ${s.feedBlockedSeconds.toFixed(1)} s: writes waited, one probing at a time; removes went on\n`,
    );
  // As `vespa feed`, an empty input is no failure (exit 0); but a summary of zeros alone reads like one.
  if (
    s.operations === 0 &&
    outcome.stopped === undefined &&
    resumedFrom === undefined &&
    speedtest === undefined &&
    !argv.quiet
  ) {
    process.stderr.write(
      `vespa-bulk: nothing to feed: no operations in ${files.map((f) => (f === '-' ? 'standard input' : f)).join(', ')}\n`,
    );
  }
  if (outcome.stopped !== undefined) {
    let text = `vespa-bulk: feed stopped: ${stopReasonText(outcome, argv['max-failure-seconds'], options.endpoint!)}`;
    if (!text.endsWith('.')) text += '.';
    if (outcome.checkpointFile !== undefined)
      text += ` Checkpoint: ${outcome.checkpointFile}; continue with: ${resumeHint(outcome.checkpointFile, { flags: flagsNotKept(argv), inputs: files })}`;
    else if (s.ok + s.errors === 0) text += ' Nothing was fed: run the same command again.';
    process.stderr.write(`${red(text)}\n`);
  }
  if (s.errors > 0 || outcome.stopped !== undefined || unwritten) process.exitCode = 1;
  // The flag asked for what this server cannot do: a usage error, as the other flags' are.
  if (outcome.unreachable?.code === 'VB_PROTOCOL') process.exitCode = 2;
  if (stop.signalled !== undefined) process.exitCode = exitCodeOfSignal(stop.signalled);
}

export const commands: AnyCommand[] = [
  {
    ...listedCommand('feed'),
    builder: builder as unknown as AnyCommand['builder'],
    handler: handler as unknown as AnyCommand['handler'],
  },
];

/** The flags given that a checkpoint does not keep, which a resume needs again. */
function flagsNotKept(argv: FeedArgs): string[] {
  const flags = (['token', 'cert', 'key', 'ca'] as const).filter((f) => argv[f] !== undefined).map((f) => `--${f}`);
  if ((argv.header?.length ?? 0) > 0) flags.push('--header');
  return flags;
}

/**
 * An output could not be written mid-run. The failure output: the feed stopped there; the checkpoint stands where
 * it was last saved with those failures on disk (a save waits for them), so a resume sends again everything after
 * it. The checkpoint's last save: it was written elsewhere (`checkpoint`), to go on from. Either way the summary
 * as far as the run went, and where to go on.
 */
function outputFailed(
  feeder: Feeder,
  err: VespaBulkError,
  checkpoint: string | false | undefined,
  argv: FeedArgs,
  files: readonly string[],
): void {
  const c = feeder.snapshot();
  const summary: Partial<FeedSummary> = {
    operations: c.operations,
    ok: c.ok,
    errors: c.errors,
    retries: c.retries,
    exceptions: c.exceptions,
    requestBytes: c.requestBytes,
    responseBytes: c.responseBytes,
    responseCodes: c.codes,
  };
  writeSummary(feedSummaryJson(summary as FeedSummary));
  let text = `vespa-bulk: ${err instanceof CheckpointUnwritableError ? '' : 'feed stopped: '}${err.message}.`;
  const hint = (file: string): string => resumeHint(file, { flags: flagsNotKept(argv), inputs: files });
  if (err instanceof CheckpointUnwritableError) {
    if (checkpoint !== undefined) text += ` Continue with: ${hint(checkpoint as string)}`;
  } else if (typeof checkpoint === 'string' && existsSync(checkpoint))
    text += ` The checkpoint ${checkpoint} stands where it was last saved, before the failures that could not be recorded (what follows it is sent again); once the failure output can be written, continue with: ${hint(checkpoint)}`;
  else
    text +=
      ' No checkpoint was saved: once the failure output can be written, run the same command again (every operation is sent again).';
  process.stderr.write(`${red(text)}\n`);
  process.exitCode = 1;
}

/** Where the failed operations went: the one line a user needs to find and feed them again. */
export function reportFailuresFile(count: number, file: string): void {
  process.stderr.write(
    `${red(`vespa-bulk: ${count} ${count === 1 ? 'operation' : 'operations'} failed: written to ${file} (reasons in ${file}.reasons.jsonl)`)}\n`,
  );
}

/** Why a feed stopped early, as the line after "feed stopped:" says it. */
function stopReasonText(outcome: FeedOutcome, maxFailureSeconds: number, endpoint: string): string {
  switch (outcome.stopped) {
    case 'breaker':
      return `only failures for ${maxFailureSeconds} s (circuit breaker)`;
    case 'unauthorized':
      return `the service answered ${outcome.authStatus}: ${authFailureHint(outcome.authStatus ?? 401)}`;
    case 'unreachable':
      if (outcome.unreachable?.code === 'VB_PROTOCOL') return outcome.unreachable.message;
      return `${outcome.unreachable?.message ?? 'nothing answers at the endpoint'}. ${unreachableHint(outcome.unreachable, endpoint)}`;
    case 'same-failure': {
      const f = outcome.sameFailure;
      if (f === undefined) return 'every operation failed alike';
      return `the first ${f.count} operations all failed alike, none succeeded: ${f.status} ${f.message}${f.hint === undefined ? '' : `. Hint: ${f.hint}`}`;
    }
    default:
      return 'interrupted';
  }
}
