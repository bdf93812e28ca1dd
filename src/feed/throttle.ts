import {
  AdaptiveLimit,
  type AdaptiveLimitSettings,
  type LimitChange,
  type QueueReading,
} from '../limit/limit-search.js';

export type { QueueReading } from '../limit/limit-search.js';

/**
 * The in-flight limit: how many operations may be on the wire at once. Pure (the caller passes the clock and
 * the counts), so it is tested with a simulated cluster.
 *
 * The level is found by the search in `limit/limit-search.ts` (the visit's, with momentum): it grows while
 * throughput grows, and when latency grows and throughput does not (operations waiting in the service's queue,
 * in a connection's buffers, or for the client's own CPU) it comes back down. The service's 429 halves it at once,
 * below what was actually in flight, at most once a round trip.
 *
 * A measured window of the search is at least two round trips long, so a slow cluster is not misread; once the
 * first climb is over, also at least `measureMs`, so a pause of the process (a garbage collection) is a small part
 * of it. The climb itself decides between levels twice apart, which a short window tells well enough, and measures
 * a step that did not pay once more: its windows are as short as the ticks (`windowMs`), and the unmeasured one
 * after a change only one round trip (what was sent at the old level has answered by then).
 */
/** The adaptive limit's highest value unless `maxInflight` says otherwise; the transport's defaults follow it. */
export const defaultMaxInflight = 1024;

export interface ThrottleOptions {
  /** Lowest limit. Default 4: an application that embeds at feed time may have 8 slots or fewer (docs/feed.md#flow-control). */
  min?: number;
  /** Highest limit. Default `defaultMaxInflight`. */
  max?: number;
  /**
   * First limit. Default 8 (bounded by min and max): an application that embeds at feed time has as few as 8 slots,
   * and the climb doubles from here within a round trip or two each. (The start itself cannot be judged by
   * latency: a process's first windows are slow by its own warming up, 194 ms on average against the simulator on a
   * loaded machine, where a queue of 8 at 100 ms is 150.)
   */
  initial?: number;
  /** How often the caller samples: the shortest window while the search climbs. Default 50 ms. */
  windowMs?: number;
  /** Shortest window of the search. Default 250 ms. */
  measureMs?: number;
  /** Multiplier on 429. Default 0.5. */
  decrease?: number;
}

export interface Throttle {
  /** Current limit. */
  readonly limit: number;
  /** The queue as the search reads it (adaptive only, once an answer came). */
  readonly queue?: QueueReading | undefined;
  /** Counts for the sample that just ended; `now` in ms. */
  sample(now: number, window: ThrottleWindow): void;
  /** A 429 answered at `now` (ms), with at most `peakInflight` in flight since the last sample: cut at once if due. */
  throttledNow?(now: number, peakInflight: number): void;
}

export interface ThrottleWindow {
  /** Operations completed with success in the window. */
  ok: number;
  /** Responses with 429 in the window. */
  throttled: number;
  /** Highest number in flight seen during the window. */
  peakInflight: number;
  /** Mean response latency in the window, when known. */
  latencyMs?: number;
  /** How many answers `latencyMs` is the mean of (its weight in a longer window); default 1. */
  answers?: number;
  /** The shortest single response in the window, when known. */
  minLatencyMs?: number;
}

export class FixedThrottle implements Throttle {
  constructor(readonly limit: number) {}
  sample(): void {}
}

/**
 * A doubling goes on climbing while it pays a tenth more throughput (not the objective's 23 %: a client whose
 * batching pays as it sends more gains less per doubling below the knee), and one that did not is measured once
 * more before the climb ends on it: at the start of a feed the process itself is warming up (connections opening,
 * code compiled), and a window it made slow ended the climb early. A climb on a tenth once went past a bounded
 * cluster's queue (429s); `climbLatencyRise` and `climbQueue` now end it where the queue forms.
 */
const climbGain = 0.1;

