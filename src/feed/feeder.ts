import { existsSync } from 'node:fs';
import type { VespaBulkError } from '../core/errors.js';
import { defaultCheckpointIntervalMs } from '../fs/checkpoint-file.js';
import {
  FeedCheckpointStore,
  buildFeedCheckpoint,
  checkpointToResume,
  feedPosition,
  readFeedCheckpointSync,
  type FeedCheckpoint,
  type SaveState,
} from './feed-checkpoint.js';
import { FailureWriter } from './failures.js';
import { recordFeed, resumedOptions } from './recorded-options.js';
import { FeedEngine } from './engine.js';
import { checkFeedOptions, type FeedOptions } from './options.js';
import type { DriverEnd, FeedDriver, StopReason } from './driver.js';
import { ReadProgress, describeInputs, type FeedSource, type InputInfo } from './source.js';
import type { FeedCounters, FeedSummary } from './stats.js';
import type { SameFailureVerdict } from './same-failure.js';
import type { QueueReading } from './throttle.js';
import { WorkerCoordinator } from './workers/coordinator.js';
import { countsNow, wholeFeedSummary } from './whole-feed.js';

export type { StopReason } from './driver.js';

/** What the feed ended with, beyond the summary counters. */
export interface FeedOutcome {
  summary: FeedSummary;
  /** Failure output, when something failed. */
  failuresFile?: string;
  /** Checkpoint, when the feed was stopped before the end. */
  checkpointFile?: string;
  /** Why the feed stopped early. */
  stopped?: StopReason;
  /** With `stopped: 'unauthorized'`: the status that refused the credentials (401 or 403). */
  authStatus?: number;
  /**
   * With `stopped: 'unreachable'`: the error naming the endpoint and the cause: VB_UNREACHABLE, or VB_PROTOCOL
   * when HTTP/2 was asked for (`protocol: 'h2'`) and the server does not speak it.
   */
  unreachable?: VespaBulkError;
  /** With `stopped: 'same-failure'`: the failure every operation ended in, and a hint. */
  sameFailure?: SameFailureVerdict;
}

/** A snapshot for the progress line. */
export interface FeedProgress {
  seconds: number;
  ok: number;
  failed: number;
  retries: number;
  inflight: number;
  limit: number;
  p50Ms: number;
  p99Ms: number;
  /** Operations read so far (including those left to other shards or before a resume point). */
  read: number;
  /** Operations done with: succeeded, finally failed or skipped. */
  finished: number;
  /**
   * A resumed feed's: the operations the runs before it finished (succeeded or failed; and with the counts of a
   * checkpoint that has them, left to other shards or dropped), as its checkpoint counts them.
   */
  finishedBefore?: number;
  /**
   * A resumed feed's, from a checkpoint that carries them: what the runs before it finished. Absent with
   * `earlierCounts: 'unknown'` (a checkpoint of an earlier vespa-bulk).
   */
  before?: { ok: number; failed: number; skipped: number; dropped: number; seconds: number };
  earlierCounts?: 'unknown';
  /** Of `finished`: items this run passed over as finished by the checkpoint it resumed (re-read, not sent). */
  passedOver?: number;
  /** Of `finished`: input operations the transform dropped. */
  dropped?: number;
  /**
   * The cluster answered 507 (feed block: a content node at its disk or memory limit) since the progress before:
   * puts and updates wait, retried slowly, until it lifts; removes go on.
   */
  feedBlocked?: boolean;
  /** Request body bytes sent so far, retries included (always given by a Feeder). */
  requestBytes?: number;
  /** Share of the input read (0..1), when its size is known. */
  readShare?: number;
  /** Input bytes read so far. */
  readBytes?: number;
  /** Input bytes in all, when known (files, not stdin). */
  totalBytes?: number;
  /** A resumed feed's, of `readBytes`: the inputs before the one its checkpoint stands in, not read again (finished). */
  bytesBefore?: number;
}

/**
 * How many threads feed: `options.workers`, or its default, 1. Measured against the container's Jetty on 2 cores
 * (`npx tsx benchmarks/jetty/run.ts workers`, and the README), a second worker fed no faster and took 1.4x the CPU and twice
 * the memory per document; one thread over HTTP/2 moves ~30,000 operations/s there. A larger default waits for
 * a machine where it measurably gains.
 */
export function resolveWorkers(options: FeedOptions): number {
  return options.workers ?? 1;
}

