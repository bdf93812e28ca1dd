import { WorkerChannel } from '../../threads/channel.js';
import { SnapshotBarrier } from '../../threads/barrier.js';
import { fromWireError, type WireError } from '../../threads/errors.js';
import type {
  DriverCut,
  DriverEnd,
  DriverFigures,
  DriverRun,
  FailureOutput,
  FeedDriver,
  StopReason,
} from '../driver.js';
import { checkFeedOptions, type FeedOptions } from '../options.js';
import { type WireProtocol } from '../../http/transport.js';
import { createTransport } from '../../http/create-transport.js';
import { proxyShown } from '../../http/proxy/proxy-route.js';
import { splitEndpoint } from '../../http/endpoint.js';
import { FeedStats } from '../stats.js';
import type { SameFailureVerdict } from '../same-failure.js';
import { mergeQueueReadings } from '../../limit/limit-search.js';
import { defaultMaxInflight } from '../throttle.js';
import { openFeedSource } from '../open-feed-source.js';
import { type FeedSource, type InputInfo, type InputPosition, type OpenPosition } from '../source.js';
import type { RawItem } from '../../core/operation-splitter.js';
import { itemPosition, packBatch } from './batch.js';
import type {
  FeedProtocol,
  FromWorker,
  RelayedFailure,
  ToWorker,
  WorkerSnapshot,
  WorkerStart,
  WorkerState,
} from './messages.js';
import { routeId, workerOf } from './route.js';
import { Sleeper } from '../../structures/sleeper.js';
import { positionAfter, settleUnsent } from '../unsent.js';

/** Batches a worker may have been sent and not yet pulled: enough to keep it busy, few enough to bound memory. */
const maxAhead = 4;

/**
 * Bytes of operations gathered for one worker before they go as one batch, while the worker has batches queued.
 * A read chunk (64 KiB) cut N ways would give each of 16 workers batches of 4 operations: a message, a wake-up
 * and a pull per 4 operations, and too few ahead to fill its in-flight share (benchmarks/device/worker-curve.sh).
 */
const batchBytes = 64 * 1024;

/** One worker thread and what the coordinator knows of it. */
interface Lane {
  channel: WorkerChannel<FeedProtocol>;
  /** Last batch number sent, and the last the worker's engine pulled. */
  sent: number;
  taken: number;
  /** Items routed here and not yet sent (all of one input), and their bytes. */
  gathered: RawItem[];
  gatheredBytes: number;
  gatheredInput: { input: number; name: string } | undefined;
  /**
   * Batches sent and not yet in the worker's latest state (`accepted`): its input, how many operations,
   * and (when a checkpoint is kept) each item's line and offset, as in the batch's `meta`.
   */
  pending: { n: number; input: number; count: number; meta?: Float64Array }[];
  state: WorkerState | undefined;
  /** The lane's unfinished operations at its last snapshot (or its end), pending batches included, in input order. */
  open: OpenPosition[];
  done: Extract<FromWorker, { type: 'done' }> | undefined;
}

/**
 * `feed --workers N`: reads and cuts the input on this thread, routes each operation's raw bytes by a hash of
 * its id to one of N worker threads (each a feed engine with its share of the connections and the in-flight
 * limit), and makes one feed of them: one summary (counters added, histograms merged), one failure output
 * (written here), one checkpoint, one progress. The `Feeder` drives it as it drives the engine on one thread
 * (`FeedDriver`), and owns the run around it.
 *
 * The checkpoint, every `checkpointIntervalMs` and at the end: reading pauses, every worker is asked for its
 * unfinished operations (a `SnapshotBarrier` round); failures a worker sends after its answer are held back until the save is built, so
 * the failure output's mark counts exactly the failures of the operations the answers count as finished.
 * Together with the batches not yet taken by a worker, that is the single-thread feeder's checkpoint, in the
 * same format: either path resumes the other's.
 */
export class WorkerCoordinator implements FeedDriver {
  private options: FeedOptions;
  /** The protocol every worker speaks, once settled. */
  private protocol: WireProtocol | undefined;
  private readonly count: number;
  private readonly lanes: Lane[] = [];
  /** The run's failure output, written here. */
  private failures: FailureOutput | undefined;
  private inputs: InputInfo[] = [];
  /** Whether the run keeps a checkpoint: then the positions of batches not yet taken by a worker are kept. */
  private keepsCheckpoint = false;
  /** Why the feed is stopping, once it is. */
  private stopping: StopReason | undefined;
  /** Position after the last item read, for a checkpoint when nothing is unfinished. */
  private readPosition: InputPosition | undefined;
  /** What this thread counts itself: operations it could not cut (framing errors), items skipped by a resume. */
  private readonly own = new FeedStats();
  private readonly startedAt = performance.now();
  private read = 0;
  private readonly sleeper = new Sleeper();
  private merged: FeedStats | undefined;
  private workerError: Error | undefined;
  /** The checkpoint's rounds: every lane's unfinished operations at one cut. */
  private readonly barrier = new SnapshotBarrier<Lane, WorkerSnapshot>();

