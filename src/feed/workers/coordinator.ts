import { Worker } from 'node:worker_threads';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { VespaBulkError, type ErrorCode } from '../../errors.js';
import { checkFeedOptions } from '../check-options.js';
import { CheckpointSaver, checkpointToResume, feedPosition, resumeSkip, type Checkpoint, type SaveState } from '../checkpoint.js';
import { FailureWriter } from '../failures.js';
import type { FeedOutcome, FeedProgress, StopReason } from '../feeder.js';
import type { FeedOptions } from '../options.js';
import { createPool, splitEndpoint, type WireProtocol } from '../../http/transport.js';
import type { FeedCounters } from '../stats.js';
import { FeedStats } from '../stats.js';
import { defaultMaxInflight } from '../throttle.js';
import { ReadProgress, describeInputs, readSources, type FeedSource, type InputInfo, type InputPosition } from '../source.js';
import type { RawItem } from '../splitter.js';
import { packBatch } from './batch.js';
import type { FromWorker, RelayedFailure, ToWorker, WorkerSnapshot, WorkerStart, WorkerState } from './messages.js';
import { routeId, workerOf } from './route.js';

/** Batches a worker may have been sent and not yet pulled: enough to keep it busy, few enough to bound memory. */
const maxAhead = 4;

/** One worker thread and what the coordinator knows of it. */
interface Lane {
  worker: Worker;
  /** Last batch number sent, and the last the worker's Feeder pulled. */
  sent: number;
  taken: number;
  /**
   * Batches sent and not yet in the worker's latest state (`accepted`): its input, how many operations,
   * and (when a checkpoint is kept) each item's line and offset, as in the batch's `meta`.
   */
  pending: { n: number; input: number; count: number; meta?: Float64Array }[];
  state: WorkerState | undefined;
  /** The lane's unfinished operations at its last snapshot (or its end), pending batches included, in input order. */
  open: Array<[number, number, number]>;
  done: Extract<FromWorker, { type: 'done' }> | undefined;
  exited: boolean;
}

/** A checkpoint being gathered: the lanes not yet answered, and failures of lanes that did, held back until the save is built. */
interface Gathering {
  waiting: Set<Lane>;
  held: RelayedFailure[][];
}

/**
 * `feed --workers N`: reads and cuts the input on this thread, routes each operation's raw bytes by a hash of
 * its id to one of N worker threads (each a Feeder with its share of the connections and the in-flight
 * limit), and makes one feed of them: one summary (counters added, histograms merged), one failure output
 * (written here), one checkpoint, one progress. The same surface as Feeder for the CLI: `run`, `stop`,
 * `progress`, `snapshot`, `checkpoint`.
 *
 * The checkpoint, every `checkpointIntervalMs` and at the end: reading pauses, every worker is asked for its
 * unfinished operations; failures a worker sends after its answer are held back until the save is built, so
 * the failure output's mark counts exactly the failures of the operations the answers count as finished.
 * Together with the batches not yet taken by a worker, that is the single-thread feeder's checkpoint, in the
 * same format: either path resumes the other's.
 */
export class WorkerFeeder {
  private options: FeedOptions;
  /** The protocol every worker speaks, once settled. */
  private protocol: WireProtocol | undefined;
  private readonly count: number;
  private readonly lanes: Lane[] = [];
  private readonly readProgress = new ReadProgress();
  /** What this thread counts itself: operations it could not cut (framing errors), items skipped by a resume. */
  private readonly own = new FeedStats();
  private readonly startedAt = performance.now();
  private inputs: InputInfo[] = [];
  private failures: FailureWriter | undefined;
  private stopping: StopReason | undefined;
  private read = 0;
  private readPosition: InputPosition | undefined;
  private wake: (() => void) | undefined;
  private merged: FeedStats | undefined;
  private workerError: Error | undefined;
  private saver: CheckpointSaver | undefined;
  private resumed: Checkpoint | undefined;
  private gathering: Gathering | undefined;
  /** A periodic save is being written: the next waits for it. */
  private saving = false;

