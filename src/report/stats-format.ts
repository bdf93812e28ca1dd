import type { RunCounts } from './sample.js';

/**
 * The stats file (`--stats FILE.jsonl`): one JSON object per line, each with a `type`.
 *
 * - first, `run`: the run's parameters ({@link RunParams});
 * - then once a second, `point`: what happened in that second ({@link StatsPoint});
 * - `step` when a step of a stepped run ends ({@link StepRecord});
 * - last, `summary`: the run's final summary and its whole latency histogram ({@link SummaryLine}).
 *
 * Counts in a point are for its interval only (not cumulative); rates are count / `dt`. Latency histograms are
 * HdrHistogram's compressed base64 encoding of microseconds, all with the same bounds, so the histograms of
 * any points of any files add up exactly (`decodeHistogram`, then `add`). Lines are written as they happen: a
 * file cut short by a crash is still readable up to its last whole line.
 */
export type StatsLine = RunParams | StatsPoint | StepRecord | SummaryLine;

/** The first line: what ran, where, how. */
export interface RunParams {
  type: 'run';
  /** Version of this line format. */
  format: 1;
  /** The command: feed, visit, bench. */
  command: string;
  /** The endpoint the run talked to. */
  target: string;
  /** The flags as given, secrets masked. */
  flags: Record<string, unknown>;
  /** The tool and its version, e.g. `vespa-bulk 0.1.0`. */
  tool: string;
  /** Host name of the machine that ran it (tells shards apart). */
  host: string;
  /** Start, ISO 8601 UTC. */
  startTime: string;
}

/** One interval (a second) of a run: its counts ({@link RunCounts}) are those of the interval. */
export interface StatsPoint extends RunCounts {
  type: 'point';
  /** The wall-clock second (Unix epoch seconds) the interval ends at: the key that aligns shards. */
  t: number;
  /** Length of the interval in seconds: 1 but the first and the last, which are partial. */
  dt: number;
  /** Latency percentiles (ms) of the responses received in the interval; 0 when none. */
  p50Ms: number;
  /** See `p50Ms`. */
  p90Ms: number;
  /** See `p50Ms`. */
  p99Ms: number;
  /** The interval's latency histogram (µs), compressed base64; empty string when no response came. */
  histogram: string;
}

/** A step of a stepped run (a target rate held for a while). */
export interface StepRecord {
  type: 'step';
  /** The step's name, e.g. `2000/s`. */
  name: string;
  /** The asked rate, operations per second, when the step has one. */
  targetRate?: number;
  /** Start, epoch milliseconds. */
  start: number;
  /** End, epoch milliseconds. */
  end: number;
  /**
   * The bench's own figures for the step, when it judged one: its achieved rate, the p99 of the operation
   * latency (from when each operation was due, so a stall counts) and whether the step held its rate.
   */
  verdict?: StepVerdict;
}

/** A stepped bench's judgement of one step; see `StepRecord.verdict`. */
export interface StepVerdict {
  achievedRate: number;
  p99Ms: number;
  held?: boolean;
}

/** The last line: the summary the command printed, and the latency histogram of the whole run. */
export interface SummaryLine {
  type: 'summary';
  /** End, epoch milliseconds. */
  end: number;
  /** Seconds from the start to the end. */
  seconds: number;
  /** The command's own summary (the JSON it prints). */
  summary: Record<string, unknown>;
  /** Latency histogram (µs) of the whole run, compressed base64. */
  histogram: string;
}

/** A recorded run read back (or merged from several shards): what a report is drawn from. */
export interface RecordedRun {
  /** The parameters of each shard (one for a single run). */
  params: RunParams[];
  points: StatsPoint[];
  steps: StepRecord[];
  /** Absent when the run did not finish (a file cut short). */
  summary?: SummaryLine;
}
