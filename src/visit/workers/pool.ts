import { proxyShown } from '../../http/proxy/proxy-route.js';
import type { WireProtocol } from '../../http/transport.js';
import { VespaBulkError } from '../../core/errors.js';
import { SnapshotBarrier } from '../../threads/barrier.js';
import { WorkerChannel } from '../../threads/channel.js';
import { fromWireError } from '../../threads/errors.js';
import { ChainScheduler } from '../chain-scheduler.js';
import type { OutputFormat } from '../../sinks/output-format.js';
import type { VisitMessage, VisitOptions } from '../options.js';
import { chainKey, chainsOf, maxInflightOf, type ChainSpec } from '../query.js';
import type { SliceReport } from '../slice-visitor.js';
import { limitOf, visitReportOf, type SliceView, type VisitReport, type VisitRun } from '../visitor.js';
import type { ChainState, FromWorker, SliceProgress, VisitProtocol, WorkerInput } from './protocol.js';

export type { ChainState } from './protocol.js';

/** A visit whose slices run in worker threads; the bytes come back to this thread, per slice in order. */
export interface WorkerVisitRun extends VisitRun {
  /**
   * Each chain's resume state as of the bytes handed to `write` so far (running workers are asked for it), for the
   * chains that ran in this visit; the others stand where they were resumed from. `atCut` runs once every worker has
   * answered, before any later batch is handed to `write`: the outputs then hold exactly what the states cover, even
   * where workers share one output.
   */
  states(atCut?: () => void | Promise<void>): Promise<Record<string, ChainState>>;
}

/** How the workers encode what they visit. */
export interface WorkerEncoding {
  format: Exclude<OutputFormat, 'json'>;
  /** Each batch becomes a gzip member (for a single `.gz` output). */
  gzip: boolean;
}

/** Called as the workers' messages are handled. */
export interface WorkerVisitHooks {
  /** A chain stopped for good (or `parked`), every batch of it handed to `write` before. */
  onChainStopped?(key: string, sliceId: number, status: SliceProgress['status']): void;
}

/** Where a worker's batches go: the bytes of one slice, in order, and their size before compression. */
type WriteBatch = (slice: number, data: Buffer, rawBytes: number) => void | Promise<void>;

/**
 * Starts `workers` threads and runs the visit's chains in them: this thread decides how many run at once and which
 * (the same scheduler as without workers, the adaptive search included) and starts each on the worker with the
 * fewest running; a parked chain resumes on the worker that has its state. `write` gets each batch's bytes; the
 * worker that sent it pauses once it has a few batches not yet written, so a slow output slows the HTTP reads as it
 * does without workers.
 */
export function startWorkerVisit(
  options: VisitOptions,
  workers: number,
  encoding: WorkerEncoding,
  write: WriteBatch,
  hooks: WorkerVisitHooks = {},
): WorkerVisitRun {
  return new WorkerVisit(options, workers, encoding, write, hooks);
}

/** The latest progress of every chain, as the workers report it, and the `SliceView`s that read it. */
class ChainProgress {
  private readonly latest = new Map<string, SliceProgress>();
  readonly views: SliceView[];

  constructor(specs: ChainSpec[], options: VisitOptions) {
    for (const { key } of specs) {
      const finished = options.resumeFrom?.[key]?.finished === true;
      this.latest.set(key, {
        key,
        status: finished ? 'finished' : 'waiting',
        documents: 0,
        removes: 0,
        retries: 0,
        percentFinished: finished ? 100 : 0,
      });
    }
    const of = (key: string): SliceProgress => this.latest.get(key)!;
    this.views = specs.map(({ key, sliceId }) => ({
      key,
      sliceId,
      get status() {
        return of(key).status;
      },
      get documents() {
        return of(key).documents;
      },
      get removes() {
        return of(key).removes;
      },
      get retries() {
        return of(key).retries;
      },
      get percentFinished() {
        return of(key).percentFinished;
      },
    }));
  }

  update(progress: readonly SliceProgress[]): void {
    for (const p of progress) this.latest.set(p.key, p);
  }

  /** A chain's progress from its final report. */
  reported(key: string, r: SliceReport): void {
    this.latest.set(key, {
      key,
      status: r.status,
      documents: r.documents,
      removes: r.removes,
      retries: r.retries,
      percentFinished: r.percentFinished,
    });
  }

  /** Documents and removes delivered by one chain. */
  delivered(key: string): number {
    const p = this.latest.get(key)!;
    return p.documents + p.removes;
  }

  documents(): number {
    return this.views.reduce((s, v) => s + v.documents + v.removes, 0);
  }

  percentFinished(): number {
    return this.views.length === 0 ? 100 : this.views.reduce((s, v) => s + v.percentFinished, 0) / this.views.length;
  }
}