  constructor(options: FeedOptions = {}) {
    checkFeedOptions(options);
    this.options = options;
    this.count = options.workers ?? 2;
  }

  /** @internal The merged counters (for the progress line's bytes sent). */
  get stats(): FeedStats {
    if (this.merged === undefined) {
      const m = new FeedStats(this.startedAt);
      m.merge(this.own.state());
      for (const lane of this.lanes) if (lane.state !== undefined) m.merge(lane.state.stats);
      this.merged = m;
    }
    return this.merged;
  }

  /** Why the feed is stopping, once it is. */
  get stopReason(): StopReason | undefined {
    return this.stopping;
  }

  /** The workers' running totals added up, with their latency histograms merged, as `Feeder.snapshot()`. */
  snapshot(): FeedCounters & { inflight: number; limit: number } {
    const s = this.stats;
    return { ...s.snapshot(), inflight: this.sum((st) => st.inflight), limit: this.sum((st) => st.limit) };
  }

  /** The workers' progress added up, as `Feeder.progress()`. */
  progress(): FeedProgress {
    const s = this.stats;
    return {
      seconds: (performance.now() - this.startedAt) / 1000,
      ok: s.ok,
      failed: s.errors,
      retries: s.retries,
      inflight: this.sum((st) => st.inflight),
      limit: this.sum((st) => st.limit),
      p50Ms: s.percentileMs(50),
      p99Ms: s.percentileMs(99),
      read: this.read,
      finished: s.ok + s.errors + s.skipped,
      ...this.readProgress.of(this.inputs),
    };
  }

  /** Stops the feed as Ctrl-C does: stop reading, every worker stops, the checkpoint covers what is unfinished. */
  stop(reason: StopReason = 'interrupted'): void {
    if (this.stopping !== undefined) return;
    this.stopping = reason;
    for (const lane of this.lanes) this.send(lane, { type: 'stop', reason });
    this.wakeUp();
  }

  /**
   * With `protocol: 'auto'`, asks the server once, here, so the workers do not each ask it (and tell it once).
   * When nothing answers, the workers find that out themselves, as a feed on one thread does.
   */
  private async settleProtocol(): Promise<void> {
    const o = this.options;
    const asked = o.http2 === true ? 'h2' : (o.protocol ?? 'auto');
    if (asked !== 'auto') {
      this.protocol = asked;
      o.onProtocol?.(asked);
      return;
    }
    const pool = createPool({ origin: splitEndpoint(o.endpoint ?? 'http://127.0.0.1:8080').origin, protocol: 'auto', tls: o.tls, connections: 1 });
    try {
      this.protocol = await pool.detect!();
      this.options = { ...o, protocol: this.protocol };
      o.onProtocol?.(this.protocol);
    } catch {
      // Unreachable: left to the workers.
    } finally {
      await pool.destroy().catch(() => undefined);
    }
  }

