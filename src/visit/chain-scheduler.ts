import { AdaptiveLimit, type AdaptiveLimitSettings, type LimitChange } from '../limit/limit-search.js';

/**
 * Which chains of a visit run when: at most `limit` at once, the next waiting one taking the place of one that ended.
 * The limit is fixed, or set by the adaptive search (limit/limit-search.ts) once per window from the documents/s seen.
 * When the limit drops below the chains running, the ones started last are parked: asked to stop at their next
 * continuation token, they go back to the front of the queue and resume from it later. How a chain runs (in this
 * thread, or in a visit worker) is the runner's business.
 */
export interface ChainRunner {
  /** Runs (or resumes) a chain until it ends for good (`done`: finished, failed, stopped) or stops when parked. */
  run(key: string): Promise<'done' | 'parked'>;
  /** Asks a running chain to stop at its next continuation token (`true`), or to go on after all (`false`). */
  park(key: string, wanted: boolean): void;
  /** Documents (and tombstones) the chain delivered so far, in all its runs. */
  delivered(key: string): number;
}

export interface ChainSchedulerOptions {
  /** The chains to run, in the order to start them. */
  keys: readonly string[];
  /** A fixed limit, or the adaptive search's bounds and its window (at least `windowMs`, and `windowDocuments` documents). */
  limit: number | { adaptive: AdaptiveLimitSettings; windowMs: number; windowDocuments?: number };
  runner: ChainRunner;
  /** Documents (and tombstones) delivered so far: what the adaptive search measures. */
  documents: () => number;
  /**
   * Settles once the runner takes chains (its worker threads loaded their code). The start-up before it is no step of
   * any chain: the first level's wait for its chains' first documents counts from it.
   */
  ready?: Promise<void>;
  /** Once aborted, no chain is started any more. */
  signal: AbortSignal;
  /** Called when a chain failed in a way that ends the visit (the caller stops the other chains). */
  onFailure?: (error: unknown) => void;
}

/** How many chains a visit kept in flight. */
export interface InflightReport {
  /** `adaptive`: the search set the limit; `fixed`: it was given (or all slices). */
  mode: 'adaptive' | 'fixed';
  /** The limit at the end. */
  limit: number;
  /** The highest limit held. */
  maxLimit: number;
  /** Chains running, on average over the visit. */
  meanRunning: number;
  /** The adaptive search's changes, oldest first (the last 100): when, to which limit, and what it had measured. */
  changes: Array<LimitChange & { seconds: number }>;
}

const keptChanges = 100;
/** The longest the search waits for the chains a change started to deliver their first documents, in windows. */
const maxFirstDeliveryWindows = 30;
/** A window that did not see its documents is extended up to this many times its length. */
const maxWindowStretch = 30;
const ticksPerWindow = 5;
/**
 * While the search climbs, its windows are this share of `windowMs` (two ticks): a climb decides between levels twice
 * apart, which a short window tells well enough (the feed's climb does the same), and a short export is over before a
 * slow climb pays. The windows after it (probes, holds) are whole.
 */
const growthWindowShare = 0.4;
/** Gaps between a chain's deliveries kept for their 90th percentile. */
const maxGaps = 256;

export class ChainScheduler {
  /** Settles when no chain runs and none is left to start (or the signal stopped the starting). */
  readonly done: Promise<void>;
  private readonly queue: string[];
  /** Running chains in the order they started, and whether each was asked to park. */
  private readonly running = new Map<string, { parking: boolean }>();
  private current: number;
  private maxLimit: number;
  private readonly search: AdaptiveLimit | undefined;
  private readonly changes: Array<LimitChange & { seconds: number }> = [];
  private timer: NodeJS.Timeout | undefined;
  private settled = false;
  private resolve!: () => void;
  private reject!: (err: unknown) => void;
  private readonly startedAt = performance.now();
  private lastAt = this.startedAt;
  private runningArea = 0;
  /**
   * The current window: when it began, the documents before it, how long the limit was held in it, and whether chains
   * started by the last change were still waiting for their first documents during it.
   */
  private window = { at: this.startedAt, documents: 0, heldMs: 0, sawFresh: false };
  /**
   * The chains the last change started, with what each had delivered before: until each delivered more (or stopped),
   * the level is not measured. A visitor's first documents may take a while (its first buckets): a level measured
   * before then looks no better than the one before, and one measured over the moment they all come at once looks
   * better than it is. Once they came, windows last at least as long as they took (`firstDeliveryMs`), so that a
   * window holds about one step of each chain.
   */
  private fresh = new Map<string, number>();
  private changedAt = this.startedAt;
  /** When the limit was last cut for a 429 or 503. */
  private lastCut = Number.NEGATIVE_INFINITY;
  private firstDeliveryMs = 0;
  /**
   * How long a chain goes between deliveries (as seen at the ticks): each running chain's count and when it last
   * grew, and the latest gaps. A window lasts at least two long gaps, so that it holds a couple of steps of every
   * chain and not one moment of some: documents come a bucket (from the simulator, 256) at a time.
   */
  private lastDelivery = new Map<string, { delivered: number; at: number }>();
  private readonly gaps: number[] = [];
  private readonly windowMs: number;
  private readonly windowDocuments: number;

