/**
 * Open-loop arrival (`FeedOptions.arrivalRate`): operation `seq` is due at `start + seq x interval`, by its place
 * in the input, not by when it was read. A reader held back by a slow cluster must not push the schedule back
 * (coordinated omission), or a stall would vanish from the percentiles: an operation's latency counts from when
 * it was due.
 */
export class ArrivalSchedule {
  /** ms between due times; 0 without a rate (operations go when the limit allows). */
  private readonly intervalMs: number;
  /** When operation 0 is due. */
  private startAt = 0;
  /** Wakes the caller for the next operation not yet due. */
  private timer: NodeJS.Timeout | undefined;

  /** `wake` is called when an operation found not yet due by `isDue()` has come due. */
  constructor(
    ratePerSecond: number | undefined,
    private readonly wake: () => void,
  ) {
    this.intervalMs = ratePerSecond !== undefined ? 1000 / ratePerSecond : 0;
  }

  /** Whether operations are paced by a rate. */
  get paced(): boolean {
    return this.intervalMs > 0;
  }

  /** The schedule starts at `now` (ms, performance.now()). */
  start(now: number): void {
    this.startAt = now;
  }

  /** When operation `seq` is due; 0 for at once (no rate). */
  dueAt(seq: number): number {
    return this.intervalMs > 0 ? this.startAt + seq * this.intervalMs : 0;
  }

  /** Whether `dueAt` has come at `now`; if not, arranges one wake-up at the earliest such time asked. */
  isDue(dueAt: number, now: number): boolean {
    if (dueAt <= now) return true;
    if (this.timer === undefined) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.wake();
      }, dueAt - now);
    }
    return false;
  }

  /** Cancels the wake-up (at a stop, at the end). */
  cancel(): void {
    clearTimeout(this.timer);
  }
}
