import type { Faults, FaultSettings } from './faults.js';

/** The handler answers 429 for operations that would wait longer than this in its queue. */
export const maxQueueAgeMs = 3000;

/**
 * The container's handler queue: at most `queueLimit` operations admitted and not yet answered, served in
 * arrival order at `maxOpsPerSecond`, each after `latencyMs`. The settings are read live from the fault
 * settings, so `PUT /_sim/faults` changes them at run time.
 */
export class Admission {
  /** Operations admitted and not yet answered. */
  private admitted = 0;
  /** When the service rate lets the next operation run (ms, performance clock). */
  private nextSlotMs = 0;

  constructor(private readonly faults: Pick<Faults, 'current' | 'onChange'>) {
    // A new rate starts afresh: the backlog spaced at the old rate is forgotten.
    faults.onChange((patch: Partial<FaultSettings>) => {
      if (patch.maxOpsPerSecond !== undefined) this.nextSlotMs = 0;
    });
  }

  get queueLimit(): number {
    return this.faults.current.queueLimit;
  }

  /** Admits one operation, or returns false when the queue is full (the caller answers 429). */
  tryAdmit(): boolean {
    const limit = this.faults.current.queueLimit;
    if (limit > 0 && this.admitted >= limit) return false;
    this.admitted++;
    return true;
  }

  release(): void {
    this.admitted--;
  }

  /**
   * How long an admitted operation waits before it is served: its turn under the service rate, plus latency.
   * 0 when neither is set (the hot path then runs the operation at once). -1 when its turn would come later
   * than `maxQueueAgeMs` from now: the service answers such operations 429 rather than let them age.
   */
  delayMs(): number {
    const { maxOpsPerSecond, latencyMs } = this.faults.current;
    if (maxOpsPerSecond <= 0) return latencyMs;
    const now = performance.now();
    const slot = Math.max(now, this.nextSlotMs);
    if (slot - now > maxQueueAgeMs) return -1;
    this.nextSlotMs = slot + 1000 / maxOpsPerSecond;
    return slot - now + latencyMs;
  }
}
