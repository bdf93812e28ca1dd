/**
 * A feed block (507: a content node at its disk or memory limit) is a state of the cluster, not of an operation: it
 * lasts minutes and lifts for every write at once. So the writes that met it wait here together, and one of them at
 * a time goes out as a probe, at a low rate that slows as the block goes on (Vespa's own clients keep sending each
 * write at its own backoff: every write in flight and read ahead, a few hundred, again and again). The first write
 * that succeeds lifts the block for all of them. Removes are not held: Vespa lets them through a block (they free
 * space).
 *
 * Pure: the engine owns the timer, the clock and the sending; this holds the waiting writes and the probe's pace.
 */
export interface FeedBlockPace {
  /** The first probe's delay after the block is met, in ms. */
  firstMs: number;
  /** The longest delay between probes, in ms: how late a lifted block may be noticed. */
  maxMs: number;
}

export class FeedBlock<T extends { deadline: number }> {
  private waiting: T[] = [];
  /** The write out as the probe now, if one is. */
  private probing: T | undefined;
  private delayMs: number;
  /** When (ms) the block was met, while it holds. */
  private since: number | undefined;
  /** The time blocks held, in ms, over the run (those that lifted). */
  private heldMs = 0;

  constructor(private readonly pace: FeedBlockPace) {
    this.delayMs = pace.firstMs;
  }

  /** Whether the cluster is feed-blocked as far as the answers tell: writes wait for it to lift. */
  get blocked(): boolean {
    return this.waiting.length > 0 || this.probing !== undefined;
  }

  /** The time the cluster was feed-blocked over the run, in ms, up to `now`. */
  blockedMs(now: number): number {
    return this.heldMs + (this.since === undefined ? 0 : now - this.since);
  }

  /**
   * A write to hold until the block lifts. Returns the delay to the first probe when the block begins with it (the
   * caller arms its timer), else undefined (the probes go on).
   */
  hold(p: T, now: number): number | undefined {
    this.waiting.push(p);
    if (this.since !== undefined) return undefined;
    this.since = now;
    this.delayMs = this.pace.firstMs;
    return this.nextDelay();
  }

  /** Whether `p` is the probe; if it is, it is out no more (it is held again, lifts the block, or goes its own way). */
  answered(p: T): boolean {
    if (p !== this.probing) return false;
    this.probing = undefined;
    return true;
  }

  /**
   * The probe's timer fired at `now`: the writes past their deadline (taken out: they fail), the write to send as
   * the probe (the one held longest, unless one is still out), and the delay to the next probe, or undefined when
   * nothing waits any more and the block is over as far as this can tell.
   */
  fire(now: number): { expired: T[]; probe: T | undefined; nextMs: number | undefined } {
    const expired = this.waiting.filter((p) => p.deadline <= now);
    if (expired.length > 0) this.waiting = this.waiting.filter((p) => p.deadline > now);
    const probe = this.probing === undefined ? this.waiting.shift() : undefined;
    if (probe !== undefined) this.probing = probe;
    if (!this.blocked) {
      this.end(now);
      return { expired, probe, nextMs: undefined };
    }
    return { expired, probe, nextMs: this.nextDelay() };
  }

  /** A write succeeded: the block lifted. Every write held, taken out, to be sent (the caller clears its timer). */
  lift(now: number): T[] {
    const all = this.waiting;
    this.waiting = [];
    this.probing = undefined;
    this.end(now);
    return all;
  }

  /** Nothing waits any more (the feed stops). */
  clear(now: number): void {
    this.waiting = [];
    this.probing = undefined;
    this.end(now);
  }

  private nextDelay(): number {
    const d = this.delayMs;
    this.delayMs = Math.min(this.pace.maxMs, this.delayMs * 2);
    return d;
  }

  private end(now: number): void {
    if (this.since === undefined) return;
    this.heldMs += now - this.since;
    this.since = undefined;
  }
}
