import { OptionError } from '../core/options-check.js';

/**
 * The whole retry policy: a pure function of the attempt and what went wrong, returning how long to wait
 * before the next attempt, or 0 for "do not retry".
 *
 * The one rule of retries, which every option named `maxRetries` (`FeedOptions`, `DocumentClientOptions`,
 * a visit's `retry`) links here:
 * - A deadline (`deadlineMs`) bounds all the attempts of one operation and the waits between them, a
 *   request timeout (`requestTimeoutMs`) one attempt, and the service's own `timeout` parameter
 *   (`serviceTimeout`) only what the service does with one request.
 * - `maxRetries` counts failed attempts in a row, after the first: 502, 503, 504 and transport errors always.
 * - What may have been applied is sent again only when sending it twice leaves the same result (`safeToRepeat`):
 *   after a transport error that may have reached the service, and after 502, 503 and 504. Vespa's document
 *   handler never answers 502 or 503 (vespa-facts.md: they come from the HTTP layer or something in between, a
 *   proxy or balancer whose upstream may have applied the write), and its 504 is a timeout after the operation
 *   went on. An increment or a conditional write is then final, reported by `notRepeatedReason`.
 * - 429 (throttled) and 507 (feed block) are the cluster asking to slow down, not failures of the operation:
 *   the feeder, whose every operation has a deadline, retries them until the deadline and does not count them
 *   (as the Go client does for 429). A request-at-a-time caller (a visit, a bulk operation, `DocumentClient`,
 *   a URL input; `retryLoop`) counts them against `maxRetries` too: it has no deadline by default, and a
 *   service answering 429 forever must not hold it forever.
 * - A failure after progress (a visit's new documents or continuation) starts the count again.
 */
export interface RetryPolicy {
  /** Failed attempts in a row after the first; which count is the rule above. */
  maxRetries: number;
  /** First delay for 429/503/transport errors. */
  baseDelayMs: number;
  /** Cap for 429/503/transport delays. */
  maxDelayMs: number;
  /** First delay for 507 (feed block: can last minutes, so it backs off slowly and far). */
  feedBlockBaseDelayMs: number;
  feedBlockMaxDelayMs: number;
  /** Growth per attempt. */
  factor: number;
  /** Share of the delay that is random (0 none, 1 full jitter). Spreads retries so they do not arrive together. */
  jitter: number;
}

/** The feeder's backoff: exponential with jitter, 507 slower, bounded. */
export const defaultRetryPolicy: RetryPolicy = {
  maxRetries: 10,
  baseDelayMs: 100,
  maxDelayMs: 10_000,
  feedBlockBaseDelayMs: 1_000,
  feedBlockMaxDelayMs: 60_000,
  factor: 2,
  jitter: 0.5,
};

/** What `retryDelay` decides on: the attempt, the answer, and the time left. */
export interface RetryInput {
  /** 1 for the first retry (the attempt that failed was the first). */
  attempt: number;
  /** HTTP status, or undefined for a transport error (reset, refused, cut-off response, timeout of the socket). */
  status?: number;
  /** Whether sending the operation twice leaves the same result (put, remove, assign-only update, none with a condition; visit requests). */
  safeToRepeat: boolean;
  /** Retry-After from the response, in milliseconds. */
  retryAfterMs?: number;
  /** Time left before the operation's deadline; a delay that does not fit is no retry. */
  remainingMs?: number;
  /**
   * For transport errors: false when the request surely never reached the service (connection refused),
   * so even an operation that is not safe to repeat may be sent again. Default true.
   */
  maybeApplied?: boolean;
  /** Injected for tests; defaults to Math.random. */
  random?: () => number;
}

export type RetryClass = 'throttled' | 'feed-blocked' | 'transient' | 'timeout' | 'final';

/**
 * An answer that says the service, or the HTTP layer in front of its handler, is overloaded (429, 503): slow down.
 * It comes at once, without the service's work, so as a round trip it says nothing of how fast the service is.
 */
export function isOverloaded(status: number | undefined): boolean {
  return status === 429 || status === 503;
}

/** A refusal that comes without the service's work: overload, or a feed block (507). No round trip either. */
export function isRefusal(status: number | undefined): boolean {
  return isOverloaded(status) || status === 507;
}

export function classifyStatus(status: number | undefined): RetryClass {
  if (status === undefined) return 'transient';
  if (status === 429) return 'throttled';
  if (status === 507) return 'feed-blocked';
  if (status === 502 || status === 503) return 'transient';
  if (status === 504) return 'timeout';
  return 'final';
}