/**
 * A doubling of the climb whose mean latency rose by more than half does not pay, whatever throughput did: against
 * an unbounded service latency stays flat as the limit doubles (a rise of a half is noise and the client's own
 * batching); against a queue it doubles with the limit. At the start of a feed the process warms up while it climbs,
 * so every doubling gains throughput; without this the climb ran into a bounded container's queue in the first
 * second (the limit at 256, p99 at 6 times the service's latency, 429s).
 */
const climbLatencyRise = 0.5;

/**
 * The climb ends where a window's mean latency is half as long again as the shortest answer seen, and 20 ms longer:
 * a queue has formed at the service. The hold's probes then find the knee from there, a quarter at a time. Less
 * is within what the client adds itself: a process warming up, short of CPU, answered in 1.5 ms at best and 10 on
 * average in its first window against the simulator. A faster service's queue shows in `climbLatencyRise`.
 */
const climbQueue = { rise: 0.5, atLeastMs: 20 };

/**
 * The hold sits at the knee: the fewest in flight that keep 96 % of the best rate held lately (a sweep of fixed
 * levels calls 95 % the knee; the rest is margin for one window's noise). Against a bounded container sharing its
 * cores with the client, the objective held 128 in flight where 48 gave 0.95 of the best: three times the knee's
 * latency for 3 % more.
 */
const kneeLoss = 0.04;

/**
 * After a 429, the search tries no more than this share of what was in flight when it came (until a run of holds
 * without one raises it again): the service's queue was full there, and every later probe up to it is a burst of
 * 429s.
 */
const ceilingShare = 0.9;

/**
 * How long a feed's process warms up: its code is compiled and its connections open while the first answers come,
 * and each window is faster than the one before, whatever the limit (against a bounded container on a loaded
 * 2-core machine, the mean latency at a fixed 32 in flight fell from 360 ms to 5 over 2.5 s). Meanwhile the search
 * keeps no step down: one window that the warm-up made fast kept a step from 32 to 26, then probed 17.
 */
const warmUpMs = 2000;

/**
 * A window whose answers, by Little's law, held more than this many times what was in flight (its rate times its
 * mean latency) is a backlog let go, not a measurement of the limit: a cluster that paused (a garbage collection of
 * 2 s) answers everything it held at once, and the window after it read as a level that paid in proportion, which
 * set the climb going again, past the bounded container's queue.
 */
const backlogShare = 3;

/** Answers in a window from which its counted throughput is taken alone (see `AdaptiveThrottle.rateOf`). */
const countedAnswers = 200;

/** How the feed's search goes, whatever its bounds: the settings above (the visit's search keeps its own). */
export const feedSearchSettings = {
  momentum: true,
  climbGain,
  confirmDown: true,
  climbLatencyRise,
  climbQueue,
  kneeLoss,
} as const satisfies Omit<AdaptiveLimitSettings, 'start' | 'max' | 'min'>;

/** Windows a limit stays in the changes kept for the report. */
const keptChanges = 100;

export class AdaptiveThrottle implements Throttle {
  private readonly search: AdaptiveLimit;
  private readonly min: number;
  private readonly windowMs: number;
  private readonly measureMs: number;
  private readonly decrease: number;
  private lastTime: number | undefined;
  /** When the first sample came (ms): the warm-up is counted from there. */
  private firstTime: number | undefined;
  private lastCut = Number.NEGATIVE_INFINITY;
  private roundTripMs = 0;
  /** Samples gathered towards the next window of the search. */
  private readonly acc = { ok: 0, peak: 0, latencySum: 0, latencyCount: 0, minLatency: Number.POSITIVE_INFINITY };
  /** The search's changes, oldest first (the last 100): when (ms, the caller's clock) and why. */
  readonly changes: Array<LimitChange & { at: number }> = [];

  constructor(options: ThrottleOptions = {}) {
    this.min = Math.max(1, options.min ?? 4);
    const max = Math.max(this.min, options.max ?? defaultMaxInflight);
    this.search = new AdaptiveLimit({ start: options.initial ?? 8, min: this.min, max, ...feedSearchSettings });
    this.windowMs = options.windowMs ?? 50;
    this.measureMs = options.measureMs ?? 250;
    this.decrease = options.decrease ?? 0.5;
  }

