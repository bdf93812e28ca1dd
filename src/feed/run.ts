import { VespaBulkError } from '../core/errors.js';
import { defaultCheckpointIntervalMs } from '../fs/checkpoint-file.js';
import { FeedCheckpointStore, buildFeedCheckpoint, feedPosition, type FeedCheckpoint, type SaveState } from './feed-checkpoint.js';
import { FailureWriter } from './failures.js';
import { recordFeed } from './recorded-options.js';
import type { FeedOperation } from '../document/operation.js';
import type { FeedOptions } from './options.js';
import { ReadProgress, type InputInfo, type InputPosition, type OpenPosition } from './source.js';
import type { RawItem } from '../core/operation-splitter.js';
import type { FeedStats, FeedSummary } from './stats.js';

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
}

/**
 * interrupted: Ctrl-C or the caller's signal; breaker: nothing but failures for too long; unauthorized: the
 * service refused the credentials (401/403), which no retry and no later operation can change; unreachable:
 * nothing answered at the endpoint from the start (refused, unknown host, TLS handshake failed), where
 * retrying for the breaker's minute only delays the message.
 */
export type StopReason = 'interrupted' | 'breaker' | 'unauthorized' | 'unreachable';

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
  /** A resumed feed's: the operations the runs before it finished (succeeded or failed), as its checkpoint counts them. */
  finishedBefore?: number;
  /** Request body bytes sent so far, retries included (always given by a Feeder). */
  requestBytes?: number;
  /** Share of the input read (0..1), when its size is known. */
  readShare?: number;
  /** Input bytes read so far. */
  readBytes?: number;
  /** Input bytes in all, when known (files, not stdin). */
  totalBytes?: number;
}

/** Where failed operations go: a FailureWriter, or (in a worker thread) a relay to the thread that writes. */
export type FailureOutput = Pick<FailureWriter, 'write' | 'drained' | 'close' | 'count' | 'path'>;

/** How a run's engine ended, for the outcome: what only the engine can know. */
export interface EngineEnd {
  authStatus?: number;
  unreachable?: VespaBulkError;
}

/**
 * One feed run, whatever feeds it (one thread's engine, or a coordinator of worker threads): the failure output,
 * the checkpoint (one interval default, the final save), the caller's signal and the stop, failures found
 * before any request, the progress figures and the outcome. Its engine keeps the operations; the run asks it
 * only for figures and unfinished positions.
 */
export class FeedRun {
  readonly readProgress = new ReadProgress();
  private inputList: InputInfo[] = [];
  private failureOutput: FailureOutput | undefined;
  private saver: FeedCheckpointStore | undefined;
  private resumed: FeedCheckpoint | undefined;
  /** Position after the last item read, for a checkpoint when nothing is unfinished. */
  private readPosition: InputPosition | undefined;
  private stopping: StopReason | undefined;
  private readonly onAbort = () => this.stop('interrupted');

  /** `onStop` is the engine's part of a stop; it runs once, at the first. */
  constructor(
    readonly options: FeedOptions,
    private readonly onStop: (reason: StopReason) => void,
  ) {}

  get inputs(): InputInfo[] {
    return this.inputList;
  }

  get failures(): FailureOutput | undefined {
    return this.failureOutput;
  }

  /** Whether a checkpoint file is kept. */
  get keepsCheckpoint(): boolean {
    return this.saver !== undefined;
  }

  /** How often the checkpoint is saved while the feed runs; 0: only at the end. */
  get checkpointIntervalMs(): number {
    return this.options.checkpointIntervalMs ?? defaultCheckpointIntervalMs;
  }

  /** Why the feed is stopping, once it is. */
  get stopReason(): StopReason | undefined {
    return this.stopping;
  }

  /** Stops the feed (the first reason given stands). */
  stop(reason: StopReason): void {
    if (this.stopping !== undefined) return;
    this.stopping = reason;
    this.onStop(reason);
  }

  /**
   * Opens the outputs for `inputs`, continuing `resume`: the failure output (`failures`, given by a worker
   * thread, or the options' file), and with `checkpointPath` the checkpoint.
   */
  open(inputs: InputInfo[], resume: FeedCheckpoint | undefined, checkpointPath: string | undefined, failures?: FailureOutput): void {
    const options = this.options;
    this.inputList = inputs;
    this.resumed = resume;
    this.failureOutput =
      failures ?? (typeof options.failures === 'string' ? new FailureWriter(options.failures, resume?.failures === options.failures ? resume.failureMark : undefined) : undefined);
    const writer = this.failureOutput instanceof FailureWriter ? this.failureOutput : undefined;
    if (checkpointPath !== undefined) {
      this.saver = new FeedCheckpointStore({ path: checkpointPath, inputs: inputs.map((i) => i.name), shard: options.shard, sends: () => this.sends(), ...(writer !== undefined && { failures: writer }) });
    }
  }

  /** Stops the feed when the caller's signal aborts (at once when it has). */
  watchSignal(): void {
    if (this.options.signal?.aborted) this.onAbort();
    this.options.signal?.addEventListener('abort', this.onAbort);
  }

  /**
   * What a checkpoint records of where the feed sends and what it sends. A feed stopped because nothing answered at
   * its endpoint sent nothing there: its checkpoint keeps the endpoint of the one it continued, or none, so that
   * the same command with the target put right goes on.
   */
  private sends(): ReturnType<typeof recordFeed> {
    const sends = recordFeed(this.options);
    if (this.stopping !== 'unreachable') return sends;
    const { endpoint: _unanswered, ...rest } = sends;
    return { ...rest, ...(this.resumed?.endpoint !== undefined && { endpoint: this.resumed.endpoint }) };
  }