/** How long to wait before the next attempt, in ms; 0 means do not retry. Pure. */
export function retryDelay(input: RetryInput, policy: RetryPolicy = defaultRetryPolicy): number {
  const kind = classifyStatus(input.status);
  if (kind === 'final') return 0;
  if (mayHaveApplied(input) && !input.safeToRepeat) return 0;
  if ((kind === 'transient' || kind === 'timeout') && input.attempt > policy.maxRetries) return 0;

  const base = kind === 'feed-blocked' ? policy.feedBlockBaseDelayMs : policy.baseDelayMs;
  const cap = kind === 'feed-blocked' ? policy.feedBlockMaxDelayMs : policy.maxDelayMs;
  const exponential = Math.min(cap, base * policy.factor ** Math.max(0, input.attempt - 1));
  const random = input.random ?? Math.random;
  let delay = exponential * (1 - policy.jitter) + exponential * policy.jitter * random();
  // The server knows best how long it needs; the feed-block cap still bounds a pathological Retry-After.
  if (input.retryAfterMs !== undefined && input.retryAfterMs > delay) {
    delay = Math.min(input.retryAfterMs, Math.max(cap, policy.feedBlockMaxDelayMs));
  }
  delay = Math.max(1, Math.round(delay));
  if (input.remainingMs !== undefined && delay >= input.remainingMs) return 0;
  return delay;
}

/**
 * Whether the failed attempt may have been applied: a transport error unless the request surely never left, and
 * an answer `classifyStatus` calls transient or a timeout (502, 503, 504). 429 and 507 are the service refusing
 * before it applies anything.
 */
function mayHaveApplied(input: Pick<RetryInput, 'status' | 'maybeApplied'>): boolean {
  if (input.status === undefined) return input.maybeApplied !== false;
  const kind = classifyStatus(input.status);
  return kind === 'transient' || kind === 'timeout';
}

/**
 * The reason an attempt that may have been applied was not sent again (undefined where `retryDelay` would have
 * retried it, or where it failed for another reason): the one wording of the feed's failure output, the bulk
 * operations and `DocumentClient`.
 */
export function notRepeatedReason(
  input: Pick<RetryInput, 'status' | 'safeToRepeat' | 'maybeApplied'>,
): string | undefined {
  if (input.safeToRepeat || !mayHaveApplied(input)) return undefined;
  return 'not sent again: it may have been applied, and applied twice it would not leave the same result (a condition, or an update that is not all assignments)';
}

/** Retry-After is either seconds or an HTTP date. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(text.trim())) return Math.round(Number(text) * 1000);
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * Refuses `retryPolicy.maxRetries` beside `maxRetries`: two bounds, one of which would silently win. The
 * error (VB_USAGE) names both.
 */
export function checkRetryBound(options: { maxRetries?: number; retryPolicy?: Partial<RetryPolicy> }): void {
  const inPolicy = options.retryPolicy?.maxRetries;
  if (options.maxRetries !== undefined && inPolicy !== undefined)
    throw new OptionError('retryPolicy.maxRetries', 'left out', inPolicy, 'maxRetries');
}

/**
 * Refuses a `retryPolicy` option (a part of `RetryPolicy`) whose fields are not what the policy reads: a
 * `maxRetries` that is no integer >= 0, delays that are no finite numbers >= 0, a factor below 1, a jitter
 * outside [0, 1]. The error (VB_USAGE) names the field as `retryPolicy.<field>`.
 */
export function checkRetryPolicy(policy: Partial<RetryPolicy> | undefined, name = 'retryPolicy'): void {
  if (policy === undefined) return;
  if (policy === null || typeof policy !== 'object' || Array.isArray(policy))
    throw new OptionError(name, 'an object of RetryPolicy fields', policy);
  const fields: [keyof RetryPolicy, string, (v: number) => boolean][] = [
    ['maxRetries', 'an integer >= 0', (v) => Number.isInteger(v) && v >= 0],
    ['baseDelayMs', 'a finite number >= 0', (v) => Number.isFinite(v) && v >= 0],
    ['maxDelayMs', 'a finite number >= 0', (v) => Number.isFinite(v) && v >= 0],
    ['feedBlockBaseDelayMs', 'a finite number >= 0', (v) => Number.isFinite(v) && v >= 0],
    ['feedBlockMaxDelayMs', 'a finite number >= 0', (v) => Number.isFinite(v) && v >= 0],
    ['factor', 'a finite number >= 1', (v) => Number.isFinite(v) && v >= 1],
    ['jitter', 'a number from 0 to 1', (v) => v >= 0 && v <= 1],
  ];
  for (const [field, requirement, ok] of fields) {
    const v: unknown = policy[field];
    if (v !== undefined && !(typeof v === 'number' && ok(v))) throw new OptionError(`${name}.${field}`, requirement, v);
  }
}
