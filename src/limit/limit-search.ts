/**
 * How many requests (a feed's operations, a visit's slices) to keep in flight: a search fed one measurement of
 * throughput per window, which answers the limit to hold next. Pure: no timers, no I/O (the feed's throttle and
 * the visit's chain scheduler feed it).
 *
 * What it maximises is the established feed clients' objective: throughput divided by in-flight^0.3. By Little's
 * law (in flight = throughput x latency) that is throughput^0.7 / latency^0.3: more in flight must pay in
 * throughput for the latency it adds. Twice as many must bring at least 23 % more (2^0.3), a quarter more at least
 * 7 %, and a fifth fewer may cost up to 6.5 %. So while the service has idle capacity the search climbs, and once
 * more in flight only queues (at the service, or in buffers on the way), latency grows while throughput does
 * not, and it steps back to the fewest that give the same throughput.
 *
 * - Growth: from `start`, double after each window whose level beat the one before; the first level that does not
 *   ends growth, and the search goes back to the best level of the climb (the one before it). With `climbGain`
 *   the climb goes on while each doubling raises throughput by that much, and a step that did not is measured
 *   once more before the climb ends on it (a climb that ended early, on a window that the start-up of the
 *   process or a pause made slow, leaves the search seconds below its level; one that went a step too far is
 *   undone in a window); it ends at the best level of the climb by the objective.
 * - Hold: stay, averaging the windows; then probe one level a quarter higher or a fifth lower (alternately), kept if
 *   it beats the held level, undone if not. A probe from a hold that is undone doubles the time to the next one
 *   (up to 32 windows), so a search that found its level spends little time off it; one that is kept resets it to
 *   4. The end of the climb, and the probe down that momentum makes after it, count as no failed probe.
 * - Momentum (`momentum: true`): a kept probe is followed at once by another the same way, each a larger step (a
 *   quarter, a half, then double up; a fifth, a third, then half down), and the growth's undo by a probe down,
 *   so a level far from the best (a start above it, or a service that changed) is left in a few windows rather
 *   than a few holds.
 * - A probe down is kept when the objective says so and, with `maxDownLoss`, it cost no more throughput than that.
 * - Cut: the caller may set the limit from outside (a feed halves it on 429); growth ends and the new level is
 *   measured and held like any other.
 *
 * After every change one window passes unmeasured: requests just started have not answered yet, and parked ones
 * stop at their next continuation token. A window in which the caller could not hold the limit (too little work
 * to fill it, or parked ones not stopped yet), or that delivered nothing, is not a measurement of it, and does not
 * count.
 */