/**
 * Feeds `source` and resolves with the summary once every operation is finished (or the feed was stopped).
 * Operations that finally failed are in the failure output; see FeedOptions. Rejects with `VB_UNREACHABLE`
 * when nothing answered at the endpoint from the start (the checkpoint, when enabled, is written first).
 * @example
 * ```ts
 * import { feed } from 'vespa-bulk';
 *
 * const summary = await feed(['corpus.jsonl.gz'], {
 *   endpoint: 'http://127.0.0.1:8080',
 *   failures: 'failed.jsonl',
 *   onResult: (r) => { if (!r.ok) console.error(r.id, r.status, r.message); },
 * });
 * console.log(summary.ok, summary.errors, summary.okRate);
 * ```
 */
export async function feed(source: FeedSource, options: FeedOptions = {}): Promise<FeedSummary> {
  const outcome = await new Feeder(options).run(source);
  if (outcome.unreachable !== undefined) throw outcome.unreachable;
  return outcome.summary;
}

/**
 * `options` with what the checkpoint they continue recorded (`resumedOptions`): `resume`, or the `checkpoint` file
 * when it exists. Read here, synchronously, because the endpoint it may give is needed before the feed is made.
 * `resume` stays as given, so the run names the file when it checks the inputs.
 */
function optionsToResume(options: FeedOptions): FeedOptions {
  checkFeedOptions(options);
  const path = typeof options.checkpoint === 'string' ? options.checkpoint : undefined;
  const from = options.resume ?? (path !== undefined && existsSync(path) ? path : undefined);
  if (from === undefined) return options;
  const checkpoint = typeof from === 'string' ? readFeedCheckpointSync(from) : from;
  return resumedOptions(options, checkpoint, typeof from === 'string' ? `checkpoint '${from}'` : undefined);
}

/**
 * One feed, on this thread (a `FeedEngine`) or over `FeedOptions.workers` threads (more than 1: a
 * `WorkerCoordinator` reads and cuts the input here and routes each operation by its id to a worker thread). The
 * Feeder owns the run around either: the failure output, the checkpoint (periodic saves and the final one), the
 * caller's signal, the progress figures and the outcome; the driver owns the operations, its counters and its stop.
 * Beside `feed()`, for a caller that wants to watch (`progress()`, `snapshot()`, `checkpoint()`) or stop it.
 * @example
 * ```ts
 * import { Feeder } from 'vespa-bulk';
 *
 * const feeder = new Feeder({ endpoint: 'http://127.0.0.1:8080', checkpoint: 'feed.checkpoint.json' });
 * const watch = setInterval(() => {
 *   const p = feeder.progress();
 *   console.error(`${p.ok} ok, ${p.failed} failed, ${p.inflight} in flight`);
 * }, 1000);
 * process.once('SIGINT', () => feeder.stop());
 * const outcome = await feeder.run(['corpus.jsonl']);
 * clearInterval(watch);
 * if (outcome.stopped) console.error(`stopped (${outcome.stopped}); rerun to go on from ${outcome.checkpointFile}`);
 * ```
 */
export class Feeder {
  private readonly options: FeedOptions;
  private readonly driver: FeedDriver;
  private readonly readProgress = new ReadProgress();
  private inputs: InputInfo[] = [];
  /** The checkpoint this run continues. */
  private resumed: FeedCheckpoint | undefined;
  private failures: FailureWriter | undefined;
  private store: FeedCheckpointStore | undefined;
  /** A periodic save under way: the next tick waits for it, and the run's end too. */
  private saving: Promise<void> | undefined;
  private readonly onAbort = () => this.stop('interrupted');

  constructor(options: FeedOptions = {}) {
    this.options = optionsToResume(options);
    this.driver = resolveWorkers(this.options) > 1 ? new WorkerCoordinator(this.options) : new FeedEngine(this.options);
  }

  /** How many threads feed: 1, or `FeedOptions.workers`. */
  get workers(): number {
    return this.driver.workers;
  }

  /** Stops the feed as Ctrl-C does: nothing more is sent, the checkpoint covers what is unfinished. */
  stop(reason: StopReason = 'interrupted'): void {
    this.driver.stop(reason);
  }

  /** Why the feed is stopping, once it is. */
  get stopReason(): StopReason | undefined {
    return this.driver.stopReason;
  }

  /** How often the checkpoint is saved while the feed runs; 0: only at the end. */
  private get checkpointIntervalMs(): number {
    return this.options.checkpointIntervalMs ?? defaultCheckpointIntervalMs;
  }