  constructor(private readonly options: ChainSchedulerOptions) {
    this.queue = [...options.keys];
    this.done = new Promise<void>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    const limit = options.limit;
    this.windowMs = typeof limit === 'number' ? 0 : limit.windowMs;
    this.windowDocuments = typeof limit === 'number' ? 0 : (limit.windowDocuments ?? 0);
    if (typeof limit === 'number') {
      this.current = Math.max(1, limit);
    } else {
      this.search = new AdaptiveLimit(limit.adaptive);
      this.current = this.search.limit;
      this.window.documents = options.documents();
      // A fifth of a window between looks: often enough to see how far apart a chain's documents come.
      this.timer = setInterval(() => this.tick(), Math.max(1, limit.windowMs / ticksPerWindow));
      this.timer.unref();
    }
    this.maxLimit = this.current;
    // The first chains too: the first level is measured once they all sent something.
    this.fill(this.search !== undefined);
    if (this.fresh.size > 0) this.window.sawFresh = true;
    if (this.search !== undefined) void options.ready?.then(() => this.runnerReady());
    this.finishIfIdle();
  }

  /**
   * The runner now takes chains: the first level's clock starts again, unless the search already moved on from it. On
   * a loaded machine threads take seconds to start, and windows as long as that wait would outlast a short visit.
   */
  private runnerReady(): void {
    if (this.settled || this.changes.length > 0) return;
    this.account();
    this.changedAt = this.lastAt;
    this.window = { at: this.lastAt, documents: this.options.documents(), heldMs: 0, sawFresh: this.fresh.size > 0 };
  }

  /** Chains running now (parking ones included) and the limit. */
  inflight(): { running: number; limit: number; adaptive: boolean } {
    return { running: this.running.size, limit: this.current, adaptive: this.search !== undefined };
  }

  report(): InflightReport {
    this.account();
    const seconds = (this.lastAt - this.startedAt) / 1000;
    return {
      mode: this.search === undefined ? 'fixed' : 'adaptive',
      limit: this.current,
      maxLimit: this.maxLimit,
      meanRunning: seconds > 0 ? Math.round((this.runningArea / 1000 / seconds) * 100) / 100 : this.running.size,
      changes: [...this.changes],
    };
  }

  private fill(fresh = false): void {
    if (this.settled || this.options.signal.aborted) return;
    while (this.running.size < this.current && this.queue.length > 0) this.start(this.queue.shift()!, fresh);
  }

  private start(key: string, fresh = false): void {
    this.account();
    this.running.set(key, { parking: false });
    if (fresh) this.fresh.set(key, this.options.runner.delivered(key));
    let outcome: Promise<'done' | 'parked'>;
    try {
      outcome = this.options.runner.run(key);
    } catch (err) {
      outcome = Promise.reject(err);
    }
    outcome.then(
      (how) => this.ended(key, how),
      (err: unknown) => this.fail(err),
    );
  }

  private ended(key: string, how: 'done' | 'parked'): void {
    this.account();
    this.running.delete(key);
    this.fresh.delete(key);
    if (how === 'parked') this.queue.unshift(key);
    this.rebalance();
    this.fill();
    this.finishIfIdle();
  }

  private fail(err: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.stopTimer();
    this.options.onFailure?.(err);
    this.reject(err);
  }

  private finishIfIdle(): void {
    if (this.settled || this.running.size > 0) return;
    if (this.queue.length > 0 && !this.options.signal.aborted) return;
    this.settled = true;
    this.stopTimer();
    this.account();
    this.resolve();
  }