export interface AdaptiveLimitSettings {
  /** The first limit. */
  start: number;
  /** The highest limit (the slices there are). */
  max: number;
  /** The lowest limit; default 1. */
  min?: number;
  /** After a kept probe, probe again the same way at once. Default false. */
  momentum?: boolean;
  /**
   * The least rise of throughput (a share: 0.1 is 10 %) for which a doubling goes on climbing; a doubling that
   * rose less is measured in a second window before the climb ends. Default: the objective decides after one
   * window. The climb ends at its best level by the objective either way.
   */
  climbGain?: number;
  /**
   * The most throughput a step down may cost and be kept, as a share (0.03: 3 %); default: what the objective
   * allows (6.5 % for a fifth fewer, 19 % for half). Against a cluster whose throughput falls off gently below its
   * capacity (queues that smooth the service's jitter), the objective alone keeps stepping down to where each step
   * costs its full allowance: some 0.85 of the capacity; this keeps the level where throughput is still flat.
   */
  maxDownLoss?: number;
  /**
   * A probe down that looks better is measured in a second window, and kept only if the two together say so.
   * Default false. Against a level where throughput hardly depends on the limit, one window's noise keeps a step
   * down half the time, and momentum makes the next step larger: a feed against a server sharing its cores ended at
   * 27 in flight in one run and at 206 in the next (benchmarks/feed/null-endpoint.ts).
   */
  confirmDown?: boolean;
  /**
   * The most the mean latency may rise over one doubling of the climb for the doubling to count as paying, as a
   * share (0.5: half as long again); needs `LimitSample.latencyMs`. Default: latency is not looked at. Twice as many
   * in flight answered in twice the time is queueing, whatever the throughput did meanwhile: a process still warming
   * up, or batching more as it sends more, gains throughput at every doubling, and without this the climb reads that
   * as the service's capacity and runs into its queue (a bounded container: 429s at the first second).
   */
  climbLatencyRise?: number;
  /**
   * The climb ends, where it is, once a window's mean latency exceeds the shortest answer seen (`minRttMs`) by more
   * than `rise` of it and by at least `atLeastMs`: a queue has formed (TCP's HyStart reads the round trip the same
   * way). Needs `LimitSample.minLatencyMs`. Default: not looked at. Against 8 slots of 100 ms, a start at 16 already
   * waits 200 ms, and the doubling to 32 would wait 400 before `climbLatencyRise` could undo it. The least in ms
   * keeps the client's own jitter from reading as a queue: on a client short of CPU, one answer comes in 1 ms and the
   * window's mean is 3.5 against a service of 2.
   */
  climbQueue?: { rise: number; atLeastMs: number };
  /**
   * Judge the hold's probes by the knee rather than by the objective: a probe down is kept while it delivers at
   * least `1 - kneeLoss` of the best rate held since the cluster last changed, and a probe up only when it delivers
   * `kneeLoss` more than the level it left. The search then sits at the fewest in flight that give nearly all the
   * throughput (what a sweep of fixed levels calls the knee), wherever the objective's exponent would put it: it
   * stops short of the knee where each doubling gains less than 23 % (a client whose batching pays as it sends
   * more), and goes past it where a fifth fewer costs more than 3 % of one noisy window. Default: the objective.
   */
  kneeLoss?: number;
}

/** One window as the caller saw it. */
export interface LimitSample {
  /** Throughput in the window: documents delivered (visit) or operations succeeded (feed) per second. */
  documentsPerSecond: number;
  /** Whether the caller held the current limit through the window (enough work to fill it, none still parking). */
  held: boolean;
  /** Mean latency of the answers in the window, in ms, when the caller measures it (see `climbLatencyRise`). */
  latencyMs?: number;
  /** The shortest single answer in the window, in ms (see `climbQueue`). */
  minLatencyMs?: number;
  /**
   * The caller's process is still warming up (its code being compiled, its connections opening): each later window
   * is faster whatever the limit, so a step down would read the warm-up as its own gain. The knee rule keeps none
   * while this is set.
   */
  warming?: boolean;
}

/** A change of the limit and why: what the search saw at the level it left. */
export interface LimitChange {
  /** The new limit. */
  limit: number;
  /** The documents/s measured at the level that was left (the average when it was held). */
  documentsPerSecond: number;
  reason: 'grow' | 'probe-up' | 'probe-down' | 'undo' | 'cut';
}

/**
 * What the search reads of the queue, for a report: the shortest round trip of late and how many of the requests
 * in flight wait beyond it (Vegas's estimate: in flight x (1 - shortest / mean latency)).
 */
export interface QueueReading {
  /** The shortest single answer of the last windows (some 40 to 80 of them), in ms. */
  minRttMs: number;
  /** Of the limit, how many wait beyond the shortest round trip, by the last window's mean latency. */
  queueEstimate: number;
}

/**
 * Several searches' readings as one (a feed's worker lanes, a run's shards): the shortest round trip of any, the
 * waiting of all; undefined where none has one.
 */
export function mergeQueueReadings(readings: Iterable<QueueReading | undefined>): QueueReading | undefined {
  let merged: QueueReading | undefined;
  for (const q of readings) {
    if (q === undefined) continue;
    merged =
      merged === undefined
        ? { minRttMs: q.minRttMs, queueEstimate: q.queueEstimate }
        : { minRttMs: Math.min(merged.minRttMs, q.minRttMs), queueEstimate: merged.queueEstimate + q.queueEstimate };
  }
  return merged;
}

