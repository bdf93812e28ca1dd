import type { VespaBulkError } from '../core/errors.js';
import type { FeedCheckpoint } from './feed-checkpoint.js';
import type { FailureWriter } from './failures.js';
import type { FeedSource, InputInfo, InputPosition, OpenPosition, ReadProgress } from './source.js';
import type { FeedStats, FeedSummary } from './stats.js';
import type { SameFailureVerdict } from './same-failure.js';
import type { QueueReading } from './throttle.js';

/**
 * The seam between the `Feeder`, which owns a feed's run (its failure output, checkpoint, signal and outcome), and
 * what sends the operations: the `FeedEngine` on this thread, or the `WorkerCoordinator` of worker threads. A
 * driver owns its counters, its operations and its stop; the Feeder asks it for them and never changes them.
 */

/**
 * Why a feed stopped early. interrupted: Ctrl-C or the caller's signal; breaker: nothing but failures for too
 * long; unauthorized: the service refused the credentials (401/403), which no retry and no later operation can
 * change; unreachable: nothing answered at the endpoint from the start (refused, unknown host, TLS handshake
 * failed), where retrying for the breaker's minute only delays the message; same-failure: the first 100 operations
 * all failed with the same final 4xx and none succeeded (`feed/same-failure.ts`).
 */
export type StopReason = 'interrupted' | 'breaker' | 'unauthorized' | 'unreachable' | 'same-failure';

/** Where failed operations go: a FailureWriter, or (in a worker thread) a relay to the thread that writes. */
export type FailureOutput = Pick<FailureWriter, 'write' | 'drained' | 'close' | 'count' | 'path'>;

/** What the run lends a driver for one feed: the inputs, the checkpoint it continues, the failure output, the read count. */
export interface DriverRun {
  inputs: InputInfo[];
  resume?: FeedCheckpoint;
  failures?: FailureOutput;
  readProgress: ReadProgress;
  /** Whether a checkpoint is kept: a coordinator then keeps the positions of what its workers have not taken. */
  keepsCheckpoint: boolean;
}

/** How a driver's feed ended: the summary, and what only the driver can know of a stop. */
export interface DriverEnd {
  summary: FeedSummary;
  /** With a stop for `unauthorized`: the status that refused the credentials (401 or 403). */
  authStatus?: number;
  /** With a stop for `unreachable`: the error naming the endpoint and the cause (VB_UNREACHABLE or VB_PROTOCOL). */
  unreachable?: VespaBulkError;
  /** With a stop for `same-failure`: the failure every operation so far ended in, and a hint. */
  sameFailure?: SameFailureVerdict;
}

/** A driver's figures now: its counters (read only to the caller), in-flight count and limit, and items read. */
export interface DriverFigures {
  stats: Readonly<FeedStats>;
  inflight: number;
  limit: number;
  /** The queue as the adaptive limit reads it (workers: the shortest round trip of all, their waiting added). */
  queue?: QueueReading | undefined;
  read: number;
}

/** Where a checkpoint cut now stands: the operations read and not finished (in input order), and the read position. */
export interface DriverCut {
  open: Iterable<OpenPosition>;
  read: InputPosition | undefined;
}

/** What the `Feeder` drives. */
export interface FeedDriver {
  /** How many threads feed. */
  readonly workers: number;
  /** Why it is stopping, once it is (a stop of its own, or the Feeder's `stop`). */
  readonly stopReason: StopReason | undefined;
  /** Work before the run's outputs are opened, which may refuse the feed (a transform that cannot be loaded). */
  prepare(): Promise<void>;
  /** Feeds `source` with `run`'s outputs; resolves once every operation is finished or the feed stopped. */
  feed(source: FeedSource, run: DriverRun): Promise<DriverEnd>;
  /** Nothing more is sent; what is unfinished stays so (the first reason given stands). */
  stop(reason: StopReason): void;
  figures(): DriverFigures;
  /** The checkpoint's cut as the driver knows it now (with workers: as of their last answers). */
  cut(): DriverCut;
  /**
   * Runs `save` at a moment when `cut()` agrees with the failure output (on this thread: now; with workers: once
   * each has answered for its operations), and resolves once it is saved. A round that cannot complete saves nothing.
   */
  atConsistentCut(save: () => Promise<void>): Promise<void>;
}