/** The scheduler's wait for each chain it started: settled when the chain's worker says it stopped, or fails. */
class ChainWaiters {
  private readonly waiting = new Map<
    string,
    { resolve: (outcome: 'done' | 'parked') => void; reject: (err: unknown) => void }
  >();

  /** Resolves with how `key` stopped; `start` starts it. */
  wait(key: string, start: () => void): Promise<'done' | 'parked'> {
    return new Promise((resolve, reject) => {
      this.waiting.set(key, { resolve, reject });
      start();
    });
  }

  has(key: string): boolean {
    return this.waiting.has(key);
  }

  resolve(key: string, outcome: 'done' | 'parked'): void {
    const waiter = this.waiting.get(key);
    this.waiting.delete(key);
    waiter?.resolve(outcome);
  }

  reject(key: string, err: unknown): void {
    const waiter = this.waiting.get(key);
    this.waiting.delete(key);
    waiter?.reject(err);
  }
}

/** A chain's resume state per worker at a cut. */
type StatesBarrier = SnapshotBarrier<VisitWorker, Record<string, ChainState>>;

/** What the workers of one visit share on this thread: where their messages go. */
interface VisitShared {
  readonly progress: ChainProgress;
  readonly waiters: ChainWaiters;
  readonly barrier: StatesBarrier;
  readonly reports: Map<string, SliceReport>;
  /** The states of the chains of workers that are done. */
  readonly finalStates: Record<string, ChainState>;
  readonly write: WriteBatch;
  onMessage(message: VisitMessage): void;
  onProtocol(protocol: WireProtocol, why?: string): void;
  onChainStopped(key: string, status: SliceProgress['status']): void;
}

/**
 * One visit worker thread and what this thread knows of it. Its messages are handled one after another, each once
 * the one before (a batch's write included) is done; those after its answer to a snapshot wait for the cut.
 */
class VisitWorker {
  /** The chains it runs now. */
  readonly running = new Set<string>();
  /** The bytes its HTTP pool received. */
  bytesReceived = 0;
  /** Settles once the thread exited and its last message was handled: rejected with what failed it, if anything did. */
  readonly done: Promise<void>;
  /** Settles once the thread loaded its code and takes chains (or exited before). */
  readonly ready: Promise<void>;
  private markReady!: () => void;
  private readonly channel: WorkerChannel<VisitProtocol>;
  private queue: Promise<void> = Promise.resolve();
  /** How its visit ended (`done`), or its first failure; none yet while it runs. */
  private outcome: { ok: true } | { error: unknown } | undefined;

  constructor(
    readonly index: number,
    input: WorkerInput,
    private readonly shared: VisitShared,
  ) {
    this.ready = new Promise<void>((resolve) => (this.markReady = resolve));
    this.channel = WorkerChannel.spawn<VisitProtocol>(import.meta.url, 'visit-worker', input);
    this.channel.onMessage((m) => this.enqueue(m));
    this.channel.onError((err) => (this.outcome ??= { error: err }));
    this.done = new Promise<void>((resolve, reject) =>
      this.channel.onExit(() => {
        this.markReady();
        void this.queue.then(() => {
          const failure = this.ended();
          if (failure === undefined) resolve();
          else reject(failure.error);
        });
      }),
    );
  }

  get exited(): boolean {
    return this.channel.exited;
  }

  /** Runs (or resumes, on the worker that parked it) `key`. */
  start(key: string): void {
    this.running.add(key);
    this.channel.post({ type: 'start', key });
  }

  park(key: string, wanted: boolean): void {
    this.channel.post({ type: 'park', key, wanted });
  }

  stop(): void {
    this.channel.post({ type: 'stop' });
  }

  /** No more chains: it reports `done` once those running stop, and exits. */
  end(): void {
    this.channel.post({ type: 'end' });
  }

  /** Asks for its chains' states at `round` of the barrier; one that has exited answers nothing once its messages are handled. */
  askState(round: number): void {
    if (this.exited) void this.queue.then(() => this.shared.barrier.leave(this));
    else this.channel.post({ type: 'snapshot', id: round });
  }

  private enqueue(m: FromWorker): void {
    this.queue = this.queue
      .then(() => this.shared.barrier.passage(this))
      .then(() => this.handle(m))
      .catch((err: unknown) => this.outputFailed(err));
  }

