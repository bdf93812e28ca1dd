import type { Worker } from 'node:worker_threads';
import { VespaBulkError, errorCodes, type ErrorCode } from '../../errors.js';
import type { OutputFormat } from '../formats.js';
import type { SliceResumeState, VisitOptions } from '../options.js';
import { bucketSpacesOf, chainKey, sliceIdsOf } from '../query.js';
import type { SliceReport } from '../slice-visitor.js';
import type { SliceView, VisitReport, VisitRun } from '../visitor.js';
import type { FromWorker, SliceProgress, ToWorker, WorkerInput } from './protocol.js';
import { spawnWorker } from './spawn.js';

/** A chain's resume state with the documents written for it in this run. */
export type ChainState = SliceResumeState & { documents: number };

/** A visit whose slices run in worker threads; the bytes come back to this thread, per slice in order. */
export interface WorkerVisitRun extends VisitRun {
  /**
   * Each chain's resume state as of the bytes handed to `write` so far (running workers are asked for it).
   * `atCut` runs once every worker has answered, before any later batch is handed to `write`: the outputs then
   * hold exactly what the states cover, even where workers share one output.
   */
  states(atCut?: () => void | Promise<void>): Promise<Record<string, ChainState>>;
}

/** How the workers encode what they visit. */
export interface WorkerEncoding {
  format: Exclude<OutputFormat, 'json'>;
  /** Each batch becomes a gzip member (for a single `.gz` output). */
  gzip: boolean;
}

/**
 * Starts `workers` threads, each visiting every `workers`-th slice id (both bucket spaces of a slice stay in one
 * worker, as they share its output). `write` gets each batch's bytes; the worker that sent it pauses once it has
 * a few batches not yet written, so a slow output slows the HTTP reads as it does without workers.
 */
export function startWorkerVisit(
  options: VisitOptions,
  workers: number,
  encoding: WorkerEncoding,
  write: (slice: number, data: Buffer, rawBytes: number) => void | Promise<void>,
): WorkerVisitRun {
  const ids = sliceIdsOf(options);
  const spaces = bucketSpacesOf(options);
  const n = Math.max(1, Math.min(workers, ids.length));
  const views = new Map<string, SliceProgress>();
  for (const id of ids) {
    for (const space of spaces) {
      const key = chainKey(id, spaces.length > 1 ? space : undefined);
      const finished = options.resumeFrom?.[key]?.finished === true;
      views.set(key, { key, status: finished ? 'finished' : 'running', documents: 0, removes: 0, retries: 0, percentFinished: finished ? 100 : 0 });
    }
  }
  const sliceViews: SliceView[] = [...views.values()].map((v) => ({
    key: v.key,
    sliceId: Number.parseInt(v.key, 10),
    get status() {
      return views.get(v.key)!.status;
    },
    get documents() {
      return views.get(v.key)!.documents;
    },
    get removes() {
      return views.get(v.key)!.removes;
    },
    get retries() {
      return views.get(v.key)!.retries;
    },
    get percentFinished() {
      return views.get(v.key)!.percentFinished;
    },
  }));
  const { signal, dispatcher, onMessage, ...plain } = options;
  if (dispatcher !== undefined) throw new VespaBulkError('VB_USAGE', 'workers cannot share a dispatcher across threads: leave out dispatcher or workers');
  const startedAt = performance.now();
  const finalStates: Record<string, ChainState> = {};
  const received: number[] = [];
  const shares = Array.from({ length: n }, (_, w) => ids.filter((_, i) => i % n === w));
  let nextSnapshot = 0;

  const runs = shares.map((share, w) => {
    const input: WorkerInput = { options: { ...plain, sliceIds: share }, ...encoding };
    const worker: Worker = spawnWorker('visit-worker', input);
    const send = (m: ToWorker): void => worker.postMessage(m);
    const waiting = new Map<number, { resolve: (states: Record<string, ChainState>) => void; hold: Promise<void> }>();
    let exited = false;
    let chain: Promise<void> = Promise.resolve();
    let settle!: { resolve: (r: VisitReport) => void; reject: (e: unknown) => void };
    const done = new Promise<VisitReport>((resolve, reject) => (settle = { resolve, reject }));
    let outcome: { report: VisitReport } | { error: unknown } | undefined;
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
        case 'done':
          for (const s of m.report.slices) views.set(chainKey(s.slice, s.bucketSpace), { key: chainKey(s.slice, s.bucketSpace), ...s });
          Object.assign(finalStates, m.states);
          received[w] = m.report.bytes;
          outcome = { report: m.report };
          return;
        case 'error':
          outcome = { error: new VespaBulkError(m.code !== undefined && m.code in errorCodes ? (m.code as ErrorCode) : 'VB_VISIT', m.message) };
      }
    };
    worker.on('message', (m: FromWorker) => {
      chain = chain.then(() => handle(m)).catch((err: unknown) => {
        // The output failed: this worker's visit is over; the others are stopped by the caller.
        outcome ??= { error: err };
        send({ type: 'stop' });
      });
    });
    const finish = (): void => {
      exited = true;
      void chain.then(() => {
        // Unanswered snapshots: the final states (now recorded) stand for this worker.
        for (const { resolve } of waiting.values()) resolve({});
        waiting.clear();
        if (outcome === undefined) settle.reject(new VespaBulkError('VB_VISIT', `visit worker ${w} ended without a report`));
        else if ('report' in outcome) settle.resolve(outcome.report);
        else settle.reject(outcome.error);
      });
    };
    worker.on('error', (err) => {
      outcome ??= { error: err };
    });
    worker.on('exit', finish);
    return {
      done,
      stop: () => !exited && send({ type: 'stop' }),
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
    for (const r of runs) r.stop();
  };
  signal?.addEventListener('abort', stopAll, { once: true });
  const done = (async (): Promise<VisitReport> => {
    const results = await Promise.allSettled(
      runs.map((r) =>
        r.done.catch((err: unknown) => {
          stopAll();
          throw err;
        }),
      ),
    );
    signal?.removeEventListener('abort', stopAll);
    const failed = results.find((r) => r.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    const reports = results.map((r) => (r as PromiseFulfilledResult<VisitReport>).value);
    const slices: SliceReport[] = reports.flatMap((r) => r.slices).sort((a, b) => a.slice - b.slice || (a.bucketSpace ?? '').localeCompare(b.bucketSpace ?? ''));
    return {
      ok: reports.every((r) => r.ok),
      documents: reports.reduce((s, r) => s + r.documents, 0),
      removes: reports.reduce((s, r) => s + r.removes, 0),
      bytes: reports.reduce((s, r) => s + r.bytes, 0),
      seconds: (performance.now() - startedAt) / 1000,
      slices,
    };
  })();
  return {
    slices: sliceViews,
    done,
    bytes: () => received.reduce((s, b) => s + (b ?? 0), 0),
    percentFinished: () => (sliceViews.length === 0 ? 100 : sliceViews.reduce((s, v) => s + v.percentFinished, 0) / sliceViews.length),
    documents: () => sliceViews.reduce((s, v) => s + v.documents + v.removes, 0),
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
