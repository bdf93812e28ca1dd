import { existsSync } from 'node:fs';
import { checkFeedOptions } from './check-options.js';
import { readFeedCheckpointSync, type FeedCheckpoint } from './feed-checkpoint.js';
import { resumedOptions } from './recorded-options.js';
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
 * `options` with what the checkpoint they continue recorded (`resumedOptions`): `resume`, or the `checkpoint` file
 * when it exists. Read here, synchronously, because the endpoint it may give is needed before the feed is made.
 * `resume` stays as given, so the run names the file when it checks the inputs.
 */
function optionsToResume(options: FeedOptions): FeedOptions {
  checkFeedOptions(options);
  const path = typeof options.checkpoint === 'string' ? options.checkpoint : undefined;
  const from = options.resume ?? (path !== undefined && existsSync(path) ? path : undefined);
  if (from === undefined) return options;
  const checkpoint = typeof from === 'string' ? readFeedCheckpointSync(from) : from;
  return resumedOptions(options, checkpoint, typeof from === 'string' ? `checkpoint '${from}'` : undefined);
}

/**
 * One feed, on this thread or over `FeedOptions.workers` threads (more than 1: the input is read and cut here,
 * each operation routed by its id to a worker thread): one summary, failure output and checkpoint either way.
 * Beside `feed()`, for a caller that wants to watch (`progress()`, `snapshot()`, `checkpoint()`) or stop it.
 */
export class Feeder {
  private readonly runner: FeedEngine | WorkerFeeder;

  constructor(options: FeedOptions = {}) {
    const resolved = optionsToResume(options);
    this.runner = resolveWorkers(undefined, resolved) > 1 ? new WorkerFeeder(resolved) : new FeedEngine(resolved);
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