  private async handle(m: FromWorker): Promise<void> {
    const shared = this.shared;
    switch (m.type) {
      case 'ready':
        this.markReady();
        return;
      case 'batch':
        shared.progress.update(m.progress);
        this.bytesReceived = m.bytesReceived;
        await shared.write(m.slice, Buffer.from(m.data.buffer, m.data.byteOffset, m.data.byteLength), m.rawBytes);
        this.channel.post({ type: 'ack' });
        return;
      case 'state':
        shared.progress.update(m.progress);
        // Its later messages wait (`passage`) until every worker has answered and the cut is taken.
        shared.barrier.answer(this, m.states, m.id);
        return;
      case 'message':
        shared.onMessage(m.message);
        return;
      case 'protocol':
        shared.onProtocol(m.protocol, m.why);
        return;
      case 'chain':
        shared.progress.update([m.progress]);
        shared.reports.set(m.key, m.report);
        this.running.delete(m.key);
        shared.onChainStopped(m.key, m.progress.status);
        shared.waiters.resolve(m.key, m.outcome);
        return;
      case 'done':
        for (const r of m.reports) {
          const key = chainKey(r.slice, r.bucketSpace, r.cluster);
          shared.reports.set(key, r);
          shared.progress.reported(key, r);
        }
        Object.assign(shared.finalStates, m.states);
        this.bytesReceived = m.bytes;
        this.outcome ??= { ok: true };
        return;
      case 'error': {
        const error = fromWireError(m.error, 'VB_VISIT');
        this.outcome = { error };
        // The scheduler learns of it through a chain of this worker, and stops the visit.
        const first = [...this.running].find((key) => shared.waiters.has(key));
        if (first !== undefined) shared.waiters.reject(first, error);
      }
    }
  }

  /** The output failed: the visit is over; this worker's chains stop, the scheduler stops the others. */
  private outputFailed(err: unknown): void {
    this.outcome ??= { error: err };
    this.stop();
    for (const key of this.running) this.shared.waiters.reject(key, err);
  }

  /** After the exit, its last message handled: what failed it, if anything did. */
  private ended(): { error: unknown } | undefined {
    // An unanswered snapshot: the final states (now recorded) stand for this worker.
    this.shared.barrier.leave(this);
    const error = this.endError();
    // Chains it was running will not report any more.
    for (const key of this.running)
      this.shared.waiters.reject(
        key,
        error ?? new VespaBulkError('VB_VISIT', `visit worker ${this.index} ended while running ${key}`),
      );
    this.running.clear();
    return error === undefined ? undefined : { error };
  }

  /** What the worker failed of: its reported error, nothing after a success, or that it never reported. */
  private endError(): unknown {
    if (this.outcome === undefined)
      return new VespaBulkError('VB_VISIT', `visit worker ${this.index} ended without a report`);
    return 'error' in this.outcome ? this.outcome.error : undefined;
  }
}