/** Objective exponent: as in the established feeders' search, throughput / inflight^0.3. */
export const objectiveExponent = 0.3;
const firstHoldWindows = 4;
/** Probe steps by the number of probes kept in a row (momentum only; without it, always the first). */
const upSteps = [1.25, 1.5, 2];
const downSteps = [0.8, 2 / 3, 0.5];
const maxHoldWindows = 32;
/** Windows in one half of the shortest round trip's memory: it is the least of this half and the one before. */
const minRttEpoch = 40;
/**
 * A step's latency moved with it as a queue's does when it moved by this share of the step or more: a pure queue
 * gives back all of it (Little's law), and a doubling into one waits twice as long. A client whose batching pays as
 * it sends more gave back three quarters at 1,024 to 819 in flight and lost 15 % of its throughput, which the
 * process's own warming up hid.
 */
const queueShare = 0.8;
/**
 * A doubling of the climb added nothing but a queue when its latency rose by this share of the step or more (its
 * throughput, by Little's law, by 5 % or less). Not `queueShare`: 16 nodes of 1 slot behind a balancer answered 64 in
 * flight in 81 % more time than 32, and gave 10 % more, 0.98 of the best against 0.89.
 */
const climbQueueShare = 0.9;
/** A step down gave back nothing but a queue when its latency fell by this share of the step or more. */
const wholeQueueShare = 0.95;
/** A step up that paid this share of its proportional gain or more is far below the knee (knee rule). */
const farBelowShare = 0.8;
/** Holds without a cut after which the ceiling a 429 set rises by a quarter (a cluster that grew gets room again). */
const ceilingHolds = 16;

type Phase =
  /** The window after a change: not measured. */
  | { kind: 'settle'; then: 'base' | 'probe' }
  /** Measure the held level once (at the start, after an undo). */
  | { kind: 'base' }
  /**
   * Measure the level being tried (`again`: a climb's step that did not pay, measured once more; `first`: a probe's
   * first window, with `confirmDown`).
   */
  | { kind: 'probe'; from: Level; again?: boolean; first?: Omit<Level, 'limit'> }
  | { kind: 'hold'; left: number; sum: number; windows: number; latencySum: number; latencies: number };

interface Level {
  limit: number;
  rate: number;
  latencyMs?: number | undefined;
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
  private readonly momentum: boolean;
  private readonly maxDownLoss: number;
  private readonly climbGain: number | undefined;
  private readonly confirmDown: boolean;
  private readonly climbLatencyRise: number | undefined;
  /** The levels measured in the climb, while it lasts. */
  private climb: Level[] = [];
  /** Whether the probe being measured was made from a hold (its undo lengthens the next hold). */
  private probeFromHold = false;
  /** Momentum: probes kept in a row the same way, which sets the next one's step. */
  private streak = 0;
  /** Momentum: after the growth's undo, probe down once the level is measured again. */
  private downAfterBase = false;
  private readonly climbQueue: { rise: number; atLeastMs: number } | undefined;
  private readonly kneeLoss: number | undefined;
  /** The best held rate since the cluster last changed (knee rule). */
  private bestRate = 0;
  /** Shortest answers: of this epoch of windows, and of the one before. */
  private rttNow = Number.POSITIVE_INFINITY;
  private rttBefore = Number.POSITIVE_INFINITY;
  private rttWindows = 0;
  private lastLatencyMs: number | undefined;
  /** The last window was measured while the caller warmed up (`LimitSample.warming`). */
  private warming = false;
  /** The most to try since a 429 (undefined: max), and the holds since it was set or raised. */
  private ceilingLimit: number | undefined;
  private holdsSinceCeiling = 0;

  constructor(settings: AdaptiveLimitSettings) {
    this.min = Math.max(1, settings.min ?? 1);
    this.max = Math.max(this.min, settings.max);
    this.current = clamp(settings.start, this.min, this.max);
    this.momentum = settings.momentum ?? false;
    this.maxDownLoss = settings.maxDownLoss ?? 1;
    this.climbGain = settings.climbGain;
    this.confirmDown = settings.confirmDown ?? false;
    this.climbLatencyRise = settings.climbLatencyRise;
    this.climbQueue = settings.climbQueue;
    this.kneeLoss = settings.kneeLoss;
  }

