import { describe, expect, it } from 'vitest';
import type { FeedCheckpoint } from '../../src/feed/feed-checkpoint.js';
import { FeedStats } from '../../src/feed/stats.js';
import { countsNow, wholeFeedSummary } from '../../src/feed/whole-feed.js';

/** The pure part of a resumed feed's counting: the checkpoint's counts plus this run's, each item once. */

function checkpoint(counts?: FeedCheckpoint['counts']): FeedCheckpoint {
  return {
    version: 2,
    inputs: ['in.jsonl'],
    position: { input: 0, offset: 100, line: 11 },
    written: '',
    reason: 'interrupted',
    ok: 0,
    errors: 0,
    ...(counts !== undefined && { counts }),
  };
}

function run(): FeedStats {
  const s = new FeedStats(0);
  Object.assign(s, { operations: 40, ok: 37, errors: 3, parseErrors: 1, skipped: 15, resumeSkipped: 10, dropped: 2 });
  return s;
}

describe('whole-feed counts', () => {
  const before = { ok: 8, errors: 1, parseErrors: 1, skipped: 4, dropped: 1, seconds: 2.5 };

  it("a checkpoint's counts add this run's, without the items the run passed over as the checkpoint's", () => {
    expect(countsNow(undefined, run(), 1.25)).toEqual({
      ok: 37,
      errors: 3,
      parseErrors: 1,
      skipped: 5,
      dropped: 2,
      seconds: 1.25,
    });
    expect(countsNow(checkpoint(before), run(), 1.25)).toEqual({
      ok: 45,
      errors: 4,
      parseErrors: 2,
      skipped: 9,
      dropped: 3,
      seconds: 3.75,
    });
    // Unknown before stays unknown.
    expect(countsNow(checkpoint(), run(), 1)).toBeUndefined();
  });

  it("the summary: the whole feed's counts in place, dropped after skipped, this run's last", () => {
    const summary = run().summary(2000, 0, 64);
    const whole = wholeFeedSummary(summary, checkpoint(before), 10);
    expect(whole).toMatchObject({
      operations: 9 + 40,
      ok: 45,
      errors: 4,
      parseErrors: 2,
      skipped: 9,
      dropped: 3,
      seconds: 4.5,
      okRate: 10,
      runOperations: 40,
      runOk: 37,
      runErrors: 3,
      runSeconds: 2,
    });
    const keys = Object.keys(whole);
    expect(keys.indexOf('dropped')).toBe(keys.indexOf('skipped') + 1);
    expect(keys.slice(-4)).toEqual(['runOperations', 'runOk', 'runErrors', 'runSeconds']);
    expect(wholeFeedSummary(summary, undefined, 0)).toBe(summary);
    expect(wholeFeedSummary(summary, checkpoint(), 10)).toMatchObject({ ok: 37, runOk: 37, earlierCounts: 'unknown' });
  });
});
