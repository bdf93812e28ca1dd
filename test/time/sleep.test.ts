import { describe, expect, it } from 'vitest';
import { sleepUnlessAborted } from '../../src/time/sleep.js';

describe('sleepUnlessAborted', () => {
  it('resolves true when the whole wait passed', async () => {
    expect(await sleepUnlessAborted(5, undefined)).toBe(true);
    expect(await sleepUnlessAborted(5, new AbortController().signal)).toBe(true);
  });

  it('resolves false at once when the signal is already aborted', async () => {
    // A minute: were the signal ignored, the test would time out.
    expect(await sleepUnlessAborted(60_000, AbortSignal.abort())).toBe(false);
  });

  it('resolves false when the signal aborts during the wait', async () => {
    const controller = new AbortController();
    const waiting = sleepUnlessAborted(60_000, controller.signal);
    setTimeout(() => controller.abort(), 5);
    expect(await waiting).toBe(false);
  });
});
