import {
  compressionFlag,
  endpointVia,
  protocolNote,
  transportFromArgs,
  withTransportOptions,
  type TransportArgs,
} from '../transport-options.js';
import { listedCommand } from '../command-list.js';
import type { Argv, CommandModule } from 'yargs';
import { VespaBulkError } from '../../core/errors.js';
import { securityHeaders, transportSecurity } from '../../http/tls.js';
import type { Feeder } from '../../feed/feeder.js';
import type { Compression } from '../../feed/options.js';
import { repeatable } from '../repeatable.js';
import { withSecurityOptions, type SecurityArgs } from '../security-options.js';
import { connectionFromArgs, describeTargetOrigin, withTargetOptions, type TargetArgs } from '../target-options.js';
import { ProgressLine, rateMeter } from '../progress.js';
import type { ProgressSnapshot } from '../progress-format.js';
import { waitIfAsked, withWaitOption, type WaitArgs } from '../wait-option.js';
import { exitCodeOfSignal } from '../exit-codes.js';
import { stopOnSignal } from '../stop-on-signal.js';
import { bench, type BenchOptions, type BenchResult, type BenchStep } from '../../bench/bench.js';
import { parseRamp, parseRates } from '../../bench/load-profile.js';
import { RunOutputs, withRunOutputOptions, type RunOutputArgs } from '../run-outputs.js';
import { feedSampler, SequenceSampler } from '../../report/sample.js';
import { benchResultJson, writeSummary, feedSummaryJson } from '../summary-names.js';
import { parseHeaderFlags } from '../header-flags.js';

/** `vespa-bulk bench`: flags into BenchOptions, each step on stderr, the result as JSON on stdout. */
interface BenchArgs extends SecurityArgs, TargetArgs, WaitArgs, RunOutputArgs, TransportArgs {
  app?: string;
  'config-url'?: string;
  template?: string;
  'document-type'?: string[];
  namespace: string;
  duration?: number;
  count?: number;
  'dry-run': boolean;
  mix?: string;
  rate?: string;
  ramp?: string;
  'step-duration': number;
  'slo-ms': number;
  'max-429-share': number;
  seed?: number;
  inflight?: number;
  timeout?: number;
  header?: string[];
  compression: Compression;
  progress: number;
  quiet: boolean;
}

const epilog = `Documents: generated to the schemas of --app DIR|ZIP (or of the application active on --config-url), every field with a value its type takes, of realistic size; or like --template doc.json (a put operation), its values varied per document (strings of the same length, numbers within their order of magnitude). Ids are id:<namespace>:<type>::<run>-<n>. Real writes unless --dry-run. --mix put=80,update=15,remove=5 adds updates (assign one field) and removes of documents put before.

Load profiles: without --rate, as fast as the cluster takes (the adaptive in-flight limit). --rate N: a fixed arrival rate, open loop; each operation's latency counts from when it was due, not when it was sent, so a cluster that falls behind shows in the percentiles. --rate 1000,2000,4000 or --ramp FROM:TO:STEP: steps of --step-duration seconds each, stopping at the first step not held, and reporting the highest rate held.

A step HOLDS its rate when all of: the achieved rate (operations finished per second of the step, drain included) is at least 95% of the asked rate; the p99 operation latency (from the due time, retries included) is at most --slo-ms; and at most --max-429-share of the answers were 429.

Output: JSON on stdout: each step's asked and achieved rate, start and end time, p50/p99, 429 share, whether held, and its feed summary (latency per status code, operation latency). Exit code: 0 all operations succeeded, 1 some failed, 2 bad usage.`;