  /** The shortest round trip seen lately and the queue estimate, for a report; undefined before an answer. */
  get queue(): QueueReading | undefined {
    const minRttMs = this.minRttMs;
    if (minRttMs === undefined || this.lastLatencyMs === undefined || this.lastLatencyMs <= 0) return undefined;
    return { minRttMs, queueEstimate: Math.max(0, this.current * (1 - minRttMs / this.lastLatencyMs)) };
  }

  private get minRttMs(): number | undefined {
    const m = Math.min(this.rttNow, this.rttBefore);
    return Number.isFinite(m) ? m : undefined;
  }

  /**
   * The latencies of a window that is no measurement of the limit (one cut short by a 429), for the round trip and
   * the queue estimate alone. A windowed minimum (BBR's way): an old minimum ages out, so a cluster that slowed for
   * good is seen to have.
   */
  noteRtt(sample: Pick<LimitSample, 'latencyMs' | 'minLatencyMs'>): void {
    if (sample.latencyMs !== undefined) this.lastLatencyMs = sample.latencyMs;
    if (sample.minLatencyMs !== undefined && sample.minLatencyMs > 0)
      this.rttNow = Math.min(this.rttNow, sample.minLatencyMs);
    if (++this.rttWindows >= minRttEpoch) {
      this.rttBefore = this.rttNow;
      this.rttNow = Number.POSITIVE_INFINITY;
      this.rttWindows = 0;
    }
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
    this.noteRtt(sample);
    if (phase.kind === 'settle') {
      this.phase = phase.then === 'base' ? { kind: 'base' } : { kind: 'probe', from: this.held! };
      return undefined;
    }
    // A window without documents (the first buckets are slow to come, or the selection matches little) says
    // nothing about the number of chains either.
    if (!sample.held || !(sample.documentsPerSecond > 0)) return undefined;
    const rate = sample.documentsPerSecond;
    this.warming = sample.warming === true;
    switch (phase.kind) {
      case 'base':
        this.held = { limit: this.current, rate, latencyMs: sample.latencyMs };
        if (this.growing) return this.grow();
        if (this.downAfterBase) {
          this.downAfterBase = false;
          return this.tryLevel(false) ?? this.startHold();
        }
        return this.startHold();
      case 'probe': {
        // Confirmed, the level is both windows': its rate and its latency alike. Judged by the second window's latency
        // alone, a step down from 150 to 120 in flight against a bounded container was undone: its latency fell by
        // 15 % there, short of 0.8 of the step (20 %), and by 17 % over the two.
        const tried: Level = {
          limit: this.current,
          rate: phase.first === undefined ? rate : (phase.first.rate + rate) / 2,
          latencyMs: mean(phase.first?.latencyMs, sample.latencyMs),
        };
        if (this.growing) return this.climbed(tried, phase.from, phase.again === true);
        const better =
          this.kneeLoss === undefined ? this.better(tried, phase.from) : this.nearerKnee(tried, phase.from);
        if (
          better &&
          this.confirmDown &&
          phase.first === undefined &&
          (tried.limit < phase.from.limit || this.kneeLoss !== undefined)
        ) {
          this.phase = { kind: 'probe', from: phase.from, first: { rate, latencyMs: sample.latencyMs } };
          return undefined;
        }
        if (better) {
          this.held = tried;
          this.holdWindows = firstHoldWindows;
          if (this.farBelowKnee(tried, phase.from)) {
            this.growing = true;
            this.streak = 0;
            return this.grow();
          }
          if (this.momentum) {
            const up = tried.limit > phase.from.limit;
            // The next probe after a hold goes the other way, as without momentum.
            this.nextProbeUp = !up;
            this.streak++;
            const again = this.tryLevel(up);
            if (again !== undefined) return again;
          }
          this.streak = 0;
          return this.startHold();
        }
        // Undo: back to the level it came from, measured afresh once the extra chains have stopped.
        this.streak = 0;
        if (this.probeFromHold) this.holdWindows = Math.min(maxHoldWindows, this.holdWindows * 2);
        return this.change(phase.from.limit, { kind: 'settle', then: 'base' }, 'undo', rate);
      }
      case 'hold': {
        const sum = phase.sum + rate;
        const windows = phase.windows + 1;
        const latencySum = phase.latencySum + (sample.latencyMs ?? 0);
        const latencies = phase.latencies + (sample.latencyMs === undefined ? 0 : 1);
        if (phase.left > 1) {
          this.phase = { kind: 'hold', left: phase.left - 1, sum, windows, latencySum, latencies };
          return undefined;
        }
        this.held = {
          limit: this.current,
          rate: sum / windows,
          latencyMs: latencies > 0 ? latencySum / latencies : undefined,
        };
        this.noteHeld(this.held.rate);
        const up = this.probeUpFromHold(this.held);
        if (up === undefined) return this.startHold();
        this.nextProbeUp = !up;
        this.probeFromHold = true;
        return this.tryLevel(up) ?? this.tryLevel(!up) ?? this.startHold();
      }
    }
  }

