import type { Worker } from 'node:worker_threads';
import type { WireProtocol } from '../../http/transport.js';
import { VespaBulkError, errorCodes, type ErrorCode } from '../../errors.js';
import { ChainScheduler } from '../chain-scheduler.js';
import type { OutputFormat } from '../formats.js';
import type { VisitOptions } from '../options.js';
import { chainKey, chainsOf, maxInflightOf } from '../query.js';
import type { SliceReport } from '../slice-visitor.js';
import { limitOf, visitReportOf, type SliceView, type VisitReport, type VisitRun } from '../visitor.js';
import type { ChainState, FromWorker, SliceProgress, ToWorker, WorkerInput } from './protocol.js';
import { spawnWorker } from './spawn.js';

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
  write: (slice: number, data: Buffer, rawBytes: number) => void | Promise<void>,
  hooks: WorkerVisitHooks = {},
): WorkerVisitRun {
  const specs = chainsOf(options);
  const sliceOf = new Map(specs.map((c) => [c.key, c.sliceId]));
  const views = new Map<string, SliceProgress>();
  for (const { key } of specs) {
    const finished = options.resumeFrom?.[key]?.finished === true;
    views.set(key, { key, status: finished ? 'finished' : 'waiting', documents: 0, removes: 0, retries: 0, percentFinished: finished ? 100 : 0 });
  }
  const sliceViews: SliceView[] = specs.map(({ key, sliceId }) => ({
    key,
    sliceId,
    get status() {
      return views.get(key)!.status;
    },
    get documents() {
      return views.get(key)!.documents;
    },
    get removes() {
      return views.get(key)!.removes;
    },
    get retries() {
      return views.get(key)!.retries;
    },
    get percentFinished() {
      return views.get(key)!.percentFinished;
    },
  }));
  const { signal, dispatcher, onMessage, onProtocol, ...plain } = options;
  if (dispatcher !== undefined) throw new VespaBulkError('VB_USAGE', 'workers cannot share a dispatcher across threads: leave out dispatcher or workers');
  const unfinished = specs.filter((c) => options.resumeFrom?.[c.key]?.finished !== true);
  const maxInflight = maxInflightOf(options, Math.max(1, unfinished.length));
  const n = Math.max(1, Math.min(workers, maxInflight));
  const startedAt = performance.now();
  const finalStates: Record<string, ChainState> = {};
  const reports = new Map<string, SliceReport>();
  const received: number[] = [];
  let protocol: WireProtocol | undefined;
  let nextSnapshot = 0;
  /** The worker a chain ran on: a parked chain's state is there. */
  const home = new Map<string, number>();
  const waiters = new Map<string, { resolve: (outcome: 'done' | 'parked') => void; reject: (err: unknown) => void }>();
  const settleWaiter = (key: string, how: (waiter: { resolve: (outcome: 'done' | 'parked') => void; reject: (err: unknown) => void }) => void): void => {
    const waiter = waiters.get(key);
    waiters.delete(key);
    if (waiter !== undefined) how(waiter);
  };
  const stopped = new AbortController();
  const scheduleSignal = signal === undefined ? stopped.signal : AbortSignal.any([signal, stopped.signal]);

  const runs = Array.from({ length: n }, (_, w) => {
    const input: WorkerInput = { options: plain, ...encoding };
    const worker: Worker = spawnWorker('visit-worker', input);
    const send = (m: ToWorker): void => worker.postMessage(m);
    const waiting = new Map<number, { resolve: (states: Record<string, ChainState>) => void; hold: Promise<void> }>();
    let exited = false;
    let chain: Promise<void> = Promise.resolve();
    let settle!: { resolve: () => void; reject: (e: unknown) => void };
    const done = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
    let outcome: { ok: true } | { error: unknown } | undefined;
    const running = new Set<string>();
    const handle = async (m: FromWorker): Promise<void> => {
      switch (m.type) {
        case 'batch':
          for (const p of m.progress) views.set(p.key, p);
          received[w] = m.bytesReceived;
          await write(m.slice, Buffer.from(m.data.buffer, m.data.byteOffset, m.data.byteLength), m.rawBytes);
          if (!exited) send({ type: 'ack' });
          return;
        case 'state':
          for (const p of m.progress) views.set(p.key, p);
          {
            const asked = waiting.get(m.id);
            waiting.delete(m.id);
            asked?.resolve(m.states);
            // This worker's later batches wait until every worker has answered and the cut is taken.
            if (asked !== undefined) await asked.hold;
          }
          return;
        case 'message':
          onMessage?.(m.message);
          return;
        case 'protocol':
          if (protocol === undefined) {
            protocol = m.protocol;
            onProtocol?.(m.protocol);
          }
          return;
        case 'chain': {
          views.set(m.key, m.progress);
          reports.set(m.key, m.report);
          running.delete(m.key);
          hooks.onChainStopped?.(m.key, sliceOf.get(m.key)!, m.progress.status);
          settleWaiter(m.key, (x) => x.resolve(m.outcome));
          return;
        }
        case 'done':
          for (const r of m.reports) {
            const key = chainKey(r.slice, r.bucketSpace, r.cluster);
            reports.set(key, r);
            views.set(key, { key, status: r.status, documents: r.documents, removes: r.removes, retries: r.retries, percentFinished: r.percentFinished });
          }
          Object.assign(finalStates, m.states);
          received[w] = m.bytes;
          outcome ??= { ok: true };
          return;
        case 'error': {
          const error = new VespaBulkError(m.code !== undefined && m.code in errorCodes ? (m.code as ErrorCode) : 'VB_VISIT', m.message);
          outcome = { error };
          // The scheduler learns of it through a chain of this worker, and stops the visit.
          const first = [...running].find((key) => waiters.has(key));
          if (first !== undefined) settleWaiter(first, (x) => x.reject(error));
        }
      }
    };
    worker.on('message', (m: FromWorker) => {
      chain = chain.then(() => handle(m)).catch((err: unknown) => {
        // The output failed: the visit is over; this worker's chains stop, the scheduler stops the others.
        outcome ??= { error: err };
        send({ type: 'stop' });
        for (const key of running) settleWaiter(key, (x) => x.reject(err));
      });
    });
    const finish = (): void => {
      exited = true;
      void chain.then(() => {
        // Unanswered snapshots: the final states (now recorded) stand for this worker.
        for (const { resolve } of waiting.values()) resolve({});
        waiting.clear();
        const error = outcome === undefined ? new VespaBulkError('VB_VISIT', `visit worker ${w} ended without a report`) : 'error' in outcome ? outcome.error : undefined;
        // Chains it was running will not report any more.
        for (const key of running) settleWaiter(key, (x) => x.reject(error ?? new VespaBulkError('VB_VISIT', `visit worker ${w} ended while running ${key}`)));
        running.clear();
        if (error === undefined) settle.resolve();
        else settle.reject(error);
      });
    };
    worker.on('error', (err) => {
      outcome ??= { error: err };
    });
    worker.on('exit', finish);
    return {
      done,
      running,
      start: (key: string): void => {
        running.add(key);
        send({ type: 'start', key });
      },
      park: (key: string, wanted: boolean): void => {
        if (!exited) send({ type: 'park', key, wanted });
      },
      stop: (): void => {
        if (!exited) send({ type: 'stop' });
      },
      end: (): void => {
        if (!exited) send({ type: 'end' });
      },
      get exited() {
        return exited;
      },
      state: (hold: Promise<void>): Promise<Record<string, ChainState>> => {
        if (exited) return chain.then(() => ({}));
        const id = nextSnapshot++;
        return new Promise((resolve) => {
          waiting.set(id, { resolve, hold });
          send({ type: 'snapshot', id });
        });
      },
    };
  });
  const stopAll = (): void => {
    stopped.abort();
    for (const r of runs) r.stop();
  };
  signal?.addEventListener('abort', stopAll, { once: true });
  const documents = (): number => sliceViews.reduce((s, v) => s + v.documents + v.removes, 0);
  const resume = (key: string): boolean => options.resumeFrom?.[key]?.continuation !== undefined || (options.resumeFrom?.[key]?.deliveredIds?.length ?? 0) > 0;
  const scheduler = new ChainScheduler({
    keys: [...unfinished.filter((c) => resume(c.key)), ...unfinished.filter((c) => !resume(c.key))].map((c) => c.key),
    limit: limitOf(options, maxInflight),
    runner: {
      run: (key) =>
        new Promise<'done' | 'parked'>((resolve, reject) => {
          let w = home.get(key);
          if (w === undefined) {
            // The worker with the fewest chains running (and still there).
            const alive = runs.map((r, i) => ({ r, i })).filter(({ r }) => !r.exited);
            if (alive.length === 0) return reject(new VespaBulkError('VB_VISIT', 'every visit worker has ended'));
            w = alive.reduce((a, b) => (b.r.running.size < a.r.running.size ? b : a)).i;
            home.set(key, w);
          } else if (runs[w].exited) {
            return reject(new VespaBulkError('VB_VISIT', `visit worker ${w}, which ran ${key}, has ended`));
          }
          waiters.set(key, { resolve, reject });
          runs[w].start(key);
        }),
      park: (key, wanted) => {
        const w = home.get(key);
        if (w !== undefined) runs[w].park(key, wanted);
      },
      delivered: (key) => {
        const v = views.get(key)!;
        return v.documents + v.removes;
      },
    },
    documents,
    signal: scheduleSignal,
    onFailure: stopAll,
  });
  const done = (async (): Promise<VisitReport> => {
    let failure: { error: unknown } | undefined;
    await scheduler.done.catch((err: unknown) => (failure = { error: err }));
    for (const r of runs) r.end();
    const results = await Promise.allSettled(runs.map((r) => r.done));
    signal?.removeEventListener('abort', stopAll);
    if (failure !== undefined) throw failure.error;
    const failed = results.find((r) => r.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    // Chains that never ran: as they were resumed (finished, or waiting with their token).
    const all = specs.map(({ key, sliceId, space, cluster }): SliceReport => {
      const ran = reports.get(key);
      if (ran !== undefined) return ran;
      const from = options.resumeFrom?.[key];
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
    });
    return visitReportOf(all, received.reduce((s, b) => s + (b ?? 0), 0), (performance.now() - startedAt) / 1000, scheduler.report(), protocol);
  })();
  return {
    slices: sliceViews,
    done,
    bytes: () => received.reduce((s, b) => s + (b ?? 0), 0),
    percentFinished: () => (sliceViews.length === 0 ? 100 : sliceViews.reduce((s, v) => s + v.percentFinished, 0) / sliceViews.length),
    documents,
    inflight: () => scheduler.inflight(),
    async states(atCut) {
      let release!: () => void;
      const hold = new Promise<void>((resolve) => (release = resolve));
      try {
        const answers = await Promise.all(runs.map((r) => r.state(hold)));
        const states = Object.assign({}, finalStates, ...answers) as Record<string, ChainState>;
        await atCut?.();
        return states;
      } finally {
        release();
      }
    },
  };
}