  constructor(options: FeedOptions = {}) {
    checkFeedOptions(options);
    this.options = options;
    this.count = options.workers ?? 2;
  }

  /** How many threads feed. */
  get workers(): number {
    return this.count;
  }

  /** The merged counters. */
  private get stats(): FeedStats {
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

  /** The workers' figures added up, their latency histograms merged, as the engine's. */
  figures(): DriverFigures {
    return {
      stats: this.stats,
      inflight: this.sum((st) => st.inflight),
      limit: this.sum((st) => st.limit),
      queue: mergeQueueReadings(this.lanes.map((lane) => lane.state?.queue)),
      read: this.read,
    };
  }

  /** Stops the feed as Ctrl-C does (the first reason given stands): stop reading, every worker stops. */
  stop(reason: StopReason = 'interrupted'): void {
    if (this.stopping !== undefined) return;
    this.stopping = reason;
    for (const lane of this.lanes) this.send(lane, { type: 'stop', reason });
    this.sleeper.wakeUp();
  }

  /** Nothing to load here: each worker loads the transform itself. */
  async prepare(): Promise<void> {}

  /**
   * With `protocol: 'auto'`, asks the server once, here, so the workers do not each ask it (and tell it once).
   * When nothing answers, the workers find that out themselves, as a feed on one thread does.
   */
  private async settleProtocol(): Promise<void> {
    const o = this.options;
    const asked = o.protocol ?? 'auto';
    if (asked !== 'auto') {
      this.protocol = asked;
      o.onProtocol?.(asked);
      return;
    }
    let why: string | undefined;
    const transport = createTransport({
      origin: splitEndpoint(o.endpoint ?? 'http://127.0.0.1:8080').origin,
      protocol: 'auto',
      tls: o.tls,
      proxy: o.proxy,
      proxyTls: o.proxyTls,
      onProtocol: (_protocol, said) => {
        why = said;
      },
      connections: 1,
    });
    try {
      this.protocol = await transport.detect();
      this.options = { ...o, protocol: this.protocol };
      o.onProtocol?.(this.protocol, why);
    } catch {
      // Unreachable: left to the workers.
    } finally {
      await transport.destroy().catch(() => undefined);
    }
  }

  /** Feeds `source` over the workers, reading from where `run.resume` stands; resolves once every worker has ended. */
  async feed(source: FeedSource, run: DriverRun): Promise<DriverEnd> {
    const options = this.options;
    const resume = run.resume;
    this.inputs = run.inputs;
    this.keepsCheckpoint = run.keepsCheckpoint;
    const failures = (this.failures = run.failures);
    await this.settleProtocol();
    for (let i = 0; i < this.count; i++) this.lanes.push(this.startLane(i));
    let readError: { error: unknown } | undefined;
    try {
      if (this.stopping === undefined) {
        for await (const batch of openFeedSource(source, options, resume, run.readProgress)) {
          // Nothing is routed while a checkpoint is gathered: its read position must be the one the answers cover.
          while (this.barrier.open) await this.sleeper.sleep();
          this.route(batch.items, batch.input, batch.name);
          while (
            this.stopping === undefined &&
            this.lanes.some((l) => l.sent - l.taken >= maxAhead && !l.channel.exited)
          )
            await this.sleeper.sleep();
          if (failures !== undefined) await failures.drained();
          if (this.stopping !== undefined) break;
        }
      }
    } catch (err) {
      readError = { error: err };
      this.stop('interrupted');
    }
    for (const lane of this.lanes) {
      this.flush(lane);
      this.send(lane, { type: 'end' });
    }
    while (this.lanes.some((l) => !l.channel.exited)) await this.sleeper.sleep();
    if (readError !== undefined) throw readError.error;
    if (this.workerError !== undefined) throw this.workerError;
    return this.end();
  }

  /** The unfinished operations of every lane at its last snapshot (exact once all workers have ended), and the read position. */
  cut(): DriverCut {
    const open: OpenPosition[] = [];
    for (const lane of this.lanes) for (const e of lane.open) open.push(e);
    open.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    return { open, read: this.readPosition };
  }

  /**
   * Asks every running worker for its unfinished operations; once all have answered, saves, then writes the
   * failures held back meanwhile and lets reading go on. A worker gone without an answer (a crash) cancels the
   * round: no save this time, the last one stands.
   */
  async atConsistentCut(save: () => Promise<void>): Promise<void> {
    if (this.barrier.open || this.stopping !== undefined) return;
    // What is gathered and not yet sent is read: it must be in a lane's pending batches, which the cut covers.
    for (const lane of this.lanes) this.flush(lane);
    const waiting = this.lanes.filter((l) => l.done === undefined && !l.channel.exited);
    if (waiting.length === 0) return;
    const answers = await this.barrier.gather(waiting, (lane) => this.send(lane, { type: 'snapshot' }));
    // The failure mark is taken as the save starts, before the held failures are written.
    const saved = answers !== undefined && this.stopping === undefined ? save() : undefined;
    this.barrier.release();
    this.sleeper.wakeUp();
    await saved;
  }

  /** `lane` answered (or ended): its unfinished operations are the snapshot's, and those of batches it has not taken. */
  private answered(lane: Lane, snapshot: WorkerSnapshot): void {
    const open = snapshot.unfinished;
    for (const b of lane.pending) {
      if (b.n <= snapshot.accepted || b.meta === undefined) continue;
      for (let k = 0; k < b.count; k++) open.push(itemPosition(b.input, b.meta, k));
    }
    lane.open = open;
    this.barrier.answer(lane, snapshot);
  }

  private writeFailures(failures: RelayedFailure[]): void {
    const output = this.failures;
    for (const f of failures)
      output?.write(Buffer.from(f.bytes.buffer, f.bytes.byteOffset, f.bytes.byteLength), f.reason, f.verbatim);
  }

  /** How the feed ended, once every worker has: the merged summary, and what the workers said of a stop. */
  private end(): DriverEnd {
    this.merged = undefined;
    const stats = this.stats;
    let abandoned = 0;
    let authStatus: number | undefined;
    let unreachable: WireError | undefined;
    let sameFailure: SameFailureVerdict | undefined;
    for (const lane of this.lanes) {
      abandoned += lane.done?.abandoned ?? 0;
      // Sent and never pulled by the worker's engine: unfinished, behind the checkpoint.
      for (const b of lane.pending) if (b.n > (lane.state?.accepted ?? 0)) abandoned += b.count;
      authStatus ??= lane.done?.authStatus;
      unreachable ??= lane.done?.unreachable;
      sameFailure ??= lane.done?.sameFailure;
    }
    const inflight = this.sum((st) => st.inflight);
    stats.protocol ??= this.protocol;
    stats.proxy ??= proxyShown(this.options.proxy, this.options.endpoint ?? 'http://127.0.0.1:8080');
    const summary = stats.summary(
      performance.now(),
      inflight,
      this.sum((st) => st.limit),
    );
    summary.abandoned = abandoned;
    return {
      summary,
      ...(authStatus !== undefined && { authStatus }),
      ...(unreachable !== undefined && { unreachable: fromWireError(unreachable, 'VB_UNREACHABLE') }),
      ...(sameFailure !== undefined && { sameFailure }),
    };
  }

  /**
   * Routes one read batch: items this thread settles itself (skipped, uncut), the rest gathered per worker and
   * sent once a worker's share reaches `batchBytes`, or at once to a worker with nothing queued (a slow input
   * never waits for a batch to fill).
   */
  private route(items: RawItem[], input: number, name: string): void {
    for (const item of items) {
      this.read++;
      this.readPosition = positionAfter(input, item);
      if (settleUnsent(this.own, item, name, this.failures, this.options.onResult)) continue;
      const lane = this.lanes[workerOf(routeId(item.bytes), this.count)];
      if (lane.gatheredInput !== undefined && lane.gatheredInput.input !== input) this.flush(lane);
      lane.gatheredInput ??= { input, name };
      lane.gathered.push(item);
      lane.gatheredBytes += item.bytes.length;
      if (lane.gatheredBytes >= batchBytes) this.flush(lane);
    }
    this.merged = undefined;
    for (const lane of this.lanes) if (lane.sent === lane.taken) this.flush(lane);
  }

  /** Sends what is gathered for `lane` as one batch. */
  private flush(lane: Lane): void {
    const from = lane.gatheredInput;
    if (from === undefined) return;
    const share = lane.gathered;
    lane.gathered = [];
    lane.gatheredBytes = 0;
    lane.gatheredInput = undefined;
    const batch = packBatch(++lane.sent, from.input, from.name, share);
    lane.pending.push({
      n: batch.n,
      input: from.input,
      count: share.length,
      ...(this.keepsCheckpoint && { meta: batch.meta.slice() }),
    });
    this.send(lane, { type: 'batch', ...batch }, [batch.bytes, batch.meta.buffer as ArrayBuffer]);
  }

  private startLane(index: number): Lane {
    let results: WorkerStart['results'] = 'none';
    if (this.options.onResult !== undefined) results = this.options.onResultOnlyFailed === true ? 'failed' : 'all';
    const data: WorkerStart = { options: workerOptions(this.options, this.count, index), inputs: this.inputs, results };
    if (typeof this.options.failures === 'string') data.failuresPath = this.options.failures;
    const lane: Lane = {
      channel: WorkerChannel.spawn<FeedProtocol>(import.meta.url, 'worker', data),
      sent: 0,
      taken: 0,
      gathered: [],
      gatheredBytes: 0,
      gatheredInput: undefined,
      pending: [],
      state: undefined,
      open: [],
      done: undefined,
    };
    lane.channel
      .onMessage((m) => this.onMessage(lane, m))
      .onError((err) => {
        this.workerError ??= err;
        this.stop('interrupted');
      })
      .onExit(() => {
        // Gone without an answer (a crash): no save this time; the last one stands.
        if (this.barrier.awaits(lane)) this.barrier.cancel();
        this.sleeper.wakeUp();
      });
    return lane;
  }

  private onMessage(lane: Lane, m: FromWorker): void {
    switch (m.type) {
      case 'taken':
        lane.taken = m.n;
        // A worker that has taken all it was sent gets what is gathered for it now, not when it fills.
        if (lane.sent === lane.taken && this.stopping === undefined && !this.barrier.open) this.flush(lane);
        this.sleeper.wakeUp();
        return;
      case 'failures':
        // After its answer, a lane's failures wait: the save being gathered counts their operations unfinished.
        this.barrier.admit(lane, () => this.writeFailures(m.failures));
        return;
      case 'results':
        for (const r of m.results) this.options.onResult?.(r);
        return;
      case 'stopping':
        this.stop(m.reason);
        return;
      case 'state':
      case 'snapshot':
      case 'done':
        // After its answer, a lane's later counters wait as its failures do, in order: the save being gathered
        // counts what the lane had finished at its answer, and the operations it finished since are among the cut's
        // unfinished (were they counted too, a resume would count them twice). The answer itself, and any message
        // of a lane the round does not wait on, is taken at once.
        this.barrier.admit(lane, () => this.noteState(lane, m));
        return;
    }
  }

  /** `lane`'s counters and the batches it has taken in, as of `m`; its answer to a snapshot round; its end. */
  private noteState(lane: Lane, m: Extract<FromWorker, { type: 'state' | 'snapshot' | 'done' }>): void {
    lane.state = { accepted: m.accepted, stats: m.stats, inflight: m.inflight, limit: m.limit, queue: m.queue };
    if (m.type !== 'state') this.answered(lane, m);
    while (lane.pending.length > 0 && lane.pending[0].n <= m.accepted) lane.pending.shift();
    this.merged = undefined;
    if (m.type === 'done') {
      lane.done = m;
      if (m.stopped !== undefined) this.stop(m.stopped);
      if (m.error !== undefined) this.workerError ??= fromWireError(m.error, 'VB_TRANSPORT');
    }
  }

  private send(lane: Lane, m: ToWorker, transfer?: ArrayBuffer[]): void {
    lane.channel.post(m, transfer);
  }

  private sum(of: (s: WorkerState) => number): number {
    let n = 0;
    for (const lane of this.lanes) if (lane.state !== undefined) n += of(lane.state);
    return n;
  }
}

/** Worker `index`'s options: what can cross a thread, with its share of connections and in-flight limits. */
function workerOptions(o: FeedOptions, count: number, index: number): FeedOptions {
  const {
    signal: _s,
    onResult: _r,
    onResultOnlyFailed: _f,
    onProtocol: _p,
    stdin: _i,
    transport: _d,
    failures: _o,
    checkpoint: _c,
    resume: _u,
    workers: _w,
    ...rest
  } = o;
  const share = (total: number) => Math.max(1, Math.floor(total / count) + (index < total % count ? 1 : 0));
  const w: FeedOptions = { ...rest, failures: false, checkpoint: false };
  // Without a number given, each worker takes the protocol's default: sharing HTTP/2's 16 among the workers cost
  // up to a tenth of the rate at 2 workers on 16 cores (benchmarks/device/worker-curve.sh, measurements.md#workers).
  if (o.connections !== undefined) w.connections = share(o.connections);
  if (o.inflight !== undefined) w.inflight = share(o.inflight);
  else w.maxInflight = share(o.maxInflight ?? defaultMaxInflight);
  if (o.arrivalRate !== undefined) w.arrivalRate = o.arrivalRate / count;
  // A URL does not cross a thread; its text does (a function is refused with workers).
  if (o.transform instanceof URL) w.transform = o.transform.href;
  return w;
}