  /**
   * Sets the limit from outside (a feed's cut on 429): growth ends, the new level is measured once its window has
   * settled, then held, and the first probe after it goes up.
   */
  cut(limit: number, documentsPerSecond: number, ceiling?: number): LimitChange | undefined {
    if (ceiling !== undefined) {
      this.ceilingLimit = Math.max(this.min, Math.min(this.ceilingLimit ?? this.max, Math.floor(ceiling)));
      this.holdsSinceCeiling = 0;
    }
    const next = clamp(limit, this.min, this.top);
    this.growing = false;
    this.bestRate = 0;
    this.held = undefined;
    this.nextProbeUp = true;
    this.holdWindows = firstHoldWindows;
    this.streak = 0;
    this.downAfterBase = false;
    this.climb = [];
    this.probeFromHold = false;
    if (next === this.current) {
      this.phase = { kind: 'settle', then: 'base' };
      return undefined;
    }
    return this.change(next, { kind: 'settle', then: 'base' }, 'cut', documentsPerSecond);
  }

  /**
   * A doubling measured: climb on while it paid (by the objective, or by `climbGain`), else end the climb at its
   * best level (the one tried, or back to an earlier one).
   */
  private climbed(tried: Level, from: Level, again: boolean): LimitChange | undefined {
    // Measured again, the later window counts (the start-up or a pause slowed the first).
    const queued = this.queued(tried, from);
    const paid =
      this.climbGain === undefined ? this.better(tried, from) : tried.rate >= from.rate * (1 + this.climbGain);
    this.held = tried;
    if (paid && !queued) {
      this.climb.push(from);
      return this.grow();
    }
    if (queued) {
      this.climb = [];
      this.growing = false;
      // A queue formed, and throughput paid for it (a client that batches more as it sends more): the climb ends
      // here, and the hold's probes look for the knee below. Unless the latency grew with the step: then it was all
      // queue, and what paid was the process warming up (8 slots of 100 ms: 16 in flight answered in 200 ms).
      if (paid && this.climbQueue !== undefined && !this.latencyFollowed(tried, from, false, climbQueueShare))
        return this.startHold();
      // What a queue added is latency alone: back to the level before it, whatever the objective says of the two.
      this.held = from;
      this.downAfterBase = this.downAfterUndo;
      return this.change(from.limit, { kind: 'settle', then: 'base' }, 'undo', tried.rate);
    }
    // With climbGain, a step that did not pay is measured once more before the climb ends on it; one that queued
    // is not (a slow window is chance, a queue is not), and the climb ends at once.
    if (this.climbGain !== undefined && !again) {
      this.phase = { kind: 'probe', from, again: true };
      return undefined;
    }
    this.climb.push(from);
    return this.endClimb();
  }