  get limit(): number {
    return this.search.limit;
  }

  get queue(): QueueReading | undefined {
    return this.search.queue;
  }

  /** How often the caller should sample. */
  get sampleMs(): number {
    return this.windowMs;
  }

  sample(now: number, w: ThrottleWindow): void {
    if (w.latencyMs !== undefined) this.roundTripMs = w.latencyMs;
    if (this.lastTime === undefined) this.lastTime = now - this.windowMs;
    this.firstTime ??= this.lastTime;
    if (w.throttled > 0) {
      this.search.noteRtt(w);
      this.cut(now, w.peakInflight, w.ok);
      return;
    }
    this.acc.ok += w.ok;
    this.acc.peak = Math.max(this.acc.peak, w.peakInflight);
    if (w.latencyMs !== undefined) {
      const answers = w.answers ?? 1;
      this.acc.latencySum += w.latencyMs * answers;
      this.acc.latencyCount += answers;
    }
    if (w.minLatencyMs !== undefined) this.acc.minLatency = Math.min(this.acc.minLatency, w.minLatencyMs);
    const elapsed = now - this.lastTime;
    const latency = this.acc.latencyCount > 0 ? this.acc.latencySum / this.acc.latencyCount : 0;
    if (elapsed < this.windowLength(latency) - 1e-9) return;
    const documentsPerSecond = (this.acc.ok * 1000) / elapsed;
    // When fewer than the limit were in flight, the limit was not what held throughput back: the window says
    // nothing about it; nor when it let go a backlog.
    const held =
      this.acc.peak >= this.limit * 0.9 && (documentsPerSecond * latency) / 1000 <= backlogShare * this.acc.peak;
    this.record(
      now,
      this.search.observe({
        documentsPerSecond: this.rateOf(documentsPerSecond, latency),
        held,
        warming: now - this.firstTime < warmUpMs,
        ...(this.acc.latencyCount > 0 && { latencyMs: latency }),
        ...(Number.isFinite(this.acc.minLatency) && { minLatencyMs: this.acc.minLatency }),
      }),
    );
    this.restart(now);
  }

  throttledNow(now: number, peakInflight: number): void {
    if (this.lastTime === undefined) this.lastTime = now - this.windowMs;
    this.cut(now, peakInflight, 0);
  }

  /**
   * The service said 429: halve, below what was in flight. At once, not at the next sample: until then every room
   * the limit leaves above the service's queue is a request answered 429 within a millisecond and sent again, a
   * storm of hundreds in one sample against a small queue. Once a round trip: 429s for requests sent before the
   * last cut say nothing new.
   */
  private cut(now: number, peakInflight: number, ok: number): void {
    if (now - this.lastCut < Math.max(this.windowMs, this.roundTripMs)) return;
    this.lastCut = now;
    // Below what was actually in flight when the service said no: the limit may have been far above it.
    const base = Math.min(this.limit, Math.max(peakInflight, this.acc.peak, this.min));
    const elapsed = now - this.lastTime!;
    this.record(
      now,
      this.search.cut(
        Math.floor(base * this.decrease),
        elapsed > 0 ? ((this.acc.ok + ok) * 1000) / elapsed : 0,
        base * ceilingShare,
      ),
    );
    this.restart(now);
  }

  /**
   * The window's throughput as the search is to judge it. Counted, from its answers; where they are few (a slow
   * cluster: 8 slots of 100 ms answer 32 in a window of 400 ms) the count is a coarse reading, 3 % a step on its
   * own, and one lucky window kept a probe up into the queue. There, the throughput by Little's law (the limit held
   * over the answers' mean latency, a mean of as many answers but of a finer reading) weighs in, all of it where
   * there are no more than a few answers, none from `countedAnswers` on.
   */
  private rateOf(counted: number, latencyMs: number): number {
    const answers = this.acc.latencyCount;
    if (answers >= countedAnswers || latencyMs <= 0 || answers === 0) return counted;
    const little = ((this.limit * 1000) / latencyMs) * Math.min(1, this.acc.ok / answers);
    const w = answers / countedAnswers;
    return w * counted + (1 - w) * little;
  }

