import { H2Error } from './errors.js';
import type { Stream } from './stream.js';

/**
 * How often the streams' timeouts are swept for a request's `timeoutMs`: a quarter of it, between 10 ms and a
 * second, so that a timeout fires at most a quarter late without a timer per stream.
 */
export function sweepEvery(timeoutMs: number): number {
  return Math.max(10, Math.min(1000, timeoutMs / 4));
}

/**
 * The error of a stream whose answer is overdue at `now`: its headers (`headersTimeout` since it was sent) or a
 * stalled body (`bodyTimeout` since it last showed progress); undefined while it is within them.
 */
export function overdue(s: Stream, now: number): H2Error | undefined {
  const waiting = s.status === 0;
  const limit = waiting ? s.req.headersTimeout : s.req.bodyTimeout;
  if (limit <= 0 || now - s.activeAt <= limit) return undefined;
  return waiting
    ? new H2Error('H2_HEADERS_TIMEOUT', 'Headers Timeout Error')
    : new H2Error('H2_BODY_TIMEOUT', 'Body Timeout Error');
}
