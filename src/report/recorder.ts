import { emptyLatencyHistogram, encodeHistogram, percentileMs, type LatencyHistogram } from './histogram.js';
import { queueOf, type RunSample, type RunSampler } from './sample.js';
import type {
  RecordedRun,
  RunParams,
  StatsLine,
  StatsPoint,
  StepRecord,
  StepVerdict,
  SummaryLine,
} from './stats-format.js';

/** Options of a {@link RunRecorder}. */
export interface RecorderOptions {
  /** The run's parameters: the first line of a stats file, the parameters table of a report. */
  params: Omit<RunParams, 'type' | 'format'>;
  /** Reads the run's totals; called once a second and at the end. */
  sample: RunSampler;
  /** Called with every line as it is made (the stats file writer listens here). */
  onLine?: (line: StatsLine) => void;
}

/** The shortest interval a point covers while the points catch up on the clock after a stall. */
const minPointMs = 600;

/**
 * Samples a run once a second, on the wall-clock second so that shards on several machines line up, and
 * keeps one {@link StatsPoint} per second: counts by difference of the cumulative totals, the second's latency
 * histogram by difference of cumulative histograms (so nothing is added to the per-operation path).
 * @example
 * ```ts
 * import { writeFileSync } from 'node:fs';
 * import { hostname } from 'node:os';
 * import { Feeder } from 'vespa-bulk';
 * import { feedSampler, renderReport, RunRecorder, StatsFileWriter } from 'vespa-bulk/report';
 *
 * const feeder = new Feeder({ endpoint: 'http://127.0.0.1:8080' });
 * const stats = new StatsFileWriter('feed.stats.jsonl');
 * const recorder = new RunRecorder({
 *   params: { command: 'feed', target: 'http://127.0.0.1:8080', flags: {}, tool: 'my-loader', host: hostname(), startTime: new Date().toISOString() },
 *   sample: feedSampler(feeder),
 *   onLine: (line) => stats.write(line),
 * });
 * const outcome = await feeder.run('corpus.jsonl');
 * const run = recorder.finish({ ...outcome.summary });
 * stats.close();
 * writeFileSync('feed.html', renderReport(run));
 * ```
 */
export class RunRecorder {
  private readonly points: StatsPoint[] = [];
  private readonly steps: StepRecord[] = [];
  private readonly params: RunParams;
  private last: RunSample;
  private lastAt: number;
  private lastT = 0;
  private timer: NodeJS.Timeout | undefined;
  private openStep: Omit<StepRecord, 'end'> | undefined;
  private summaryLine: SummaryLine | undefined;
  private readonly startedAt = performance.now();

  constructor(private readonly options: RecorderOptions) {
    this.params = { type: 'run', format: 1, ...options.params };
    options.onLine?.(this.params);
    this.last = options.sample();
    this.lastAt = performance.now();
    this.schedule();
  }

  /** Marks the start of a step (ending the one before): a stepped bench calls this at each new rate. */
  step(name: string, targetRate?: number): void {
    this.endStep();
    this.openStep = { type: 'step', name, ...(targetRate !== undefined && { targetRate }), start: Date.now() };
  }

  /** Ends the current step, if any, with the bench's verdict on it when there is one. */
  endStep(verdict?: StepVerdict): void {
    if (this.openStep === undefined) return;
    const step: StepRecord = { ...this.openStep, end: Date.now(), ...(verdict !== undefined && { verdict }) };
    this.openStep = undefined;
    this.steps.push(step);
    this.options.onLine?.(step);
  }

  /**
   * Takes the last (partial) point, ends any open step and adds the summary line. `summary` is the command's own
   * summary; the recorder's timer stops here.
   */
  finish(summary: Record<string, unknown>): RecordedRun {
    if (this.summaryLine === undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
      const end = Date.now();
      this.take(this.lastT === 0 ? Math.ceil(end / 1000) : this.lastT + 1);
      this.endStep();
      this.summaryLine = {
        type: 'summary',
        end,
        seconds: (performance.now() - this.startedAt) / 1000,
        summary,
        histogram: encodeHistogram(this.last.latencyUs),
      };
      this.options.onLine?.(this.summaryLine);
    }
    return this.recorded();
  }

  /** What was recorded so far. */
  recorded(): RecordedRun {
    return {
      params: [this.params],
      points: [...this.points],
      steps: [...this.steps],
      ...(this.summaryLine !== undefined && { summary: this.summaryLine }),
    };
  }

  private schedule(): void {
    // Timers drift; aiming each tick at the next whole second keeps every machine's points on the same seconds.
    // After a stall (a tick late by more than a second) the labels have fallen behind the clock: rather than skip a
    // second, the next points are taken at least `minPointMs` apart until they are back on it.
    const now = Date.now();
    const second = this.lastT === 0 ? Math.floor(now / 1000) + 1 : this.lastT + 1;
    const at = this.lastT === 0 ? second * 1000 : Math.max(second * 1000, now + minPointMs);
    this.timer = setTimeout(() => {
      this.take(second);
      this.schedule();
    }, at - now);
    // A recorder never keeps a finished run's process alive.
    this.timer.unref();
  }

  private take(t: number): void {
    const now = performance.now();
    const s = this.options.sample();
    const prev = this.last;
    const h: LatencyHistogram = emptyLatencyHistogram();
    h.add(s.latencyUs);
    h.subtract(prev.latencyUs);
    const status: Record<string, number> = {};
    for (const [code, n] of Object.entries(s.status)) {
      const d = n - (prev.status[code] ?? 0);
      if (d > 0) status[code] = d;
    }
    const point: StatsPoint = {
      type: 'point',
      t,
      dt: Number(((now - this.lastAt) / 1000).toFixed(3)),
      ok: s.ok - prev.ok,
      failed: s.failed - prev.failed,
      retries: s.retries - prev.retries,
      status,
      exceptions: s.exceptions - prev.exceptions,
      inflight: s.inflight,
      inflightLimit: s.inflightLimit,
      ...queueOf(s),
      sentBytes: s.sentBytes - prev.sentBytes,
      receivedBytes: s.receivedBytes - prev.receivedBytes,
      p50Ms: percentileMs(h, 50),
      p90Ms: percentileMs(h, 90),
      p99Ms: percentileMs(h, 99),
      histogram: h.totalCount === 0 ? '' : encodeHistogram(h),
    };
    this.last = s;
    this.lastAt = now;
    this.lastT = t;
    this.points.push(point);
    this.options.onLine?.(point);
  }
}
