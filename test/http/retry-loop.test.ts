import { describe, expect, it } from 'vitest';
import { defaultRetryPolicy, type RetryPolicy } from '../../src/http/retry-delay.js';
import { retryLoop, type AttemptFailure, type RetryEvent, type RetryLoopOptions } from '../../src/http/retry-loop.js';

/** A failure the fake attempts throw: its status (undefined: transport error) and whether it made progress. */
class Fail extends Error {
  constructor(readonly failure: AttemptFailure) {
    super(`fail ${failure.status ?? 'transport'}`);
  }
}

const policy: RetryPolicy = {
  ...defaultRetryPolicy,
  maxRetries: 3,
  baseDelayMs: 100,
  maxDelayMs: 1_000,
  factor: 2,
  jitter: 0,
};

/** Options with a recording sleep and retries, so no test waits. */
function setup(overrides: Partial<RetryLoopOptions> = {}) {
  const slept: number[] = [];
  const retries: RetryEvent[] = [];
  const options: RetryLoopOptions = {
    policy,
    safeToRepeat: true,
    failureOf: (err) => (err instanceof Fail ? err.failure : undefined),
    sleep: async (ms) => void slept.push(ms),
    onRetry: (r) => void retries.push(r),
    ...overrides,
  };
  return { options, slept, retries };
}

/** An attempt that throws the given failures in turn, then succeeds with 'done'. */
function script(failures: AttemptFailure[]) {
  let calls = 0;
  const attempt = async (): Promise<string> => {
    const f = failures[calls++];
    if (f !== undefined) throw new Fail(f);
    return 'done';
  };
  return { attempt, calls: () => calls };
}

describe('retryLoop', () => {
  it('returns the first success without waiting', async () => {
    const { options, slept } = setup();
    const { attempt, calls } = script([]);
    expect(await retryLoop(attempt, options)).toEqual({ kind: 'succeeded', value: 'done', retries: 0 });
    expect(calls()).toBe(1);
    expect(slept).toEqual([]);
  });

  it('retries with the policy’s backoff until the attempt succeeds', async () => {
    const { options, slept, retries } = setup();
    const { attempt, calls } = script([{ status: 503 }, {}, { status: 502 }]);
    expect(await retryLoop(attempt, options)).toEqual({ kind: 'succeeded', value: 'done', retries: 3 });
    expect(calls()).toBe(4);
    expect(slept).toEqual([100, 200, 400]);
    expect(retries.map((r) => [r.attempt, r.maxRetries, r.delayMs, r.failure.status])).toEqual([
      [1, 3, 100, 503],
      [2, 3, 200, undefined],
      [3, 3, 400, 502],
    ]);
  });

  it('gives up after maxRetries failures in a row, 429 included (the loop has no deadline)', async () => {
    const { options, slept } = setup();
    const { attempt, calls } = script(Array(10).fill({ status: 429 }));
    const outcome = await retryLoop(attempt, options);
    expect(outcome.kind).toBe('failed');
    expect(outcome.kind === 'failed' && outcome.failure.status).toBe(429);
    expect(outcome.kind === 'failed' && outcome.error).toBeInstanceOf(Fail);
    expect(calls()).toBe(4);
    expect(slept).toHaveLength(3);
  });

  it('makes no retry with maxRetries 0', async () => {
    const { options } = setup({ policy: { ...policy, maxRetries: 0 } });
    const { attempt, calls } = script([{ status: 503 }]);
    expect((await retryLoop(attempt, options)).kind).toBe('failed');
    expect(calls()).toBe(1);
  });

  it('ends at once on a final status', async () => {
    const { options, slept } = setup();
    const { attempt, calls } = script([{ status: 400 }]);
    expect(await retryLoop(attempt, options)).toMatchObject({ kind: 'failed', retries: 0, failure: { status: 400 } });
    expect(calls()).toBe(1);
    expect(slept).toEqual([]);
  });

  it('repeats a transport error of an operation not safe to repeat only when the request surely never left', async () => {
    const maybe = setup({ safeToRepeat: false });
    expect((await retryLoop(script([{}]).attempt, maybe.options)).kind).toBe('failed');
    const never = setup({ safeToRepeat: false });
    expect((await retryLoop(script([{ maybeApplied: false }]).attempt, never.options)).kind).toBe('succeeded');
    expect(never.slept).toHaveLength(1);
  });

  it('starts the count again after a failure that made progress', async () => {
    const { options, retries } = setup();
    // Three failures, one with progress, three more: six in all, never more than three in a row.
    const { attempt, calls } = script([{}, {}, {}, { progressed: true }, {}, {}]);
    expect(await retryLoop(attempt, options)).toMatchObject({ kind: 'succeeded', retries: 6 });
    expect(calls()).toBe(7);
    expect(retries.map((r) => r.attempt)).toEqual([1, 2, 3, 1, 2, 3]);
  });

  it('rethrows at once what failureOf does not call a failure', async () => {
    const { options, slept } = setup();
    let calls = 0;
    const boom = new Error('the caller’s own failure');
    await expect(
      retryLoop(async () => {
        calls++;
        throw boom;
      }, options),
    ).rejects.toBe(boom);
    expect(calls).toBe(1);
    expect(slept).toEqual([]);
  });

  it('honours Retry-After beyond the backoff', async () => {
    const { options, slept } = setup();
    await retryLoop(script([{ status: 503, retryAfterMs: 700 }]).attempt, options);
    expect(slept).toEqual([700]);
  });

  it('makes no attempt when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const { options } = setup({ signal: controller.signal });
    const { attempt, calls } = script([]);
    expect(await retryLoop(attempt, options)).toEqual({ kind: 'aborted', retries: 0 });
    expect(calls()).toBe(0);
  });

  it('reports an abort during an attempt as aborted, not as a failure to retry', async () => {
    const controller = new AbortController();
    const { options, slept } = setup({ signal: controller.signal });
    const outcome = await retryLoop(async () => {
      controller.abort();
      throw new Fail({ status: 503 });
    }, options);
    expect(outcome).toEqual({ kind: 'aborted', retries: 0 });
    expect(slept).toEqual([]);
  });

  it('stops during the wait when the signal aborts, with the default sleep', async () => {
    const controller = new AbortController();
    const { options } = setup({
      signal: controller.signal,
      sleep: undefined,
      policy: { ...policy, baseDelayMs: 60_000, maxDelayMs: 60_000 },
    });
    const { attempt, calls } = script([{ status: 503 }]);
    const running = retryLoop(attempt, options);
    setTimeout(() => controller.abort(), 10);
    expect(await running).toEqual({ kind: 'aborted', retries: 1 });
    expect(calls()).toBe(1);
  });

  it('passes the injected random source to the jitter', async () => {
    const { options, slept } = setup({ policy: { ...policy, jitter: 1 }, random: () => 0.5 });
    await retryLoop(script([{ status: 503 }]).attempt, options);
    expect(slept).toEqual([50]);
  });

  it('makes no wait that would end past the deadline: the last failure is the outcome', async () => {
    let now = 0;
    const { options, slept } = setup({
      deadline: 250,
      now: () => now,
      sleep: async (ms) => void (slept.push(ms), (now += ms)),
    });
    const { attempt, calls } = script([{ status: 503 }, { status: 503 }, { status: 503 }]);
    const outcome = await retryLoop(attempt, options);
    // 100 ms fits before 250, 200 more would end at 300: not made.
    expect(outcome).toMatchObject({ kind: 'failed', failure: { status: 503 }, retries: 1 });
    expect(slept).toEqual([100]);
    expect(calls()).toBe(2);
  });
});
