/**
 * How many slices an adaptive visit keeps in flight: a search fed one measurement of documents/s per window, which
 * answers the limit to hold next. Pure: no timers, no I/O (the scheduler in chain-scheduler.ts feeds it).
 *
 * What it maximises is the established feed clients' objective: documents/s divided by in-flight^0.3. A level must
 * pay for its chains: twice as many must bring at least 23 % more documents/s (2^0.3), a quarter more at least 7 %,
 * and a fifth fewer may cost up to 6.5 % of them. So while the content nodes have idle visitor threads the search
 * climbs, and once they are all busy (more chains only queue there) it stops, and steps back to the fewest chains
 * that give the same documents/s.
 *
 * - Growth: from `start`, double after each window whose level beat the one before; the first level that does not
 *   is undone (back to the level before it), and growth ends.
 * - Hold: stay, averaging the windows; then probe one level a quarter higher or a fifth lower (alternately), kept if
 *   it beats the held level, undone if not. A probe that is undone doubles the time to the next one (up to 32
 *   windows), so a visit that found its level spends little time off it; one that is kept resets it to 4.
 *
 * After every change one window passes unmeasured: requests just started have not sent much yet, and parked ones
 * stop at their next continuation token. A window in which the visit could not hold the limit (no slice left to
 * start, or parked ones not stopped yet), or that delivered nothing, is not a measurement of it, and does not count.
 */
export interface AdaptiveLimitSettings {
  /** The first limit. */
  start: number;
  /** The highest limit (the slices there are). */
  max: number;
  /** The lowest limit; default 1. */
  min?: number;
}

/** One window as the scheduler saw it. */
export interface LimitSample {
  /** Documents delivered per second in the window. */
  documentsPerSecond: number;
  /** Whether the visit held the current limit through the window (enough slices left to start, none still parking). */
  held: boolean;
}

/** A change of the limit and why: what the search saw at the level it left. */
export interface LimitChange {
  /** The new limit. */
  limit: number;
  /** The documents/s measured at the level that was left (the average when it was held). */
  documentsPerSecond: number;
  reason: 'grow' | 'probe-up' | 'probe-down' | 'undo';
}

/** Objective exponent: as in the established feeders' search, throughput / inflight^0.3. */
const exponent = 0.3;
const firstHoldWindows = 4;
const maxHoldWindows = 32;

type Phase =
  /** The window after a change: not measured. */
  | { kind: 'settle'; then: 'base' | 'probe' }
  /** Measure the held level once (at the start, after an undo). */
  | { kind: 'base' }
  /** Measure the level being tried. */
  | { kind: 'probe'; from: Level }
  | { kind: 'hold'; left: number; sum: number; windows: number };

interface Level {
  limit: number;
  rate: number;
}

export class AdaptiveLimit {
  private current: number;
  private readonly min: number;
  private readonly max: number;
  private phase: Phase = { kind: 'settle', then: 'base' };
  private growing = true;
  private held: Level | undefined;
  private holdWindows = firstHoldWindows;
  private nextProbeUp = true;

  constructor(settings: AdaptiveLimitSettings) {
    this.min = Math.max(1, settings.min ?? 1);
    this.max = Math.max(this.min, settings.max);
    this.current = clamp(settings.start, this.min, this.max);
  }

  /** The limit to hold now. */
  get limit(): number {
    return this.current;
  }

  /** Whether the next window is a measurement (not the unmeasured one after a change). */
  get measuring(): boolean {
    return this.phase.kind !== 'settle';
  }

  /** Whether the search is still in its first climb. */
  get isGrowing(): boolean {
    return this.growing;
  }

  /** Feeds one window; returns the change it leads to, if any. */
  observe(sample: LimitSample): LimitChange | undefined {
    const phase = this.phase;
    if (phase.kind === 'settle') {
      this.phase = phase.then === 'base' ? { kind: 'base' } : { kind: 'probe', from: this.held! };
      return undefined;
    }
    // A window without documents (the first buckets are slow to come, or the selection matches little) says
    // nothing about the number of chains either.
    if (!sample.held || !(sample.documentsPerSecond > 0)) return undefined;
    const rate = sample.documentsPerSecond;
    switch (phase.kind) {
      case 'base':
        this.held = { limit: this.current, rate };
        return this.growing ? this.grow() : this.startHold();
      case 'probe': {
        const tried: Level = { limit: this.current, rate };
        if (better(tried, phase.from)) {
          this.held = tried;
          if (this.growing) return this.grow();
          this.holdWindows = firstHoldWindows;
          return this.startHold();
        }
        // Undo: back to the level it came from, measured afresh once the extra chains have stopped.
        this.growing = false;
        this.holdWindows = Math.min(maxHoldWindows, this.holdWindows * 2);
        return this.change(phase.from.limit, { kind: 'settle', then: 'base' }, 'undo', rate);
      }
      case 'hold': {
        const sum = phase.sum + rate;
        const windows = phase.windows + 1;
        if (phase.left > 1) {
          this.phase = { kind: 'hold', left: phase.left - 1, sum, windows };
          return undefined;
        }
        this.held = { limit: this.current, rate: sum / windows };
        // Alternately up and down; at a bound, the other way.
        const up = this.nextProbeUp;
        this.nextProbeUp = !up;
        return this.tryLevel(up) ?? this.tryLevel(!up) ?? this.startHold();
      }
    }
  }

  private startHold(): undefined {
    this.phase = { kind: 'hold', left: this.holdWindows, sum: 0, windows: 0 };
    return undefined;
  }

  /** Doubles while growing; at the upper bound growth ends, and the level is held. */
  private grow(): LimitChange | undefined {
    const limit = clamp(this.current * 2, this.min, this.max);
    if (limit !== this.current) return this.change(limit, { kind: 'settle', then: 'probe' }, 'grow', this.held!.rate);
    this.growing = false;
    return this.startHold();
  }

  /** A probe a quarter up or a fifth down (one chain at least); undefined when the bounds leave no room that way. */
  private tryLevel(up: boolean): LimitChange | undefined {
    const target = up ? Math.max(this.current + 1, Math.round(this.current * 1.25)) : Math.min(this.current - 1, Math.round(this.current * 0.8));
    const limit = clamp(target, this.min, this.max);
    if (limit === this.current) return undefined;
    return this.change(limit, { kind: 'settle', then: 'probe' }, up ? 'probe-up' : 'probe-down', this.held!.rate);
  }

  private change(limit: number, phase: Phase, reason: LimitChange['reason'], documentsPerSecond: number): LimitChange {
    this.current = limit;
    this.phase = phase;
    return { limit, documentsPerSecond, reason };
  }
}

/** Whether level `a` beats level `b`: documents/s per in-flight^0.3 at least as high. */
function better(a: Level, b: Level): boolean {
  return a.rate / a.limit ** exponent >= b.rate / b.limit ** exponent;
}

function clamp(n: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, Math.round(n)));
}
