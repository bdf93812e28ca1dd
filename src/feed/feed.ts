import { statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { Feeder } from './feeder.js';
import type { FeedOptions } from './options.js';
import type { FeedSource } from './source.js';
import type { FeedSummary } from './stats.js';
import { WorkerFeeder } from './workers/coordinator.js';

/** Below this much input one thread is quicker than starting workers. */
const smallInputBytes = 16 * 1024 * 1024;
/** More workers than this gain nothing against one cluster's container (and each costs ~10 MB). */
const maxDefaultWorkers = 8;

/** `FeedOptions.workers`, or its default for this source: the cores (at most 8) for large files and stdin, else 1. */
export function resolveWorkers(source: FeedSource, options: FeedOptions): number {
  if (options.workers !== undefined) return options.workers;
  if (options.dispatcher !== undefined) return 1;
  const cores = Math.min(maxDefaultWorkers, availableParallelism());
  if (cores <= 1) return 1;
  const paths = typeof source === 'string' ? [source] : Array.isArray(source) && source.every((s) => typeof s === 'string') ? (source) : undefined;
  if (paths === undefined) return 1;
  if (paths.includes('-')) return cores;
  let total = 0;
  for (const p of paths) {
    try {
      total += statSync(p).size;
    } catch {
      return 1; // the feeder names the unreadable input
    }
  }
  return total < smallInputBytes ? 1 : cores;
}

/** A Feeder for `source`: on this thread, or a WorkerFeeder over worker threads (see `FeedOptions.workers`). */
export function createFeeder(source: FeedSource, options: FeedOptions = {}): Feeder | WorkerFeeder {
  const workers = resolveWorkers(source, options);
  return workers > 1 ? new WorkerFeeder({ ...options, workers }) : new Feeder(options);
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