  private stopTimer(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Parks the chains started last while more run than the limit allows; lets parked ones go on when fewer do. */
  private rebalance(): void {
    const excess = Math.max(0, this.running.size - this.current);
    const entries = [...this.running.entries()];
    let parking = this.parking();
    for (let i = entries.length - 1; i >= 0 && parking < excess; i--) {
      const [key, r] = entries[i];
      if (r.parking) continue;
      r.parking = true;
      parking++;
      this.options.runner.park(key, true);
    }
    for (let i = 0; i < entries.length && parking > excess; i++) {
      const [key, r] = entries[i];
      if (!r.parking) continue;
      r.parking = false;
      parking--;
      this.options.runner.park(key, false);
    }
  }

  /** Running chains asked to park that have not stopped yet. */
  private parking(): number {
    let n = 0;
    for (const r of this.running.values()) if (r.parking) n++;
    return n;
  }

  /** Records, for each running chain that delivered since the last tick, the time since its delivery before. */
  private noteDeliveries(now: number): void {
    for (const key of this.lastDelivery.keys()) if (!this.running.has(key)) this.lastDelivery.delete(key);
    for (const key of this.running.keys()) {
      const delivered = this.options.runner.delivered(key);
      const last = this.lastDelivery.get(key);
      if (last === undefined) {
        this.lastDelivery.set(key, { delivered, at: Number.NaN });
      } else if (delivered > last.delivered) {
        if (!Number.isNaN(last.at)) {
          this.gaps.push(now - last.at);
          if (this.gaps.length > maxGaps) this.gaps.shift();
        }
        this.lastDelivery.set(key, { delivered, at: now });
      }
    }
  }

  /**
   * The 90th percentile of the recent gaps between a chain's deliveries (0 before there are any): documents may come
   * in bursts with pauses between them (several reads of one bucket, then the next bucket), and it is the pauses a
   * window has to span.
   */
  private typicalGapMs(): number {
    if (this.gaps.length === 0) return 0;
    const sorted = [...this.gaps].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length * 0.9)];
  }

  /** Adds the time since the last event to the running total and to the window's time at the limit. */
  private account(): void {
    const now = performance.now();
    const dt = now - this.lastAt;
    this.lastAt = now;
    this.runningArea += this.running.size * dt;
    if (this.running.size === this.current && [...this.running.values()].every((r) => !r.parking))
      this.window.heldMs += dt;
  }

  /**
   * A chain was answered 429 or 503: the cluster (or what is in front of it) says stop. The limit halves below the
   * chains running, at once and at most once a window, as the feed's does on 429: each chain's own backoff alone
   * lets all of them knock again together.
   */
  throttled(): void {
    if (this.settled || this.search === undefined) return;
    this.account();
    const now = this.lastAt;
    if (now - this.lastCut < this.windowMs) return;
    this.lastCut = now;
    const ms = now - this.window.at;
    const rate = ms > 0 ? ((this.options.documents() - this.window.documents) * 1000) / ms : 0;
    const change = this.search.cut(Math.max(1, Math.floor(this.running.size / 2)), rate);
    this.window = { at: now, documents: this.options.documents(), heldMs: 0, sawFresh: this.fresh.size > 0 };
    if (change !== undefined) this.apply(change, now);
  }

  private tick(): void {
    if (this.settled || this.search === undefined) return;
    this.account();
    const now = this.lastAt;
    this.noteDeliveries(now);
    if (this.fresh.size > 0) {
      for (const [key, before] of this.fresh) if (this.options.runner.delivered(key) > before) this.fresh.delete(key);
      this.window.sawFresh = true;
      if (this.fresh.size > 0 && now - this.changedAt > this.windowMs * maxFirstDeliveryWindows) this.fresh.clear();
      if (this.fresh.size === 0) this.firstDeliveryMs = now - this.changedAt;
    }
    const documents = this.options.documents();
    const ms = now - this.window.at;
    // The window after a change is not measured: it lasts until the chains the change started sent their first
    // documents and the ones it parked stopped, and two of the longer pauses between a chain's documents have passed
    // (the others' documents held back while the new ones got their first turn come then), at most a window; so that
    // a step of a fast visit costs little more than its measured window. Too short, or too few documents yet for a
    // rate: a measured window goes on (up to its stretch).
    if (!this.search.measuring) {
      const settling = this.fresh.size > 0 || this.parking() > 0 || ms < 2 * this.typicalGapMs();
      if (ms < this.windowMs && settling) return;
    } else if (ms < (this.search.isGrowing ? this.windowMs * growthWindowShare : this.windowMs)) return;
    if (this.search.measuring && ms < this.windowMs * maxWindowStretch) {
      if (ms < Math.max(this.firstDeliveryMs, 2 * this.typicalGapMs())) return;
      if (documents - this.window.documents < this.windowDocuments) return;
    }
    const sample = {
      documentsPerSecond: ms > 0 ? ((documents - this.window.documents) * 1000) / ms : 0,
      held: this.window.heldMs >= 0.9 * ms && !this.window.sawFresh,
    };
    this.window = { at: now, documents, heldMs: 0, sawFresh: this.fresh.size > 0 };
    const change = this.search.observe(sample);
    if (change !== undefined) this.apply(change, now);
  }

  /** A change of the limit: recorded, and the chains parked or started to meet it. */
  private apply(change: LimitChange, now: number): void {
    this.changes.push({ ...change, seconds: Math.round((now - this.startedAt) / 10) / 100 });
    if (this.changes.length > keptChanges) this.changes.shift();
    this.current = change.limit;
    this.maxLimit = Math.max(this.maxLimit, this.current);
    this.fresh.clear();
    this.changedAt = now;
    this.firstDeliveryMs = 0;
    this.rebalance();
    this.fill(true);
    if (this.fresh.size > 0) this.window.sawFresh = true;
  }
}