  /** Feeds `source` over the workers; resolves as `Feeder.run()` does. Call once. */
  async run(source: FeedSource): Promise<FeedOutcome> {
    const options = this.options;
    this.inputs = describeInputs(source);
    const resume = checkpointToResume(options, this.inputs);
    this.resumed = resume;
    if (typeof options.failures === 'string') this.failures = new FailureWriter(options.failures, resume?.failures === options.failures ? resume.failureMark : undefined);
    const intervalMs = options.checkpointIntervalMs ?? 2000;
    if (typeof options.checkpoint === 'string') {
      this.saver = new CheckpointSaver({ path: options.checkpoint, inputs: this.inputs.map((i) => i.name), shard: options.shard, ...(this.failures !== undefined && { failures: this.failures }) });
    }
    await this.settleProtocol();
    for (let i = 0; i < this.count; i++) this.lanes.push(this.startLane(i));
    const timer = this.saver !== undefined && intervalMs > 0 ? setInterval(() => this.gather(), intervalMs) : undefined;
    timer?.unref();
    const onAbort = () => this.stop('interrupted');
    if (options.signal?.aborted) onAbort();
    options.signal?.addEventListener('abort', onAbort);
    let readError: { error: unknown } | undefined;
    try {
      if (resume?.position !== null && this.stopping === undefined) {
        const from = resume?.position ?? undefined;
        const skip = resume !== undefined ? resumeSkip(resume) : undefined;
        for await (const batch of readSources(source, { stdin: options.stdin, tls: options.tls, urlRetries: options.maxRetries, from, skip }, this.readProgress)) {
          // Nothing is routed while a checkpoint is gathered: its read position must be the one the answers cover.
          while (this.gathering !== undefined) await this.sleep();
          this.route(batch.items, batch.input, batch.name);
          while (this.stopping === undefined && this.lanes.some((l) => l.sent - l.taken >= maxAhead && !l.exited)) await this.sleep();
          if (this.failures !== undefined) await this.failures.drained();
          if (this.stopping !== undefined) break;
        }
      }
    } catch (err) {
      readError = { error: err };
      this.stop('interrupted');
    }
    for (const lane of this.lanes) this.send(lane, { type: 'end' });
    while (this.lanes.some((l) => !l.exited)) await this.sleep();
    clearInterval(timer);
    options.signal?.removeEventListener('abort', onAbort);
    await this.saver?.stop();
    await this.failures?.close();
    if (readError !== undefined) throw readError.error;
    if (this.workerError !== undefined) throw this.workerError;
    return this.outcome(resume, intervalMs);
  }

  /**
   * @internal What a checkpoint saved now holds: the unfinished operations of every lane at its last snapshot (exact
   * once all workers have ended), the read position, the counts.
   */
  saveState(): SaveState {
    const open: Array<[number, number, number]> = [];
    for (const lane of this.lanes) for (const e of lane.open) open.push(e);
    open.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    return { ...feedPosition(open, this.readPosition, this.resumed), reason: this.stopping ?? 'running', ok: this.stats.ok, errors: this.stats.errors };
  }

  /** The checkpoint as the last snapshot of the workers gives it (as a stop would save it, without the failure output's mark). */
  checkpoint(): Checkpoint {
    return new CheckpointSaver({ path: '', inputs: this.inputs.map((i) => i.name), shard: this.options.shard }).build(this.saveState());
  }

  /** Asks every running worker for its unfinished operations; `gathered()` saves once all have answered. */
  private gather(): void {
    if (this.gathering !== undefined || this.saving || this.stopping !== undefined) return;
    const waiting = new Set(this.lanes.filter((l) => l.done === undefined && !l.exited));
    if (waiting.size === 0) return;
    this.gathering = { waiting, held: [] };
    for (const lane of waiting) this.send(lane, { type: 'snapshot' });
  }

  /** `lane` answered (or ended): its unfinished operations are the snapshot's, and those of batches it has not taken. */
  private answered(lane: Lane, snapshot: WorkerSnapshot): void {
    const open = snapshot.unfinished;
    for (const b of lane.pending) {
      if (b.n <= snapshot.accepted || b.meta === undefined) continue;
      for (let k = 0; k < b.count; k++) open.push([b.input, b.meta[3 * k + 2], b.meta[3 * k + 1]]);
    }
    lane.open = open;
    const g = this.gathering;
    if (g === undefined || !g.waiting.delete(lane) || g.waiting.size > 0) return;
    this.gathered(true);
  }

  /** Ends the gathering: saves (when every lane answered), then writes the failures held back meanwhile and lets reading go on. */
  private gathered(save: boolean): void {
    const g = this.gathering;
    if (g === undefined) return;
    if (save && this.saver !== undefined && this.stopping === undefined) {
      // The failure mark is taken here, before the held failures are written.
      this.saving = true;
      this.saver
        .save(this.saveState())
        .catch(() => undefined) // A failed periodic save (a full disk) leaves the previous file; the final save reports its own error.
        .finally(() => (this.saving = false));
    }
    this.gathering = undefined;
    for (const failures of g.held) this.writeFailures(failures);
    this.wakeUp();
  }

