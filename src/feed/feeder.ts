import type { FeedCheckpoint } from './checkpoint.js';
import { FeedEngine } from './engine.js';
import type { FeedOptions } from './options.js';
import type { FeedOutcome, FeedProgress, StopReason } from './run.js';
import type { FeedSource } from './source.js';
import type { FeedCounters } from './stats.js';
import { WorkerFeeder } from './workers/coordinator.js';

export type { FeedOutcome, FeedProgress, StopReason } from './run.js';

/**
 * `FeedOptions.workers`, or its default: 1. Measured against the container's Jetty on 2 cores
 * (`npx tsx benchmarks/jetty/run.ts workers`, and the README), a second worker fed no faster and took 1.4x the CPU and twice
 * the memory per document; one thread over HTTP/2 moves ~30,000 operations/s there. A larger default waits for
 * a machine where it measurably gains.
 */
export function resolveWorkers(_source: FeedSource | undefined, options: FeedOptions): number {
  return options.workers ?? 1;
}

/**
 * One feed, on this thread or over `FeedOptions.workers` threads (more than 1: the input is read and cut here,
 * each operation routed by its id to a worker thread): one summary, failure output and checkpoint either way.
 * Beside `feed()`, for a caller that wants to watch (`progress()`, `snapshot()`, `checkpoint()`) or stop it.
 */
export class Feeder {
  private readonly runner: FeedEngine | WorkerFeeder;

  constructor(options: FeedOptions = {}) {
    this.runner = resolveWorkers(undefined, options) > 1 ? new WorkerFeeder(options) : new FeedEngine(options);
  }

  /** How many threads feed: 1, or `FeedOptions.workers`. */
  get workers(): number {
    return this.runner instanceof WorkerFeeder ? this.runner.workers : 1;
  }

  /** Feeds `source` (see `feed()`) and resolves with the outcome once every operation is finished or the feed stopped. Call once. */
  run(source: FeedSource): Promise<FeedOutcome> {
    return this.runner.run(source);
  }

  /** Stops the feed as Ctrl-C does: nothing more is sent, the checkpoint covers what is unfinished. */
  stop(reason: StopReason = 'interrupted'): void {
    this.runner.stop(reason);
  }

  /** Why the feed is stopping, once it is. */
  get stopReason(): StopReason | undefined {
    return this.runner.stopReason;
  }

  /** Current figures for a progress line. */
  progress(): FeedProgress {
    return this.runner.progress();
  }

  /** The running totals with a copy of the latency histogram, and the in-flight count and limit now. */
  snapshot(): FeedCounters & { inflight: number; limit: number } {
    return this.runner.snapshot();
  }

  /** The checkpoint now (as a stop would save it, without the failure output's mark). */
  checkpoint(): FeedCheckpoint {
    return this.runner.checkpoint();
  }
}
