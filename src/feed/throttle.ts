/**
 * The in-flight limit: how many operations may be on the wire at once. Pure (the caller passes the clock and
 * the counts), so it is tested with a simulated cluster.
 *
 * - Start: the limit doubles every window while the cluster keeps up and throughput keeps growing, so a
 *   healthy cluster is at full speed within a second or two (the established feeders take minutes).
 * - Throttled (429 in a window): multiplicative decrease, at most once per window, to what was in flight.
 * - Steady: probe 10 % upward; keep the step while throughput grows by more than a few percent, otherwise step
 *   back and hold a while before probing again. The limit so stays near the knee where throughput stops
 *   growing and queues (and 429s) start.
 */
export interface ThrottleOptions {
  /** Lowest limit. Default 8. */
  min?: number;
  /** Highest limit. Default 4096. */
  max?: number;
  /** First limit. Default 64 (bounded by min and max). */
  initial?: number;
  /** Length of one sampling window. Default 100 ms. */
  windowMs?: number;
  /** Multiplier on 429. Default 0.7. */
  decrease?: number;
  /** Relative step of one upward probe. Default 0.1. */
  probeStep?: number;
  /** Throughput gain that makes a probe worth keeping. Default 0.03. */
  probeGain?: number;
  /** Windows a probe is measured over. Default 3. */
  probeWindows?: number;
  /** Pause after a failed probe. Default 1000 ms. */
  holdMs?: number;
}

export interface Throttle {
  /** Current limit. */
  readonly limit: number;
  /** Counts for the window that just ended; `now` in ms. */
  sample(now: number, window: ThrottleWindow): void;
}

export interface ThrottleWindow {
  /** Operations completed with success in the window. */
  ok: number;
  /** Responses with 429 in the window. */
  throttled: number;
  /** Highest number in flight seen during the window. */
  peakInflight: number;
  /** Mean response latency in the window, when known: a measurement must span a few round trips to mean anything. */
  latencyMs?: number;
}

export class FixedThrottle implements Throttle {
  constructor(readonly limit: number) {}
  sample(): void {}
}

type Phase = 'start' | 'steady';

export class AdaptiveThrottle implements Throttle {
  private current: number;
  private readonly min: number;
  private readonly max: number;
  private readonly options: Required<Omit<ThrottleOptions, 'min' | 'max' | 'initial'>>;
  private phase: Phase = 'start';
  private lastTime: number | undefined;
  private lastStartRate = 0;
  private probeBase: { limit: number; rate: number } | undefined;
  private probeOk = 0;
  private probeMs = 0;
  private probeCount = 0;
  private holdUntil = 0;
  private lastCut = Number.NEGATIVE_INFINITY;
  /** Windows gathered towards the next measurement. */
  private readonly acc = { ok: 0, peak: 0 };

  constructor(options: ThrottleOptions = {}) {
    this.min = Math.max(1, options.min ?? 8);
    this.max = Math.max(this.min, options.max ?? 4096);
    this.current = clamp(options.initial ?? 64, this.min, this.max);
    this.options = {
      windowMs: options.windowMs ?? 100,
      decrease: options.decrease ?? 0.7,
      probeStep: options.probeStep ?? 0.1,
      probeGain: options.probeGain ?? 0.03,
      probeWindows: options.probeWindows ?? 3,
      holdMs: options.holdMs ?? 1000,
    };
  }

  get limit(): number {
    return this.current;
  }

  get windowMs(): number {
    return this.options.windowMs;
  }

  sample(now: number, w: ThrottleWindow): void {
    const roundTripMs = w.latencyMs ?? 0;
    if (w.throttled > 0) {
      // One cut per round trip: 429s for requests sent before the last cut say nothing new.
      if (now - this.lastCut < Math.max(this.options.windowMs, roundTripMs)) return;
      this.lastCut = now;
      // Cut to below what was actually in flight when the cluster said no: the limit may have been far above it.
      const base = Math.min(this.current, Math.max(w.peakInflight, this.acc.peak, this.min));
      this.set(Math.floor(base * this.options.decrease));
      this.phase = 'steady';
      this.resetProbe();
      this.resetAccumulated(now);
      this.holdUntil = now + this.options.holdMs;
      return;
    }
    // Gather windows until the measurement spans two round trips, so a slow cluster is not misread.
    if (this.lastTime === undefined) this.lastTime = now - this.options.windowMs;
    this.acc.ok += w.ok;
    this.acc.peak = Math.max(this.acc.peak, w.peakInflight);
    const elapsed = now - this.lastTime;
    if (elapsed < Math.max(this.options.windowMs, 2 * roundTripMs) - 1e-9) return;
    const ok = this.acc.ok;
    const peak = this.acc.peak;
    this.resetAccumulated(now);
    // When fewer than the limit were in flight, the limit was not what held throughput back: learn nothing.
    const saturated = peak >= this.current * 0.9;
    if (!saturated) return;
    const rate = (ok * 1000) / elapsed;
    if (this.phase === 'start') {
      if (rate === 0) return;
      if (this.lastStartRate === 0 || rate > this.lastStartRate * 1.1) {
        this.lastStartRate = Math.max(rate, this.lastStartRate);
        this.set(this.current * 2);
      } else {
        this.phase = 'steady';
        this.holdUntil = now + this.options.holdMs;
      }
      return;
    }
    if (now < this.holdUntil) return;
    this.probeOk += ok;
    this.probeMs += elapsed;
    if (++this.probeCount < this.options.probeWindows) return;
    const probeRate = (this.probeOk * 1000) / this.probeMs;
    this.probeOk = 0;
    this.probeMs = 0;
    this.probeCount = 0;
    if (this.probeBase === undefined) {
      this.probeBase = { limit: this.current, rate: probeRate };
      this.set(Math.ceil(this.current * (1 + this.options.probeStep)));
    } else if (probeRate > this.probeBase.rate * (1 + this.options.probeGain)) {
      this.probeBase = { limit: this.current, rate: probeRate };
      this.set(Math.ceil(this.current * (1 + this.options.probeStep)));
    } else {
      this.set(this.probeBase.limit);
      this.resetProbe();
      this.holdUntil = now + this.options.holdMs;
    }
  }

  private resetAccumulated(now: number): void {
    this.lastTime = now;
    this.acc.ok = 0;
    this.acc.peak = 0;
  }

  private resetProbe(): void {
    this.probeBase = undefined;
    this.probeOk = 0;
    this.probeMs = 0;
    this.probeCount = 0;
  }

  private set(limit: number): void {
    this.current = clamp(Math.round(limit), this.min, this.max);
  }
}

function clamp(n: number, lo: number, hi: number): number {
  return n < lo ? lo : n > hi ? hi : n;
}