  private writeFailures(failures: RelayedFailure[]): void {
    for (const f of failures) this.failures?.write(Buffer.from(f.bytes.buffer, f.bytes.byteOffset, f.bytes.byteLength), f.reason, f.verbatim);
  }

  private async outcome(resume: Checkpoint | undefined, intervalMs: number): Promise<FeedOutcome> {
    this.merged = undefined;
    const stats = this.stats;
    let abandoned = 0;
    let authStatus: number | undefined;
    let unreachable: { message: string; code?: ErrorCode } | undefined;
    for (const lane of this.lanes) {
      abandoned += lane.done?.abandoned ?? 0;
      // Sent and never pulled by the worker's Feeder: unfinished, behind the checkpoint.
      for (const b of lane.pending) if (b.n > (lane.state?.accepted ?? 0)) abandoned += b.count;
      authStatus ??= lane.done?.authStatus;
      unreachable ??= lane.done?.unreachable;
    }
    const inflight = this.sum((st) => st.inflight);
    stats.protocol ??= this.protocol;
    const summary = stats.summary(performance.now(), inflight, this.sum((st) => st.limit));
    summary.abandoned = abandoned;
    const outcome: FeedOutcome = { summary };
    if (this.failures !== undefined && this.failures.count > 0) outcome.failuresFile = this.failures.path;
    const saver = this.saver;
    if (this.stopping === undefined && saver !== undefined && (resume !== undefined || intervalMs > 0)) {
      // A finished feed marks its checkpoint done, so running it once more feeds nothing twice.
      await saver.save({ ...this.saveState(), position: null, reason: 'finished' });
      outcome.checkpointFile = saver.path;
    }
    if (this.stopping !== undefined) {
      outcome.stopped = this.stopping;
      if (authStatus !== undefined) outcome.authStatus = authStatus;
      if (unreachable !== undefined) outcome.unreachable = new VespaBulkError(unreachable.code ?? 'VB_UNREACHABLE', unreachable.message);
      if (saver !== undefined) {
        await saver.save(this.saveState());
        outcome.checkpointFile = saver.path;
      }
    }
    return outcome;
  }

  /** Routes one read batch: items this thread settles itself (skipped, uncut), the rest packed per worker. */
  private route(items: RawItem[], input: number, name: string): void {
    const perWorker: RawItem[][] = this.lanes.map(() => []);
    for (const item of items) {
      this.read++;
      this.readPosition = { input, offset: item.offset + item.bytes.length, line: item.line };
      if (item.skip) {
        this.own.skipped++;
        continue;
      }
      if (item.error !== undefined) {
        this.own.operations++;
        this.own.errors++;
        this.own.parseErrors++;
        const e = item.error;
        this.failures?.write(item.bytes, { input: name, inputLine: item.line, message: e.message, attempts: 0, code: e.code }, true);
        this.options.onResult?.({ ok: false, message: e.message, attempts: 0, input: name, line: item.line });
        continue;
      }
      perWorker[workerOf(routeId(item.bytes), this.count)].push(item);
    }
    this.merged = undefined;
    for (let w = 0; w < this.lanes.length; w++) {
      const share = perWorker[w];
      if (share.length === 0) continue;
      const lane = this.lanes[w];
      const batch = packBatch(++lane.sent, input, name, share);
      lane.pending.push({ n: batch.n, input, count: share.length, ...(this.saver !== undefined && { meta: batch.meta.slice() }) });
      this.send(lane, { type: 'batch', ...batch }, [batch.bytes, batch.meta.buffer as ArrayBuffer]);
    }
  }