  /** Saves `state()` every `checkpointIntervalMs` on a timer of the checkpoint's own, until `close()`. */
  saveEvery(state: () => SaveState): void {
    const intervalMs = this.checkpointIntervalMs;
    if (this.saver !== undefined && intervalMs > 0) this.saver.start(intervalMs, state);
  }

  /** Saves `state` now (a coordinator's gathered state); a failed save (a full disk) leaves the previous file. */
  async save(state: SaveState): Promise<void> {
    await this.saver?.save(state).catch(() => undefined);
  }

  /** The item `item` of input `input` has been read: the checkpoint's read position passes it. */
  private passed(input: number, item: RawItem): void {
    // A transform's output ends where its input operation does.
    this.readPosition = { input, offset: item.offset + (item.span ?? (item.source ?? item.bytes).length), line: item.line };
  }

  /**
   * `item` of input `input` has been read; settles it here when it needs no request: skipped (before the resume
   * point), or not cut into an operation (a failure at its line). Returns whether it was settled.
   */
  settleRead(stats: FeedStats, input: number, item: RawItem, name: string): boolean {
    this.passed(input, item);
    if (item.skip) {
      stats.skipped++;
      return true;
    }
    if (item.dropped === true) {
      stats.dropped++;
      return true;
    }
    if (item.error === undefined) return false;
    stats.operations++;
    this.localFailure(stats, item, name, item.error, item.error.code !== 'VB_TRANSFORM');
    return true;
  }

  /** What a checkpoint saved now holds: `open` (the operations read and not finished, in input order), the read position, the counts. */
  saveState(open: Iterable<OpenPosition>, stats: Pick<FeedStats, 'ok' | 'errors'>): SaveState {
    // Counted over all runs: a resumed feed's checkpoint adds this run's to those it continued.
    return { ...feedPosition(open, this.readPosition, this.resumed), reason: this.stopping ?? 'running', ok: (this.resumed?.ok ?? 0) + stats.ok, errors: (this.resumed?.errors ?? 0) + stats.errors };
  }

  /** The checkpoint for `state` (as a stop would save it, without the failure output's mark). */
  checkpoint(state: SaveState): FeedCheckpoint {
    return buildFeedCheckpoint({ inputs: this.inputList.map((i) => i.name), shard: this.options.shard, sends: () => this.sends() }, state);
  }

  /**
   * An operation that fails without a request: unreadable (`parse`), or refused before sending (`op` read). Counted
   * in `stats`. The failure output gets the input operation (a transform's input, not its output), so feeding it
   * again with the same transform retries it.
   */
  localFailure(stats: FeedStats, item: RawItem, name: string, err: unknown, parse: boolean, op?: FeedOperation): void {
    const e = err instanceof VespaBulkError ? err : new VespaBulkError('VB_BAD_OPERATION', String((err as Error)?.message ?? err));
    stats.errors++;
    if (parse) stats.parseErrors++;
    const message = e.message;
    const about = op === undefined ? {} : { id: op.id, operation: op.kind };
    this.failureOutput?.write(item.source ?? item.bytes, { input: name, inputLine: item.line, ...about, message, attempts: 0, code: e.code }, op === undefined);
    this.options.onResult?.({ ok: false, message, attempts: 0, input: name, line: item.line, ...(op !== undefined && { id: op.id, kind: op.kind }) });
  }

  /** The progress figures from the engine's counters, in-flight count and limit, and operations read. */
  progress(stats: FeedStats, inflight: number, limit: number, read: number): FeedProgress {
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
      ...(this.resumed !== undefined && { finishedBefore: this.resumed.ok + this.resumed.errors }),
      requestBytes: stats.requestBytes,
      ...this.readProgress.of(this.inputList),
    };
  }

  /** Ends the signal watch and the periodic saves (waiting for one under way), and closes the failure output. */
  async close(): Promise<void> {
    this.options.signal?.removeEventListener('abort', this.onAbort);
    await this.saver?.stop();
    await this.failureOutput?.close();
  }

  /**
   * The outcome, after `close()`: `summary`, the failure output, and the final checkpoint: marked finished
   * (so running it once more feeds nothing twice) when the feed ended, `state()` when it stopped.
   */
  async outcome(summary: FeedSummary, state: () => SaveState, end: EngineEnd): Promise<FeedOutcome> {
    const outcome: FeedOutcome = { summary };
    if (this.failureOutput !== undefined && this.failureOutput.count > 0) outcome.failuresFile = this.failureOutput.path;
    const saver = this.saver;
    if (this.stopping === undefined && saver !== undefined && (this.resumed !== undefined || this.checkpointIntervalMs > 0)) {
      await saver.save({ ...state(), position: null, reason: 'finished' });
      outcome.checkpointFile = saver.path;
    }
    if (this.stopping !== undefined) {
      outcome.stopped = this.stopping;
      if (end.authStatus !== undefined) outcome.authStatus = end.authStatus;
      if (end.unreachable !== undefined) outcome.unreachable = end.unreachable;
      const stopped = state();
      // Saved only at a stop (no periodic saves), not resumed, and nothing finished: it would say "from the start",
      // which the same feed run again does; no file is left for nothing.
      const empty = this.checkpointIntervalMs === 0 && this.resumed === undefined && stopped.ok + stopped.errors === 0;
      if (saver !== undefined && !empty) {
        await saver.save(stopped);
        outcome.checkpointFile = saver.path;
      }
    }
    return outcome;
  }
}