  /** Feeds `source` (see `feed()`) and resolves with the outcome once every operation is finished or the feed stopped. Call once. */
  async run(source: FeedSource): Promise<FeedOutcome> {
    const options = this.options;
    const inputs = (this.inputs = describeInputs(source));
    const resume = (this.resumed = await checkpointToResume(options, inputs));
    // Before anything is opened: a transform module that cannot be loaded is a usage error, nothing fed.
    await this.driver.prepare();
    this.openOutputs();
    const saves = this.saveEvery();
    if (options.signal?.aborted) this.onAbort();
    options.signal?.addEventListener('abort', this.onAbort);
    let end: DriverEnd;
    try {
      end = await this.driver.feed(source, {
        inputs,
        resume,
        failures: this.failures,
        readProgress: this.readProgress,
        keepsCheckpoint: this.store !== undefined,
      });
    } finally {
      clearInterval(saves);
      options.signal?.removeEventListener('abort', this.onAbort);
      await this.saving;
      await this.store?.stop();
      await this.failures?.close();
    }
    return this.outcome(end);
  }

  /** The failure output (continuing the resumed checkpoint's, when it names the same file), and the checkpoint file. */
  private openOutputs(): void {
    const { failures, checkpoint, shard } = this.options;
    const resume = this.resumed;
    if (typeof failures === 'string')
      this.failures = new FailureWriter(failures, resume?.failures === failures ? resume.failureMark : undefined);
    if (typeof checkpoint === 'string') {
      const writer = this.failures;
      this.store = new FeedCheckpointStore({
        path: checkpoint,
        inputs: this.inputs.map((i) => i.name),
        shard,
        sends: () => this.sends(),
        ...(writer !== undefined && { failures: writer }),
      });
    }
  }

  /** Saves the checkpoint every `checkpointIntervalMs`, each at a cut the driver makes consistent; none while one is under way. */
  private saveEvery(): NodeJS.Timeout | undefined {
    const store = this.store;
    const intervalMs = this.checkpointIntervalMs;
    if (store === undefined || intervalMs <= 0) return undefined;
    const timer = setInterval(() => {
      if (this.saving !== undefined) return;
      // A failed save (a full disk) leaves the previous file.
      this.saving = this.driver
        .atConsistentCut(() => store.save(this.saveState()))
        .catch(() => undefined)
        .finally(() => (this.saving = undefined));
    }, intervalMs);
    timer.unref();
    return timer;
  }

  /**
   * What a checkpoint records of where the feed sends and what it sends. A feed stopped because nothing answered at
   * its endpoint sent nothing there: its checkpoint keeps the endpoint of the one it continued, or none, so that
   * the same command with the target put right goes on.
   */
  private sends(): ReturnType<typeof recordFeed> {
    const sends = recordFeed(this.options);
    if (this.driver.stopReason !== 'unreachable') return sends;
    const { endpoint: _unanswered, ...rest } = sends;
    return { ...rest, ...(this.resumed?.endpoint !== undefined && { endpoint: this.resumed.endpoint }) };
  }

  /** What a checkpoint saved now holds: the driver's cut (unfinished operations, read position), the counts. */
  private saveState(): SaveState {
    const { open, read } = this.driver.cut();
    const { stats } = this.driver.figures();
    // Counted over all runs: a resumed feed's checkpoint adds this run's to those it continued.
    const resumed = this.resumed;
    const counts = countsNow(resumed, stats, (performance.now() - stats.startedAt) / 1000);
    return {
      ...feedPosition(open, read, resumed),
      reason: this.driver.stopReason ?? 'running',
      ok: (resumed?.ok ?? 0) + stats.ok,
      errors: (resumed?.errors ?? 0) + stats.errors,
      ...(counts !== undefined && { counts }),
    };
  }

  /** The checkpoint now (as a stop would save it, without the failure output's mark). */
  checkpoint(): FeedCheckpoint {
    return buildFeedCheckpoint(
      { inputs: this.inputs.map((i) => i.name), shard: this.options.shard, sends: () => this.sends() },
      this.saveState(),
    );
  }

  /** The running totals with a copy of the latency histogram, and the in-flight count and limit now. */
  snapshot(): FeedCounters & { inflight: number; limit: number; queue?: QueueReading | undefined } {
    const { stats, inflight, limit, queue } = this.driver.figures();
    return { ...stats.snapshot(), inflight, limit, queue };
  }