  private startLane(index: number): Lane {
    const results = this.options.onResult === undefined ? 'none' : this.options.onResultOnlyFailed === true ? 'failed' : 'all';
    const data: WorkerStart = { options: workerOptions(this.options, this.count, index), inputs: this.inputs, results };
    if (typeof this.options.failures === 'string') data.failuresPath = this.options.failures;
    const lane: Lane = { worker: startWorker(data), sent: 0, taken: 0, pending: [], state: undefined, open: [], done: undefined, exited: false };
    lane.worker.on('message', (m: FromWorker) => this.onMessage(lane, m));
    lane.worker.on('error', (err) => {
      this.workerError ??= err;
      this.stop('interrupted');
    });
    lane.worker.on('exit', () => {
      lane.exited = true;
      // Gone without an answer (a crash): no save this time; the last one stands.
      if (this.gathering?.waiting.has(lane)) this.gathered(false);
      this.wakeUp();
    });
    return lane;
  }

  private onMessage(lane: Lane, m: FromWorker): void {
    switch (m.type) {
      case 'taken':
        lane.taken = m.n;
        this.wakeUp();
        return;
      case 'failures':
        // After its answer, a lane's failures wait: the save being gathered counts their operations unfinished.
        if (this.gathering !== undefined && !this.gathering.waiting.has(lane)) this.gathering.held.push(m.failures);
        else this.writeFailures(m.failures);
        return;
      case 'results':
        for (const r of m.results) this.options.onResult?.(r);
        return;
      case 'stopping':
        this.stop(m.reason);
        return;
      case 'state':
      case 'snapshot':
      case 'done': {
        lane.state = { accepted: m.accepted, stats: m.stats, inflight: m.inflight, limit: m.limit };
        if (m.type !== 'state') this.answered(lane, m);
        while (lane.pending.length > 0 && lane.pending[0].n <= m.accepted) lane.pending.shift();
        this.merged = undefined;
        if (m.type === 'done') {
          lane.done = m;
          if (m.stopped !== undefined) this.stop(m.stopped);
          if (m.error !== undefined) this.workerError ??= new VespaBulkError((m.error.code ?? 'VB_TRANSPORT') as 'VB_TRANSPORT', m.error.message);
        }
        return;
      }
    }
  }

  private send(lane: Lane, m: ToWorker, transfer?: ArrayBuffer[]): void {
    if (!lane.exited) lane.worker.postMessage(m, transfer);
  }

  private sum(of: (s: WorkerState) => number): number {
    let n = 0;
    for (const lane of this.lanes) if (lane.state !== undefined) n += of(lane.state);
    return n;
  }

  private sleep(): Promise<void> {
    return new Promise((resolve) => (this.wake = resolve));
  }

  private wakeUp(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}

/** Worker `index`'s options: what can cross a thread, with its share of connections and in-flight limits. */
function workerOptions(o: FeedOptions, count: number, index: number): FeedOptions {
  const { signal: _s, onResult: _r, onResultOnlyFailed: _f, onProtocol: _p, stdin: _i, dispatcher: _d, failures: _o, checkpoint: _c, resume: _u, workers: _w, ...rest } = o;
  const share = (total: number) => Math.max(1, Math.floor(total / count) + (index < total % count ? 1 : 0));
  const w: FeedOptions = { ...rest, failures: false, checkpoint: false };
  // Without a number given, each worker takes the protocol's default: the in-flight limit, shared, bounds them.
  if (o.connections !== undefined) w.connections = share(o.connections);
  if (o.inflight !== undefined) w.inflight = share(o.inflight);
  else w.maxInflight = share(o.maxInflight ?? defaultMaxInflight);
  if (o.arrivalRate !== undefined) w.arrivalRate = o.arrivalRate / count;
  return w;
}

/**
 * Starts a worker thread on worker.js beside this module (the installed package), or on worker.ts through
 * tsx when this module runs from the TypeScript sources (a clone, the tests), as bin/vespa-bulk.js does.
 */
function startWorker(data: WorkerStart): Worker {
  const here = import.meta.url;
  if (!here.endsWith('.ts')) return new Worker(new URL('./worker.js', here), { workerData: data });
  // The ESM build of tsx's API beside the CommonJS one that require.resolve finds (its CommonJS register() cannot load ESM hooks here).
  const tsx = pathToFileURL(createRequire(here).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href;
  const entry = new URL('./worker.ts', here).href;
  const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(boot, { eval: true, workerData: data });
}
