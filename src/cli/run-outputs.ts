import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { Argv } from 'yargs';
import { VespaBulkError } from '../core/errors.js';
import { writeFileAtomically } from '../fs/atomic-write.js';
import { prepareOutputFile } from '../fs/output-file.js';
import { maskHeaders } from '../http/headers.js';
import { redact } from '../http/tls.js';
import { proxySecrets } from '../http/proxy/proxy-route.js';
// The report modules (chart assets, the Prometheus encoder, the recorder) are imported only when a flag asks
// for them: eagerly they cost a plain feed about 20 MB of resident memory.
import type { MetricsServer } from '../report/metrics-server.js';
import type { RunRecorder } from '../report/recorder.js';
import type { RunSampler } from '../report/sample.js';
import type { StatsFileWriter } from '../report/stats-file.js';
import { tookDefault } from './given-flags.js';

/** `--stats`, `--report`, `--metrics-port`, `--metrics-host`: what any long run (feed, visit, bench) can record. */
export interface RunOutputArgs {
  stats?: string;
  report?: string;
  'metrics-port'?: number;
  'metrics-host': string;
}

const group = 'Recording:';

/** Adds the recording flags to a command. */
export function withRunOutputOptions<T>(y: Argv<T>): Argv<T & RunOutputArgs> {
  return y
    .option('stats', {
      type: 'string',
      group,
      describe:
        "Write the run's time series to FILE.jsonl: a parameters line, one line per second (rates, status codes, in flight, latency with its HDR histogram), a summary line",
    })
    .option('report', {
      type: 'string',
      group,
      describe:
        'Write an HTML report of the run to FILE.html: charts over time, latency distribution, summary; one file that opens offline',
    })
    .option('metrics-port', {
      type: 'number',
      group,
      describe:
        'Serve the running counters and latency histogram in the Prometheus format at http://<metrics-host>:PORT/metrics',
    })
    .option('metrics-host', {
      type: 'string',
      group,
      default: '127.0.0.1',
      describe: 'Address for --metrics-port (default 127.0.0.1: this machine only; 0.0.0.0 for a remote Prometheus)',
    }) as unknown as Argv<T & RunOutputArgs>;
}

/** The flags as given, for the parameters line: defaults and yargs' duplicates (camelCase, one-letter aliases) dropped, secrets masked. */
export function recordedFlags(argv: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(argv)) {
    if (value === undefined || key === '$0' || /[A-Z]/.test(key) || key.length === 1 || tookDefault(argv, key))
      continue;
    if (key === '_') continue;
    if (/token|secret|password/i.test(key)) out[key] = '***';
    // A proxy's URL may carry its credentials.
    else if (key === 'proxy' && typeof value === 'string') out[key] = redact(value, proxySecrets(value, {}));
    else if (/header$/.test(key) && Array.isArray(value)) out[key] = value.map((h) => maskHeaderFlag(String(h)));
    else out[key] = value;
  }
  return out;
}

function maskHeaderFlag(flag: string): string {
  const colon = flag.indexOf(':');
  if (colon < 0) return flag;
  const name = flag.slice(0, colon).trim();
  const masked = maskHeaders({ [name]: flag.slice(colon + 1).trim() })[name];
  return `${name}: ${masked}`;
}

// As main.ts' ownVersion(), read here so that the commands need not import main.
function toolVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string })
    .version;
}

/**
 * The recording of one run as the CLI asks for it. Open it before the run (a bad path or a port in use is bad
 * usage before any request), attach the run's sampler when it starts, finish with the command's summary.
 */
export class RunOutputs {
  /** The recorder, once a run is attached and a stats file or report was asked for: a stepped bench marks its steps here. */
  recorder: RunRecorder | undefined;
  private sampler: RunSampler | undefined;
  private constructor(
    private readonly args: RunOutputArgs,
    private readonly params: { command: string; target: string; flags: Record<string, unknown>; tool: string },
    private readonly stats: StatsFileWriter | undefined,
    private readonly metrics: MetricsServer | undefined,
    private readonly Recorder: typeof RunRecorder | undefined,
  ) {}

  /** Opens the stats file and starts the metrics endpoint, as the flags ask. */
  static async open(
    args: RunOutputArgs,
    params: { command: string; target: string; argv: Record<string, unknown> },
  ): Promise<RunOutputs> {
    if (args.report !== undefined && args.report === args.stats)
      throw new VespaBulkError('VB_USAGE', '--report and --stats name the same file');
    // Checked before the run sends anything: a missing folder made, a path that cannot be written refused.
    if (args.stats !== undefined) prepareOutputFile(args.stats, '--stats file');
    if (args.report !== undefined) prepareOutputFile(args.report, '--report file');
    const port = args['metrics-port'];
    if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535))
      throw new VespaBulkError('VB_USAGE', `--metrics-port must be a port number (0-65535), not ${port}`);
    const stats =
      args.stats !== undefined ? new (await import('../report/stats-file.js')).StatsFileWriter(args.stats) : undefined;
    // The endpoint listens before the run exists; its sampler reads the outputs made just below.
    const box: { outputs?: RunOutputs } = {};
    let metrics: MetricsServer | undefined;
    if (port !== undefined) {
      const { emptySample } = await import('../report/sample.js');
      const { startMetricsServer } = await import('../report/metrics-server.js');
      const idle = emptySample();
      metrics = await startMetricsServer({
        port,
        host: args['metrics-host'],
        sample: () => box.outputs?.sampler?.() ?? idle,
      });
    }
    // attach() is synchronous (the run has started by then), so the recorder's module is loaded here.
    const Recorder =
      args.stats !== undefined || args.report !== undefined
        ? (await import('../report/recorder.js')).RunRecorder
        : undefined;
    const outputs = new RunOutputs(
      args,
      {
        command: params.command,
        target: redact(params.target, []),
        flags: recordedFlags(params.argv),
        tool: `vespa-bulk ${toolVersion()}`,
      },
      stats,
      metrics,
      Recorder,
    );
    if (metrics !== undefined) process.stderr.write(`vespa-bulk: metrics at ${metrics.url}\n`);
    box.outputs = outputs;
    return outputs;
  }

  /** The port the metrics endpoint listens on, when there is one. */
  get metricsPort(): number | undefined {
    return this.metrics?.port;
  }

  /** Whether anything was asked for (a stats file, a report, the metrics endpoint): else attach() need not be called. */
  get recording(): boolean {
    return this.metrics !== undefined || this.Recorder !== undefined;
  }

  /** Starts recording `sample` (the run has begun). */
  attach(sample: RunSampler): void {
    this.sampler = sample;
    if (this.Recorder === undefined) return;
    this.recorder = new this.Recorder({
      params: { ...this.params, host: hostname(), startTime: new Date().toISOString() },
      sample,
      ...(this.stats !== undefined && { onLine: (line) => this.stats!.write(line) }),
    });
  }

  /** Ends the recording with the command's summary: the summary line, the report, the endpoint closed. */
  async finish(summary: Record<string, unknown> | undefined, quiet = false): Promise<void> {
    try {
      if (this.recorder !== undefined && summary !== undefined) {
        const run = this.recorder.finish(summary);
        if (this.args.report !== undefined) {
          const { renderReport } = await import('../report/html.js');
          await writeFileAtomically(this.args.report, renderReport(run));
          if (!quiet) process.stderr.write(`vespa-bulk: report written to ${this.args.report}\n`);
        }
      }
    } finally {
      this.stats?.close();
      await this.metrics?.close();
    }
  }
}