  /** Current figures for a progress line. */
  progress(): FeedProgress {
    const { stats, inflight, limit, read } = this.driver.figures();
    const resumed = this.resumed;
    const counts = resumed?.counts;
    return {
      seconds: (performance.now() - stats.startedAt) / 1000,
      ok: stats.ok,
      failed: stats.errors,
      retries: stats.retries,
      inflight,
      limit,
      p50Ms: stats.percentileMs(50),
      p99Ms: stats.percentileMs(99),
      read,
      finished: stats.ok + stats.errors + stats.skipped + stats.dropped,
      ...(resumed !== undefined &&
        counts === undefined && { finishedBefore: resumed.ok + resumed.errors, earlierCounts: 'unknown' as const }),
      ...(counts !== undefined && {
        finishedBefore: counts.ok + counts.errors + counts.skipped + counts.dropped,
        before: {
          ok: counts.ok,
          failed: counts.errors,
          skipped: counts.skipped,
          dropped: counts.dropped,
          seconds: counts.seconds,
        },
      }),
      ...(resumed !== undefined && { passedOver: stats.resumeSkipped }),
      dropped: stats.dropped,
      ...(this.blocked(stats.answersWith(507), stats.ok) && { feedBlocked: true }),
      requestBytes: stats.requestBytes,
      ...this.readShare(),
    };
  }

  /** The 507s counted at the last progress that saw more, and the operations ok then. */
  private feedBlocks = { count: 0, okThen: 0 };

  /**
   * Whether the cluster is feed-blocked as far as the answers tell: 507s came, and nothing succeeded since (the
   * backoff of a block is seconds long, so "507s in the last interval" would come and go on the line).
   */
  private blocked(count: number, ok: number): boolean {
    if (count > this.feedBlocks.count) this.feedBlocks = { count, okThen: ok };
    return count > 0 && ok === this.feedBlocks.okThen;
  }

  /**
   * The input read, and its share: a resumed feed opens no input before the one its checkpoint stands in (nor any,
   * finished), so their bytes count as read; the input it stands in is read from its start.
   */
  private readShare(): ReturnType<ReadProgress['of']> & { bytesBefore?: number } {
    const read = this.readProgress.of(this.inputs);
    const resumed = this.resumed;
    if (resumed === undefined || read.totalBytes === undefined) return read;
    const from = resumed.position === null ? this.inputs.length : resumed.position.input;
    const passed = this.inputs.slice(0, from).reduce((n, i) => n + (i.size ?? 0), 0);
    const readBytes = Math.min(read.totalBytes, read.readBytes + passed);
    return { readBytes, readShare: readBytes / read.totalBytes, totalBytes: read.totalBytes, bytesBefore: passed };
  }

  /**
   * The outcome, once the outputs are closed: the summary, the failure output, and the final checkpoint: marked
   * finished (so running it once more feeds nothing twice) when the feed ended, the cut when it stopped.
   */
  private async outcome(end: DriverEnd): Promise<FeedOutcome> {
    const outcome: FeedOutcome = {
      summary: wholeFeedSummary(end.summary, this.resumed, this.driver.figures().stats.resumeSkipped),
    };
    const failures = this.failures;
    if (failures !== undefined && failures.count > 0) outcome.failuresFile = failures.path;
    const store = this.store;
    const stopped = this.driver.stopReason;
    if (stopped === undefined) {
      if (store !== undefined && (this.resumed !== undefined || this.checkpointIntervalMs > 0)) {
        await store.save({ ...this.saveState(), position: null, reason: 'finished' });
        outcome.checkpointFile = store.path;
      }
      return outcome;
    }
    outcome.stopped = stopped;
    if (end.authStatus !== undefined) outcome.authStatus = end.authStatus;
    if (end.unreachable !== undefined) outcome.unreachable = end.unreachable;
    if (end.sameFailure !== undefined) outcome.sameFailure = end.sameFailure;
    const state = this.saveState();
    // Saved only at a stop (no periodic saves), not resumed, and nothing finished: it would say "from the start",
    // which the same feed run again does; no file is left for nothing.
    const empty = this.checkpointIntervalMs === 0 && this.resumed === undefined && state.ok + state.errors === 0;
    if (store !== undefined && !empty) {
      await store.save(state);
      outcome.checkpointFile = store.path;
    }
    return outcome;
  }
}
