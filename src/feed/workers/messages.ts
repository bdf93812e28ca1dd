import type { WireError } from '../../threads/errors.js';
import type { FailureReason } from '../failures.js';
import type { FeedOptions } from '../options.js';
import type { OperationResult } from '../operation-result.js';
import type { InputInfo, OpenPosition } from '../source.js';
import type { FeedStatsState } from '../stats.js';
import type { StopReason } from '../driver.js';
import type { SameFailureVerdict } from '../same-failure.js';
import type { QueueReading } from '../throttle.js';
import type { ItemBatch } from './batch.js';

/** What a worker thread starts with (`workerData`). */
export interface WorkerStart {
  /** FeedOptions that can cross a thread: no functions, signal, stream, dispatcher or files. */
  options: FeedOptions;
  inputs: InputInfo[];
  /** Where failures go (written by the coordinator); the worker only names it in checkpoints. */
  failuresPath?: string;
  /** Forward results for `onResult`: all, only failed ones, or none. */
  results: 'all' | 'failed' | 'none';
}

/** Coordinator to worker; `snapshot` asks for a `WorkerSnapshot` (for a checkpoint), answered at once. */
export type ToWorker =
  | ({ type: 'batch' } & ItemBatch)
  | { type: 'end' }
  | { type: 'stop'; reason: StopReason }
  | { type: 'snapshot' };

/** One failed operation for the coordinator's failure output. */
export interface RelayedFailure {
  bytes: Uint8Array;
  reason: FailureReason;
  verbatim: boolean;
}

/** A worker's state at one moment: the last batch it took in, its counters, its in-flight count and limit. */
export interface WorkerState {
  accepted: number;
  stats: FeedStatsState;
  inflight: number;
  limit: number;
  queue?: QueueReading | undefined;
}

/**
 * A worker's state with what a checkpoint needs, consistent in itself: the position of every
 * operation of batches up to `accepted` that is not finished, in input order; the failures of the others were
 * posted before it. Sent only when asked and at the end: the list can be long.
 */
export interface WorkerSnapshot extends WorkerState {
  unfinished: OpenPosition[];
}

/** Worker to coordinator. */
export type FromWorker =
  | { type: 'taken'; n: number }
  | { type: 'failures'; failures: RelayedFailure[] }
  | { type: 'results'; results: OperationResult[] }
  | ({ type: 'state' } & WorkerState)
  | ({ type: 'snapshot' } & WorkerSnapshot)
  | { type: 'stopping'; reason: StopReason }
  | ({
      type: 'done';
      abandoned: number;
      stopped?: StopReason;
      authStatus?: number;
      unreachable?: WireError;
      sameFailure?: SameFailureVerdict;
      error?: WireError;
    } & WorkerSnapshot);

/** The feed worker's messages both ways and what it starts with, for `WorkerChannel` and `ParentChannel`. */
export interface FeedProtocol {
  start: WorkerStart;
  toWorker: ToWorker;
  fromWorker: FromWorker;
}
