import type { FeedCheckpoint, FeedCheckpointCounts } from './feed-checkpoint.js';
import type { FeedStats, FeedSummary } from './stats.js';

/**
 * A resumed feed counts the whole feed: what the runs before it finished, as its checkpoint carries it
 * (`FeedCheckpoint.counts`), and this run's figures beside. Pure: the Feeder hands in the counts.
 */

/** This run's counts that a checkpoint adds up: the counters of its `FeedStats`. */
export type ThisRunCounters = Pick<
  FeedStats,
  'ok' | 'errors' | 'parseErrors' | 'skipped' | 'resumeSkipped' | 'dropped'
>;

const none: FeedCheckpointCounts = { ok: 0, errors: 0, parseErrors: 0, skipped: 0, dropped: 0, seconds: 0 };

/**
 * The counts a checkpoint saved now carries: those of `resumed` (none for a first run) and this run's, `seconds` in.
 * Undefined when `resumed` carries none: what the runs before did is unknown, and stays so.
 */
export function countsNow(
  resumed: FeedCheckpoint | undefined,
  run: ThisRunCounters,
  seconds: number,
): FeedCheckpointCounts | undefined {
  const before = resumed === undefined ? none : resumed.counts;
  if (before === undefined) return undefined;
  return {
    ok: before.ok + run.ok,
    errors: before.errors + run.errors,
    parseErrors: before.parseErrors + run.parseErrors,
    // The items this run passed over are the checkpoint's, counted in `before` already (skipped, or done).
    skipped: before.skipped + run.skipped - run.resumeSkipped,
    dropped: before.dropped + run.dropped,
    seconds: round(before.seconds + seconds),
  };
}

/**
 * The summary of a feed resumed from `resumed`: the whole feed's counts where `run` has this run's, and this run's
 * beside them (`runOperations`, ...); with no counts in the checkpoint, this run's figures marked
 * `earlierCounts: 'unknown'`. `resumeSkipped`: the items this run passed over as the checkpoint's.
 */
export function wholeFeedSummary(
  run: FeedSummary,
  resumed: FeedCheckpoint | undefined,
  resumeSkipped: number,
): FeedSummary {
  if (resumed === undefined) return run;
  const thisRun = { runOperations: run.operations, runOk: run.ok, runErrors: run.errors, runSeconds: run.seconds };
  const before = resumed.counts;
  if (before === undefined) return { ...run, ...thisRun, earlierCounts: 'unknown' };
  const seconds = Math.max(1e-6, before.seconds + run.seconds);
  const ok = before.ok + run.ok;
  const dropped = before.dropped + (run.dropped ?? 0);
  const whole: Partial<FeedSummary> = {
    // Operations read: the runs before finished all theirs (the unfinished ones are read again, and counted here).
    operations: before.ok + before.errors + run.operations,
    seconds: round(seconds),
    ok,
    okRate: round(ok / seconds),
    errors: before.errors + run.errors,
    parseErrors: before.parseErrors + run.parseErrors,
    skipped: before.skipped + run.skipped - resumeSkipped,
  };
  const summary: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(run)) {
    if (key === 'dropped') continue;
    summary[key] = key in whole ? whole[key as keyof FeedSummary] : value;
    // Where a summary without a resume has it: after `skipped`.
    if (key === 'skipped' && dropped > 0) summary.dropped = dropped;
  }
  return { ...(summary as unknown as FeedSummary), ...thisRun };
}

function round(n: number): number {
  return Number(n.toFixed(3));
}
