/**
 * The circuit breaker: watches for a cluster that answers nothing but failures. Pure; the caller passes the
 * clock.
 *
 * closed: normal. half-open: `halfOpenAfterMs` of failures with no success: one request at a time probes
 * until one succeeds. open: `openAfterMs` of only failures: the feed stops (with a checkpoint).
 */
export type BreakerState = 'closed' | 'half-open' | 'open';

export interface BreakerOptions {
  /** Default 10 s. */
  halfOpenAfterMs?: number;
  /** Default 60 s; 0 never opens. */
  openAfterMs?: number;
}

export class CircuitBreaker {
  private readonly halfOpenAfterMs: number;
  private readonly openAfterMs: number;
  /** Start of the current run of failures without a success, or undefined. */
  private failingSince: number | undefined;

  constructor(options: BreakerOptions = {}) {
    this.halfOpenAfterMs = options.halfOpenAfterMs ?? 10_000;
    this.openAfterMs = options.openAfterMs ?? 60_000;
  }

  success(): void {
    this.failingSince = undefined;
  }

  failure(now: number): void {
    if (this.failingSince === undefined) this.failingSince = now;
  }

  state(now: number): BreakerState {
    if (this.failingSince === undefined) return 'closed';
    const failingMs = now - this.failingSince;
    if (this.openAfterMs > 0 && failingMs >= this.openAfterMs) return 'open';
    if (failingMs >= this.halfOpenAfterMs) return 'half-open';
    return 'closed';
  }
}
