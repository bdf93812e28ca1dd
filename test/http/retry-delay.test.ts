import { describe, expect, it } from 'vitest';
import {
  classifyStatus,
  defaultRetryPolicy,
  notRepeatedReason,
  parseRetryAfter,
  retryDelay,
} from '../../src/http/retry-delay.js';

// Half the jitter: each delay is 3/4 of its exponential step (1 - jitter/2 with the default jitter of 0.5).
const fixed = (): number => 0.5;

describe('retryDelay', () => {
  it('never retries final statuses', () => {
    for (const status of [400, 404, 412, 413, 500]) {
      expect(retryDelay({ attempt: 1, status, safeToRepeat: true, random: fixed })).toBe(0);
    }
  });

  it('backs off exponentially on 429, with jitter, capped, and never immediately', () => {
    // 100 ms doubling per attempt, capped at 10 s (maxDelayMs).
    const delays = [1, 2, 3, 4, 20].map((attempt) =>
      retryDelay({ attempt, status: 429, safeToRepeat: false, random: fixed }),
    );
    expect(delays).toEqual([75, 150, 300, 600, 7500]);
    // 429 is not bounded by maxRetries, only by the deadline.
    expect(retryDelay({ attempt: 50, status: 429, safeToRepeat: false, random: fixed })).toBe(7500);
    // The jitter spans the upper half of the step (400 ms at attempt 3).
    expect(retryDelay({ attempt: 3, status: 429, safeToRepeat: true, random: () => 0 })).toBe(200);
    expect(retryDelay({ attempt: 3, status: 429, safeToRepeat: true, random: () => 0.999 })).toBe(400);
  });

  it('bounds 503 and transport errors by maxRetries', () => {
    expect(retryDelay({ attempt: 10, status: 503, safeToRepeat: true, random: fixed })).toBe(7500);
    expect(retryDelay({ attempt: 11, status: 503, safeToRepeat: true, random: fixed })).toBe(0);
    expect(retryDelay({ attempt: 3, safeToRepeat: true, random: fixed })).toBe(300);
    expect(retryDelay({ attempt: 11, safeToRepeat: true, random: fixed })).toBe(0);
  });

  it('retries a 502 or 503 only for operations safe to repeat: they come from something in between, whose upstream may have applied it', () => {
    for (const status of [502, 503]) {
      expect(retryDelay({ attempt: 1, status, safeToRepeat: true, random: fixed })).toBe(75);
      expect(retryDelay({ attempt: 1, status, safeToRepeat: false, random: fixed })).toBe(0);
      expect(notRepeatedReason({ status, safeToRepeat: false })).toMatch(/may have been applied/);
      expect(notRepeatedReason({ status, safeToRepeat: true })).toBeUndefined();
    }
    // 429 and 507 are refusals before anything is applied; a request that never left is no "maybe applied".
    expect(retryDelay({ attempt: 1, status: 429, safeToRepeat: false, random: fixed })).toBe(75);
    expect(notRepeatedReason({ status: 429, safeToRepeat: false })).toBeUndefined();
    expect(notRepeatedReason({ status: 507, safeToRepeat: false })).toBeUndefined();
    expect(notRepeatedReason({ safeToRepeat: false, maybeApplied: false })).toBeUndefined();
    expect(notRepeatedReason({ safeToRepeat: false })).toMatch(/may have been applied/);
    expect(notRepeatedReason({ status: 400, safeToRepeat: false })).toBeUndefined();
  });

  it('retries 504 and ambiguous transport errors only for operations safe to repeat', () => {
    expect(retryDelay({ attempt: 1, status: 504, safeToRepeat: true, random: fixed })).toBe(75);
    expect(retryDelay({ attempt: 1, status: 504, safeToRepeat: false, random: fixed })).toBe(0);
    expect(retryDelay({ attempt: 1, safeToRepeat: false, random: fixed })).toBe(0);
    expect(retryDelay({ attempt: 1, safeToRepeat: false, maybeApplied: false, random: fixed })).toBe(75);
  });

  it('backs off slowly and far on 507', () => {
    // 1 s doubling per attempt, capped at 60 s (feedBlockMaxDelayMs), against 429's 100 ms and 10 s.
    expect(retryDelay({ attempt: 1, status: 507, safeToRepeat: true, random: fixed })).toBe(750);
    expect(retryDelay({ attempt: 30, status: 507, safeToRepeat: true, random: fixed })).toBe(45_000);
  });

  it('honours Retry-After and the deadline', () => {
    expect(retryDelay({ attempt: 1, status: 429, safeToRepeat: true, retryAfterMs: 3000, random: fixed })).toBe(3000);
    // Longer than the 429 cap: still honoured, up to the feed-block cap.
    expect(retryDelay({ attempt: 1, status: 429, safeToRepeat: true, retryAfterMs: 30_000, random: fixed })).toBe(
      30_000,
    );
    expect(retryDelay({ attempt: 1, status: 429, safeToRepeat: true, retryAfterMs: 3_600_000, random: fixed })).toBe(
      defaultRetryPolicy.feedBlockMaxDelayMs,
    );
    expect(retryDelay({ attempt: 1, status: 429, safeToRepeat: true, remainingMs: 10, random: fixed })).toBe(0);
  });

  it('classifies statuses', () => {
    expect(classifyStatus(429)).toBe('throttled');
    expect(classifyStatus(507)).toBe('feed-blocked');
    expect(classifyStatus(undefined)).toBe('transient');
    expect(classifyStatus(504)).toBe('timeout');
    expect(classifyStatus(412)).toBe('final');
  });
});

describe('parseRetryAfter', () => {
  it('reads seconds and HTTP dates', () => {
    expect(parseRetryAfter('2')).toBe(2000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
  });
});