function builder(y: Argv): Argv<BenchArgs> {
  return withTransportOptions(withRunOutputOptions(withWaitOption(withTargetOptions(withSecurityOptions(y)))))
    .option('app', {
      type: 'string',
      describe: 'Application package (directory, .zip or gzipped tar): generate documents to its schemas',
    })
    .option('config-url', {
      type: 'string',
      describe: 'Config server URL: generate documents to the schemas of its active application',
    })
    .option('template', {
      type: 'string',
      describe: 'A template put operation (JSON file): documents like it, values varied',
    })
    .option('document-type', {
      type: 'string',
      array: true,
      describe: 'With a schema: only these document types (default: all, in turn)',
    })
    .option('namespace', { type: 'string', default: 'bench', describe: 'Namespace of generated ids (with a schema)' })
    .option('duration', {
      type: 'number',
      describe: 'Seconds to run (default 60 unless --count; with steps, see --step-duration)',
    })
    .option('count', { type: 'number', describe: 'Operations to send (per step with steps)' })
    .option('dry-run', {
      type: 'boolean',
      default: false,
      describe: 'Send dryRun=true: the container only, nothing stored',
    })
    .option('mix', {
      type: 'string',
      describe: "Operation mix by weight, e.g. 'put=80,update=15,remove=5' (default puts only)",
    })
    .option('rate', {
      type: 'string',
      describe: 'Fixed arrival rate in operations per second; several, comma-separated, are steps',
    })
    .option('ramp', { type: 'string', describe: 'Steps FROM:TO:STEP operations per second, e.g. 1000:8000:1000' })
    .option('step-duration', { type: 'number', default: 30, describe: 'Seconds per step' })
    .option('slo-ms', {
      type: 'number',
      default: 100,
      describe: 'p99 operation latency (ms) a step must stay under to be held',
    })
    .option('max-429-share', {
      type: 'number',
      default: 0.01,
      describe: 'Share of answers (0..1) that may be 429 in a held step',
    })
    .option('seed', { type: 'number', describe: 'Seed of the generated values (same seed, same documents)' })
    .option('inflight', { type: 'number', describe: 'Fixed in-flight limit (default: adaptive)' })
    .option('timeout', { type: 'number', describe: 'Per-operation deadline in seconds, across retries' })
    .option('header', repeatable("Extra header 'Name: value' (repeatable)"))
    .option('compression', compressionFlag)
    .option('progress', {
      type: 'number',
      default: 5,
      describe: 'Seconds between progress lines when stderr is not a terminal',
    })
    .option('quiet', { alias: 'q', type: 'boolean', default: false, describe: 'No progress line and no step lines' })
    .conflicts('rate', 'ramp')
    .epilog(epilog) as unknown as Argv<BenchArgs>;
}

/** The options of a bench from its flags (exported for tests). */
export function toBenchOptions(argv: BenchArgs): { options: BenchOptions; targetNote?: string } {
  const given = [argv.app, argv['config-url'], argv.template].filter((s) => s !== undefined).length;
  if (given !== 1)
    throw new VespaBulkError(
      'VB_USAGE',
      'bench needs exactly one of --app DIR|ZIP, --config-url URL or --template doc.json',
    );
  const connection = connectionFromArgs(argv, parseHeaderFlags(argv.header));
  const options: BenchOptions = {
    endpoint: connection.url,
    ...transportFromArgs(argv),
    compression: argv.compression,
    headers: securityHeaders(connection.security),
    stepSeconds: argv['step-duration'],
    sloMs: argv['slo-ms'],
    max429Share: argv['max-429-share'],
    namespace: argv.namespace,
  };
  Object.assign(options, transportSecurity(connection.security));
  if (argv.app !== undefined) options.app = argv.app;
  if (argv['config-url'] !== undefined) options.configUrl = argv['config-url'];
  if (argv.template !== undefined) options.template = argv.template;
  if (argv['document-type'] !== undefined) options.documentTypes = argv['document-type'];
  if (argv.duration !== undefined) options.durationSeconds = argv.duration;
  if (argv.count !== undefined) options.count = argv.count;
  if (argv['dry-run']) options.dryRun = true;
  if (argv.mix !== undefined) options.mix = argv.mix;
  if (argv.rate !== undefined) {
    const rates = parseRates(argv.rate);
    options.rate = rates.length === 1 ? rates[0] : rates;
  }
  if (argv.ramp !== undefined) options.rate = parseRamp(argv.ramp);
  if (argv.seed !== undefined) options.seed = argv.seed;
  if (argv.inflight !== undefined) options.inflight = argv.inflight;
  if (argv.timeout !== undefined) options.deadlineMs = argv.timeout * 1000;
  const targetNote = describeTargetOrigin(connection);
  return { options, ...(targetNote !== undefined && { targetNote }) };
}

function describeStep(s: BenchStep): string {
  const asked = s.targetRate !== undefined ? `asked ${s.targetRate}/s, ` : '';
  return `vespa-bulk: ${s.name}: ${asked}achieved ${s.achievedRate.toFixed(0)}/s, p50 ${s.p50Ms} ms, p99 ${s.p99Ms} ms, 429 ${(s.throttledShare * 100).toFixed(2)}%, failed ${s.failed}${verdictText(s.held)}\n`;
}

/** A step with an asked rate held it or not; one without (adaptive) is not judged. */
function verdictText(held: boolean | undefined): string {
  if (held === undefined) return '';
  return held ? ': held' : ': NOT held';
}

