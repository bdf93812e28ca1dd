import { describe, expect, it } from 'vitest';
import { estimateRemainingSeconds } from '../../src/cli/eta.js';

describe('the feed progress estimate', () => {
  const base = { seconds: 10, ok: 0, failed: 0, retries: 0, inflight: 0, limit: 64, p50Ms: 1, p99Ms: 2 };
  it('extrapolates the operations left from the share read, at the rate so far', () => {
    // 1000 read from 25 % of the input: about 4000 in all; 500 finished in 10 s: 3500 left at 50/s.
    expect(estimateRemainingSeconds({ ...base, read: 1000, finished: 500, readShare: 0.25 })).toBeCloseTo(70);
  });
  it('does not call a feed done because the reader reached the end first', () => {
    expect(estimateRemainingSeconds({ ...base, read: 4000, finished: 1000, readShare: 1 })).toBeCloseTo(30);
    expect(estimateRemainingSeconds({ ...base, read: 4000, finished: 4000, readShare: 1 })).toBe(0);
  });
  it('gives no estimate without a size or before anything finished', () => {
    expect(estimateRemainingSeconds({ ...base, read: 10, finished: 0, readShare: 0.5 })).toBeUndefined();
    expect(estimateRemainingSeconds({ ...base, read: 10, finished: 5 })).toBeUndefined();
  });
});