  /**
   * How long the search's next window lasts. While it climbs, the window after a change is one round trip (what
   * was sent at the old level has answered by then) and a measured one two; later at least `measureMs` too.
   */
  private windowLength(latency: number): number {
    if (!this.search.isGrowing) return Math.max(this.measureMs, 2 * latency);
    return Math.max(this.windowMs, (this.search.measuring ? 2 : 1) * latency);
  }

  private restart(now: number): void {
    this.lastTime = now;
    this.acc.ok = 0;
    this.acc.peak = 0;
    this.acc.latencySum = 0;
    this.acc.latencyCount = 0;
    this.acc.minLatency = Number.POSITIVE_INFINITY;
  }

  private record(now: number, change: LimitChange | undefined): void {
    if (change === undefined) return;
    this.changes.push({ ...change, at: now });
    if (this.changes.length > keptChanges) this.changes.shift();
  }
}

/**
 * The throttle as the feeder drives it: told of each event as it happens, it keeps its own windows and samples
 * them on `tick()`. The feeder knows this interface and `createThrottle()`, not the classes behind them.
 */
export interface FeedThrottle {
  /** How many operations may be on the wire now. */
  readonly limit: number;
  /** The queue as the adaptive limit reads it, when it does. */
  readonly queue: QueueReading | undefined;
  /** How often the feeder should call `tick()`, in ms. */
  readonly tickMs: number;
  /** A request went out; `inflight` counts it. */
  sent(inflight: number): void;
  /** An answer came (any status), `latencyMs` after its request went out. */
  answered(latencyMs: number): void;
  /** An operation succeeded. */
  succeeded(): void;
  /** The service answered 429 at `now` (ms): the limit may be cut at once. */
  throttled(now: number): void;
  /** A window ends at `now` (ms) with `inflight` on the wire: the limit may change. */
  tick(now: number, inflight: number): void;
}

/** The feeder's throttle for its options: a fixed limit with `inflight`, else the adaptive one up to `maxInflight`. */
export function createThrottle(options: { inflight?: number; maxInflight?: number }): FeedThrottle {
  if (options.inflight !== undefined) return new WindowedThrottle(new FixedThrottle(options.inflight), 100);
  const adaptive = new AdaptiveThrottle({ max: options.maxInflight });
  return new WindowedThrottle(adaptive, adaptive.sampleMs);
}

/** Gathers the events of one window for a `Throttle`'s `sample()`. */
class WindowedThrottle implements FeedThrottle {
  private ok = 0;
  private throttledCount = 0;
  private latencySumMs = 0;
  private minLatencyMs = Number.POSITIVE_INFINITY;
  private responses = 0;
  private peakInflight = 0;

  constructor(
    private readonly throttle: Throttle,
    readonly tickMs: number,
  ) {}

  get limit(): number {
    return this.throttle.limit;
  }

  get queue(): QueueReading | undefined {
    return this.throttle.queue;
  }

  sent(inflight: number): void {
    if (inflight > this.peakInflight) this.peakInflight = inflight;
  }

  answered(latencyMs: number): void {
    this.latencySumMs += latencyMs;
    if (latencyMs < this.minLatencyMs) this.minLatencyMs = latencyMs;
    this.responses++;
  }

  succeeded(): void {
    this.ok++;
  }

  throttled(now: number): void {
    this.throttledCount++;
    this.throttle.throttledNow?.(now, this.peakInflight);
  }

  tick(now: number, inflight: number): void {
    this.throttle.sample(now, {
      ok: this.ok,
      throttled: this.throttledCount,
      peakInflight: this.peakInflight,
      ...(this.responses > 0 && {
        latencyMs: this.latencySumMs / this.responses,
        minLatencyMs: this.minLatencyMs,
        answers: this.responses,
      }),
    });
    this.ok = 0;
    this.throttledCount = 0;
    this.latencySumMs = 0;
    this.minLatencyMs = Number.POSITIVE_INFINITY;
    this.responses = 0;
    this.peakInflight = inflight;
  }
}