async function handler(argv: BenchArgs): Promise<void> {
  const { options, targetNote } = toBenchOptions(argv);
  if (targetNote !== undefined && !argv.quiet) process.stderr.write(`vespa-bulk: ${targetNote}\n`);
  const controller = new AbortController();
  options.signal = controller.signal;
  const stop = stopOnSignal(controller, {
    message: 'vespa-bulk: stopping: finishing in-flight operations (Ctrl-C again to quit at once)',
  });
  let progress: ProgressLine | undefined;
  // --stats, --report and --metrics-port see the whole bench as one run, its steps marked.
  const outputs = await RunOutputs.open(argv, {
    command: 'bench',
    target: options.endpoint!,
    argv: argv as unknown as Record<string, unknown>,
  });
  let told = false;
  options.onProtocol = (protocol, why) => {
    if (told || argv.quiet) return;
    told = true;
    process.stderr.write(
      `${protocolNote(protocol, endpointVia(options.endpoint!, options.proxy), options.protocol, why)}\n`,
    );
  };
  const sampler = new SequenceSampler();
  let attached = false;
  options.onStepStart = (step, feeder: Feeder) => {
    sampler.next(feedSampler(feeder));
    if (!attached) {
      outputs.attach(sampler.sample);
      attached = true;
    }
    outputs.recorder?.step(step.name, step.targetRate);
    const opsRate = rateMeter();
    progress = new ProgressLine(
      (): ProgressSnapshot => {
        const p = feeder.progress();
        return {
          label: step.name,
          state: stop.signalled !== undefined ? 'stopping' : 'running',
          seconds: p.seconds,
          done: p.finished,
          unit: 'ops',
          rate: opsRate(p.ok + p.failed, p.seconds),
          ok: p.ok,
          failed: p.failed,
          retried: p.retries,
          inflight: { now: p.inflight, limit: p.limit },
          p99Ms: p.p99Ms,
        };
      },
      { enabled: !argv.quiet, plainIntervalMs: Math.max(0.1, argv.progress) * 1000 },
    );
  };
  options.onStepEnd = (step) => {
    outputs.recorder?.endStep({
      achievedRate: step.achievedRate,
      p99Ms: step.p99Ms,
      ...(step.held !== undefined && { held: step.held }),
    });
    progress?.stop(false);
    if (!argv.quiet) process.stderr.write(describeStep(step));
  };
  await waitIfAsked(argv, options.endpoint!, {
    headers: options.headers ?? {},
    ...(options.tls !== undefined && { tls: options.tls }),
    ...(options.proxy !== undefined && { proxy: options.proxy }),
    ...(options.proxyTls !== undefined && { proxyTls: options.proxyTls }),
    ...(options.protocol !== undefined && { protocol: options.protocol }),
  });
  let printed: Record<string, unknown> | undefined;
  try {
    const result = await bench(options);
    // The report shows the steps in their own table; its summary gets the rest.
    // Flat, as the other commands' summaries: the whole run's feed figures, then the verdict.
    const { steps: _steps, summary, criteria, ...overall } = result;
    printed = {
      ...overall,
      ...feedSummaryJson(summary),
      ...(criteria !== undefined && {
        'criteria.slo.ms': criteria.sloMs,
        'criteria.max.429.share': criteria.max429Share,
        'criteria.min.achieved.share': criteria.minAchievedShare,
      }),
    };
    writeSummary(benchResultJson(result));
    if (!argv.quiet && result.profile === 'steps') {
      const best = result.highestHeldRate;
      process.stderr.write(
        `vespa-bulk: highest rate held: ${best === undefined ? 'none' : `${best}/s`}${result.stoppedPastKnee ? ' (stopped at the first step not held)' : ''}\n`,
      );
    }
    if (!argv.quiet && result.written !== undefined && result.summary.ok > 0)
      process.stderr.write(leftBehindNote(result.written, options.endpoint!));
    if (result.steps.some((s) => s.failed > 0)) process.exitCode = 1;
  } finally {
    progress?.stop(false);
    await outputs.finish(printed, argv.quiet);
    stop.release();
  }
  if (stop.signalled !== undefined) process.exitCode = exitCodeOfSignal(stop.signalled);
}

/**
 * Where the bench's documents stay and the command that deletes them: this run's only (its ids' tag), never the
 * whole namespace, which --namespace may have pointed at documents of the user's own.
 */
function leftBehindNote(written: NonNullable<BenchResult['written']>, endpoint: string): string {
  const selection = `'id.specific =~ "^${written.runTag}-"'`;
  const where = written.places.map((p) => `${p.namespace}/${p.documentType}`);
  return [
    `vespa-bulk: the documents this bench wrote stay in the cluster (ids ${written.places.map((p) => `id:${p.namespace}:${p.documentType}::${written.runTag}-<n>`).join(', ')}); delete them with:`,
    ...where.map((w) => `  vespa-bulk delete-where ${w} --selection ${selection} -t ${endpoint}`),
    '',
  ].join('\n');
}

export const commands: CommandModule[] = [
  {
    ...listedCommand('bench'),
    builder: builder as unknown as CommandModule['builder'],
    handler: handler as unknown as CommandModule['handler'],
  },
];
