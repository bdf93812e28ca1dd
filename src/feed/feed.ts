import { Feeder } from './feeder.js';
import type { FeedOptions } from './options.js';
import type { FeedSource } from './source.js';
import type { FeedSummary } from './stats.js';

/**
 * `FeedOptions.workers`, or its default: 1. Measured against the container's Jetty on 2 cores
 * (`npx tsx benchmarks/jetty/run.ts workers`, and the README), a second worker fed no faster and took 1.4x the CPU and twice
 * the memory per document; one thread over HTTP/2 moves ~30,000 operations/s there. A larger default waits for
 * a machine where it measurably gains.
 */
export function resolveWorkers(_source: FeedSource, options: FeedOptions): number {
  return options.workers ?? 1;
}

/** A Feeder for `source`: on this thread, or over worker threads (see `FeedOptions.workers`). */
export function createFeeder(source: FeedSource, options: FeedOptions = {}): Feeder {
  return new Feeder({ ...options, workers: resolveWorkers(source, options) });
}

/**
 * Feeds `source` and resolves with the summary once every operation is finished (or the feed was stopped).
 * Operations that finally failed are in the failure output; see FeedOptions. Rejects with `VB_UNREACHABLE`
 * when nothing answered at the endpoint from the start (the checkpoint, when enabled, is written first).
 */
export async function feed(source: FeedSource, options: FeedOptions = {}): Promise<FeedSummary> {
  const outcome = await createFeeder(source, options).run(source);
  if (outcome.unreachable !== undefined) throw outcome.unreachable;
  return outcome.summary;
}