  /** Ends the climb at its best level by the objective: the held one, or back to an earlier one. */
  private endClimb(): LimitChange | undefined {
    const last = this.held!;
    const best = this.climb.reduce((a, b) => (objective(b) > objective(a) ? b : a), last);
    this.climb = [];
    this.growing = false;
    if (best === last) return this.startHold();
    // Back to the best level, measured afresh once the extra ones have stopped; with momentum, then a probe down.
    this.held = best;
    this.downAfterBase = this.downAfterUndo;
    return this.change(best.limit, { kind: 'settle', then: 'base' }, 'undo', last.rate);
  }

  /**
   * Which way the hold's probe goes: alternately up and down (at a bound, `tryLevel` turns it the other way). With
   * the knee rule, down while a queue stands at the held level (it is above the knee: a start set high, a cluster
   * that slowed), and up while the caller warms up (no step down is kept then); no probe at all while both (the
   * climb ended in a queue that its first, slow answers hid: 16 in flight against 8 slots of 100 ms answered in
   * 200 ms where 8 had taken 161 while warming up).
   */
  private probeUpFromHold(held: Level): boolean | undefined {
    if (this.kneeLoss !== undefined) {
      const queue = this.queueFormed(held);
      if (this.warming) return queue ? undefined : true;
      if (queue) return false;
    }
    return this.nextProbeUp;
  }

  /**
   * Whether the climb's undo is followed by a probe down (momentum: a start above the best is left in a few
   * windows). Not with the knee rule, whose holds probe down from the knee anyway: the undo comes in the first
   * second of a feed, and a window that the process's warming up made fast kept a step down to below the start.
   */
  private get downAfterUndo(): boolean {
    return this.momentum && this.kneeLoss === undefined;
  }

  private startHold(): undefined {
    this.probeFromHold = false;
    if (this.ceilingLimit !== undefined && ++this.holdsSinceCeiling >= ceilingHolds) {
      this.holdsSinceCeiling = 0;
      this.ceilingLimit = Math.ceil(this.ceilingLimit * 1.25);
      if (this.ceilingLimit >= this.max) this.ceilingLimit = undefined;
    }
    // While the caller warms up, a hold's average is stale by its end, and only a probe up can be kept: one window.
    const left = this.warming && this.kneeLoss !== undefined ? 1 : this.holdWindows;
    this.phase = { kind: 'hold', left, sum: 0, windows: 0, latencySum: 0, latencies: 0 };
    return undefined;
  }

  /** Doubles while growing; at the upper bound the climb ends. */
  private grow(): LimitChange | undefined {
    const limit = clamp(this.current * 2, this.min, this.top);
    if (limit !== this.current) return this.change(limit, { kind: 'settle', then: 'probe' }, 'grow', this.held!.rate);
    return this.endClimb();
  }

  /**
   * A probe a quarter up or a fifth down (larger in a streak), one at least; undefined when the bounds leave no room
   * that way.
   */
  private tryLevel(up: boolean): LimitChange | undefined {
    const step = Math.min(this.streak, 2);
    const target = up
      ? Math.max(this.current + 1, Math.round(this.current * upSteps[step]))
      : Math.min(this.current - 1, Math.round(this.current * downSteps[step]));
    const limit = clamp(target, this.min, this.top);
    if (limit === this.current) return undefined;
    return this.change(limit, { kind: 'settle', then: 'probe' }, up ? 'probe-up' : 'probe-down', this.held!.rate);
  }

  /**
   * Whether the climb's step from `from` to `tried` went into a queue: its latency rose more than
   * `climbLatencyRise`, or stands above the shortest round trip as `climbQueue` says.
   */
  private queued(tried: Level, from: Level): boolean {
    if (this.queueFormed(tried)) return true;
    if (this.climbLatencyRise === undefined || tried.latencyMs === undefined || from.latencyMs === undefined)
      return false;
    return tried.latencyMs > from.latencyMs * (1 + this.climbLatencyRise);
  }

  /** The most to try: `max`, or the ceiling a 429 set. */
  private get top(): number {
    return Math.min(this.max, this.ceilingLimit ?? this.max);
  }