/** The visit over its workers: `WorkerVisitRun`, with the scheduler on this thread. */
class WorkerVisit implements WorkerVisitRun, VisitShared {
  readonly done: Promise<VisitReport>;
  readonly progress: ChainProgress;
  readonly waiters = new ChainWaiters();
  readonly barrier: StatesBarrier = new SnapshotBarrier();
  readonly reports = new Map<string, SliceReport>();
  readonly finalStates: Record<string, ChainState> = {};
  private readonly specs: ChainSpec[];
  private readonly workers: VisitWorker[];
  private readonly scheduler: ChainScheduler;
  /** The worker each chain ran on: a parked chain's state is there. */
  private readonly home = new Map<string, VisitWorker>();
  private readonly sliceOf: Map<string, number>;
  private readonly stopped = new AbortController();
  private readonly startedAt = performance.now();
  private protocol: WireProtocol | undefined;
  /** The cut being taken: one at a time. */
  private cutting: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly options: VisitOptions,
    workers: number,
    encoding: WorkerEncoding,
    readonly write: WriteBatch,
    private readonly hooks: WorkerVisitHooks,
  ) {
    const specs = (this.specs = chainsOf(options));
    this.sliceOf = new Map(specs.map((c) => [c.key, c.sliceId]));
    this.progress = new ChainProgress(specs, options);
    const { signal, transport, onMessage: _m, onProtocol: _p, ...plain } = options;
    if (transport !== undefined)
      throw new VespaBulkError(
        'VB_USAGE',
        'workers cannot share a transport across threads: leave out transport or workers',
      );
    const unfinished = specs.filter((c) => options.resumeFrom?.[c.key]?.finished !== true);
    const maxInflight = maxInflightOf(options, Math.max(1, unfinished.length));
    const n = Math.max(1, Math.min(workers, maxInflight));
    const input: WorkerInput = { options: plain, ...encoding };
    this.workers = Array.from({ length: n }, (_, i) => new VisitWorker(i, input, this));
    signal?.addEventListener('abort', this.stopAll, { once: true });
    const resumes = (key: string): boolean =>
      options.resumeFrom?.[key]?.continuation !== undefined ||
      (options.resumeFrom?.[key]?.deliveredIds?.length ?? 0) > 0;
    this.scheduler = new ChainScheduler({
      // Chains with a token to go on from first.
      keys: [...unfinished.filter((c) => resumes(c.key)), ...unfinished.filter((c) => !resumes(c.key))].map(
        (c) => c.key,
      ),
      limit: limitOf(options, maxInflight),
      runner: {
        run: (key) => this.run(key),
        park: (key, wanted) => this.home.get(key)?.park(key, wanted),
        delivered: (key) => this.progress.delivered(key),
      },
      documents: () => this.documents(),
      ready: Promise.all(this.workers.map((w) => w.ready)).then(() => undefined),
      signal: signal === undefined ? this.stopped.signal : AbortSignal.any([signal, this.stopped.signal]),
      onFailure: this.stopAll,
    });
    this.done = this.finish();
  }

  get slices(): SliceView[] {
    return this.progress.views;
  }

  bytes(): number {
    return this.workers.reduce((s, w) => s + w.bytesReceived, 0);
  }

  documents(): number {
    return this.progress.documents();
  }

  percentFinished(): number {
    return this.progress.percentFinished();
  }

  inflight(): ReturnType<VisitRun['inflight']> {
    return this.scheduler.inflight();
  }

  states(atCut?: () => void | Promise<void>): Promise<Record<string, ChainState>> {
    const cut = this.cutting.then(() => this.cut(atCut));
    this.cutting = cut.catch(() => undefined);
    return cut;
  }

  onMessage(message: VisitMessage): void {
    this.options.onMessage?.(message);
  }

  /** The caller hears of the protocol once, whichever worker learns it first. */
  onProtocol(protocol: WireProtocol, why?: string): void {
    if (this.protocol !== undefined) return;
    this.protocol = protocol;
    this.options.onProtocol?.(protocol, why);
  }

  onChainStopped(key: string, status: SliceProgress['status']): void {
    this.hooks.onChainStopped?.(key, this.sliceOf.get(key)!, status);
  }

  /** Every worker's states at one cut, with those of the workers that are done; `atCut` runs before any later batch is written. */
  private async cut(atCut: (() => void | Promise<void>) | undefined): Promise<Record<string, ChainState>> {
    try {
      const answers = await this.barrier.gather(this.workers, (w, round) => w.askState(round));
      const states = Object.assign({}, this.finalStates, ...(answers?.values() ?? [])) as Record<string, ChainState>;
      await atCut?.();
      return states;
    } finally {
      this.barrier.release();
    }
  }

  /** Runs `key` on the worker that has its state, or on the one with the fewest chains running. */
  private run(key: string): Promise<'done' | 'parked'> {
    let worker = this.home.get(key);
    if (worker === undefined) {
      const alive = this.workers.filter((w) => !w.exited);
      if (alive.length === 0) return Promise.reject(new VespaBulkError('VB_VISIT', 'every visit worker has ended'));
      worker = alive.reduce((a, b) => (b.running.size < a.running.size ? b : a));
      this.home.set(key, worker);
    } else if (worker.exited) {
      return Promise.reject(
        new VespaBulkError('VB_VISIT', `visit worker ${worker.index}, which ran ${key}, has ended`),
      );
    }
    const on = worker;
    return this.waiters.wait(key, () => on.start(key));
  }

  private readonly stopAll = (): void => {
    this.stopped.abort();
    for (const w of this.workers) w.stop();
  };

  /** Once the scheduler is over and every worker has ended: the report, or the first failure. */
  private async finish(): Promise<VisitReport> {
    let failure: { error: unknown } | undefined;
    await this.scheduler.done.catch((err: unknown) => (failure = { error: err }));
    for (const w of this.workers) w.end();
    const results = await Promise.allSettled(this.workers.map((w) => w.done));
    this.options.signal?.removeEventListener('abort', this.stopAll);
    if (failure !== undefined) throw failure.error;
    const failed = results.find((r) => r.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    const all = this.specs.map((spec) => this.reports.get(spec.key) ?? this.notRun(spec));
    return visitReportOf(
      all,
      this.bytes(),
      (performance.now() - this.startedAt) / 1000,
      this.scheduler.report(),
      this.protocol,
      this.options.transport === undefined ? proxyShown(this.options.proxy, this.options.endpoint) : undefined,
    );
  }

  /** The report of a chain that never ran: as it was resumed (finished, or waiting with its token). */
  private notRun({ key, sliceId, space, cluster }: ChainSpec): SliceReport {
    const from = this.options.resumeFrom?.[key];
    return {
      slice: sliceId,
      ...(space !== undefined && { bucketSpace: space }),
      ...(cluster !== undefined && { cluster }),
      status: from?.finished === true ? 'finished' : 'waiting',
      documents: 0,
      removes: 0,
      percentFinished: from?.finished === true ? 100 : 0,
      ...(from?.finished !== true && from?.continuation !== undefined && { continuation: from.continuation }),
      requests: 0,
      retries: 0,
      parks: 0,
      repeatsSkipped: 0,
    };
  }
}
