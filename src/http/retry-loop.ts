import { setTimeout as sleepFor } from 'node:timers/promises';
import { retryDelay, type RetryPolicy } from './retry-delay.js';

/**
 * The one loop around the pure `retryDelay` policy for the client's request-at-a-time callers (the slice
 * visitor, bulk operations, `DocumentClient`, whose calls the single-document commands make): it repeats an attempt until it succeeds, fails
 * for good, or the signal aborts. The feeder keeps its own bookkeeping: with thousands of operations in
 * flight it schedules retries without a promise per operation.
 */
export interface RetryLoopOptions {
  /**
   * The backoff, and in `maxRetries` the bound: failed attempts in a row after which the loop gives up. Unlike
   * `retryDelay` alone, which leaves 429 and 507 to an operation's deadline, the loop bounds every kind of
   * failure by `maxRetries`: it has no deadline, and a service answering 429 forever must not hold it forever.
   */
  policy: RetryPolicy;
  /** Whether sending the attempt again leaves the same result (see `RetryInput.safeToRepeat`). */
  safeToRepeat: boolean;
  /**
   * What a failed attempt's error was, for the policy; undefined when it is not one to retry (a failure of the
   * caller's own, an unreachable endpoint): the loop then rethrows it at once.
   */
  failureOf: (err: unknown) => AttemptFailure | undefined;
  /** Stops the loop: before an attempt, after a failed one, and during the wait between them. */
  signal?: AbortSignal;
  /**
   * A `performance.now()` time after which no attempt starts: a wait that would not end before it is not made,
   * and the last failure is the outcome (as `retryDelay`'s `remainingMs`). Default none: `maxRetries` bounds the loop.
   */
  deadline?: number;
  /** Called before each wait, after the failure was counted. */
  onRetry?: (retry: RetryEvent) => void;
  /** Injected for tests: waits `ms`, rejecting when `signal` aborts. Default `setTimeout` of node:timers/promises. */
  sleep?: (ms: number, signal: AbortSignal | undefined) => Promise<unknown>;
  /** Injected for tests: the jitter's random source. Default Math.random. */
  random?: () => number;
  /** Injected for tests: the clock of `deadline`. Default `performance.now`. */
  now?: () => number;
}

/** What the policy needs to know of one failed attempt. */
export interface AttemptFailure {
  /** HTTP status, or undefined for a transport error or a cut response. */
  status?: number;
  /** Retry-After of the answer, in ms. */
  retryAfterMs?: number;
  /** For transport errors: false when the request surely never reached the service. Default true. */
  maybeApplied?: boolean;
  /**
   * The attempt got somewhere before it failed (new documents, a new continuation): the count of failures in a
   * row starts again, so a long run survives any number of spread-out failures but not a service that keeps failing.
   */
  progressed?: boolean;
}

/** One retry about to happen. */
export interface RetryEvent {
  error: unknown;
  failure: AttemptFailure;
  /** Failures in a row so far, 1 for the first retry. */
  attempt: number;
  /** The policy's bound for `attempt`. */
  maxRetries: number;
  delayMs: number;
}

/** How the loop ended; `retries` counts the waits it made. */
export type RetryOutcome<T> =
  | { kind: 'succeeded'; value: T; retries: number }
  | { kind: 'failed'; error: unknown; failure: AttemptFailure; retries: number }
  | { kind: 'aborted'; retries: number };

/** Runs `attempt` until it succeeds, fails for good, or `options.signal` aborts. */
export async function retryLoop<T>(attempt: () => Promise<T>, options: RetryLoopOptions): Promise<RetryOutcome<T>> {
  const { policy, signal } = options;
  const sleep =
    options.sleep ??
    ((ms: number, s: AbortSignal | undefined) => sleepFor(ms, undefined, s === undefined ? undefined : { signal: s }));
  let failures = 0;
  let retries = 0;
  for (;;) {
    if (signal?.aborted) return { kind: 'aborted', retries };
    let error: unknown;
    try {
      return { kind: 'succeeded', value: await attempt(), retries };
    } catch (err) {
      error = err;
    }
    const failure = options.failureOf(error);
    if (failure === undefined) throw error;
    if (signal?.aborted) return { kind: 'aborted', retries };
    failures = failure.progressed ? 1 : failures + 1;
    const delayMs =
      failures > policy.maxRetries
        ? 0
        : retryDelay(
            {
              attempt: failures,
              status: failure.status,
              safeToRepeat: options.safeToRepeat,
              retryAfterMs: failure.retryAfterMs,
              maybeApplied: failure.maybeApplied,
              random: options.random,
              remainingMs:
                options.deadline === undefined
                  ? undefined
                  : options.deadline - (options.now ?? (() => performance.now()))(),
            },
            policy,
          );
    if (delayMs === 0) return { kind: 'failed', error, failure, retries };
    retries++;
    options.onRetry?.({ error, failure, attempt: failures, maxRetries: policy.maxRetries, delayMs });
    try {
      await sleep(delayMs, signal);
    } catch (err) {
      // A stop during the wait (up to the policy's cap) is taken at once.
      if (signal?.aborted) return { kind: 'aborted', retries };
      throw err;
    }
  }
}