  /** Whether a queue had formed at a measured level: its mean latency beyond the shortest round trip (`climbQueue`). */
  private queueFormed(level: Level): boolean {
    const minRtt = this.minRttMs;
    const q = this.climbQueue;
    if (q === undefined || level.latencyMs === undefined || minRtt === undefined) return false;
    return level.latencyMs > minRtt * (1 + q.rise) && level.latencyMs - minRtt >= q.atLeastMs;
  }

  /**
   * Whether a kept step up paid nearly in proportion (a quarter more in flight, a fifth or more throughput): all of
   * it served, none queued, so the knee is far above, and the search climbs again by doubling (knee rule only).
   */
  private farBelowKnee(tried: Level, from: Level): boolean {
    if (this.kneeLoss === undefined || tried.limit <= from.limit) return false;
    return tried.rate >= from.rate * (1 + farBelowShare * (tried.limit / from.limit - 1));
  }

  /**
   * Whether a step's latency moved with it as a queue's does: up or down by most of the step (all of it where only a
   * queue changed, by Little's law). A step down that kept the latency took nothing but throughput, whatever one
   * window said of the rate (at the start of a process, which warms up as it goes, every later window is faster);
   * a doubling whose answers took twice as long added nothing but a queue, whatever the warm-up paid meanwhile.
   * `unknown` answers where a latency is missing; `share` is how much of the step is most.
   */
  private latencyFollowed(tried: Level, from: Level, unknown: boolean, share = queueShare): boolean {
    if (tried.latencyMs === undefined || from.latencyMs === undefined) return unknown;
    const step = tried.limit / from.limit - 1;
    const moved = tried.latencyMs / from.latencyMs - 1;
    return step < 0 ? moved <= share * step : moved >= share * step;
  }

  /**
   * The knee rule (`kneeLoss`): a step down is kept while it gave back a queue and kept nearly all of the best rate
   * held lately, a step up only when it paid more than that share over the level it left.
   */
  private nearerKnee(tried: Level, from: Level): boolean {
    const loss = this.kneeLoss!;
    this.noteHeld(from.rate);
    if (tried.limit < from.limit) {
      if (this.warming || !this.latencyFollowed(tried, from, true)) return false;
      // A step whose latency fell by all of it gave back nothing but a queue (Little's law): kept unless its count
      // says it lost much, since a best is the highest of many noisy holds (16 in flight against 8 slots of 100 ms
      // held 81 a second once, and no step down came within 4 % of it).
      const allQueue = this.latencyFollowed(tried, from, false, wholeQueueShare);
      return tried.rate >= this.bestRate * (1 - (allQueue ? 2 : 1) * loss);
    }
    return tried.rate >= from.rate * (1 + loss);
  }

  /**
   * A held rate: the best lately, unless it is well below it, which says the cluster's capacity fell (a node left,
   * a slower phase): then it is the new best, and the knee is sought below it.
   */
  private noteHeld(rate: number): void {
    if (this.kneeLoss === undefined) return;
    if (rate > this.bestRate || rate < this.bestRate * (1 - 3 * this.kneeLoss)) this.bestRate = rate;
  }

  /** Whether level `a` beats level `b`: documents/s per in-flight^0.3 at least as high, and a step down within the loss. */
  private better(a: Level, b: Level): boolean {
    if (a.limit < b.limit && a.rate < b.rate * (1 - this.maxDownLoss)) return false;
    return objective(a) >= objective(b);
  }

  private change(limit: number, phase: Phase, reason: LimitChange['reason'], documentsPerSecond: number): LimitChange {
    this.current = limit;
    this.phase = phase;
    return { limit, documentsPerSecond, reason };
  }
}

/** Documents/s per in-flight^0.3: what the search maximises. */
function objective(l: Level): number {
  return l.rate / l.limit ** objectiveExponent;
}

/** The mean of two readings, or the one there is. */
function mean(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  return b === undefined ? a : (a + b) / 2;
}

function clamp(n: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, Math.round(n)));
}
