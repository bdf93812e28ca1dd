import { parentPort, workerData } from 'node:worker_threads';
import { gzipSync } from 'node:zlib';
import { createEncoder } from '../formats.js';
import type { SliceResumeState } from '../options.js';
import type { SliceVisitor } from '../slice-visitor.js';
import { startVisit, type LocalVisitRun } from '../visitor.js';
import type { FromWorker, SliceProgress, ToWorker, WorkerInput } from './protocol.js';

// The entry of one visit worker: runs the chains of its share of the slices and posts their bytes in batches.

const input = workerData as WorkerInput;
const port = parentPort!;
const post = (m: FromWorker, transfer: ArrayBuffer[] = []): void => port.postMessage(m, transfer);

/** Encoded bytes of one slice not posted yet; a batch goes out at this size (or on a timer, a token, a snapshot). */
const batchBytes = 256 * 1024;
/** Batches posted and not yet written by the main thread before the slices pause. */
const maxUnacked = 4;

const encoder = createEncoder(input.format);
// Keyed by slice id: the two bucket spaces' chains of one slice go to the same output.
const pending = new Map<number, Buffer[]>();
const pendingSize = new Map<number, number>();
let unacked = 0;
let wakeOnAck: Array<() => void> = [];
const controller = new AbortController();
let run: LocalVisitRun | undefined;

function progressOf(s: SliceVisitor): SliceProgress {
  return { key: s.key, status: s.status, documents: s.documents, removes: s.removes, retries: s.retries, percentFinished: s.percentFinished };
}

function flush(slice: number): void {
  const chunks = pending.get(slice);
  if (chunks === undefined || chunks.length === 0) return;
  const rawBytes = pendingSize.get(slice) ?? 0;
  pending.set(slice, []);
  pendingSize.set(slice, 0);
  let data: Uint8Array;
  if (input.gzip) {
    // Each batch is a gzip member of its own; concatenated members are one valid .gz file.
    const member = gzipSync(Buffer.concat(chunks, rawBytes), { level: 1 });
    data = new Uint8Array(member.length);
    data.set(member);
  } else {
    // An own buffer (not the shared pool's) so it can be transferred.
    data = new Uint8Array(rawBytes);
    let at = 0;
    for (const c of chunks) {
      data.set(c, at);
      at += c.length;
    }
  }
  unacked++;
  const progress = (run?.slices ?? []).filter((s) => s.sliceId === slice).map(progressOf);
  post({ type: 'batch', slice, data, rawBytes, bytesReceived: run?.bytes() ?? 0, progress }, [data.buffer as ArrayBuffer]);
}

function flushAll(): void {
  for (const s of pending.keys()) flush(s);
}

function statesOf(slices: readonly SliceVisitor[]): Record<string, SliceResumeState & { documents: number }> {
  const out: Record<string, SliceResumeState & { documents: number }> = {};
  for (const s of slices) {
    out[s.key] = {
      ...(s.status === 'finished' ? { finished: true } : s.continuation !== undefined ? { continuation: s.continuation } : {}),
      documents: s.documents + s.removes,
      ...(s.status !== 'finished' && { deliveredIds: s.exactlyOnce.pendingIds() }),
    };
  }
  return out;
}

port.on('message', (m: ToWorker) => {
  if (m.type === 'ack') {
    unacked--;
    if (unacked < maxUnacked) for (const wake of wakeOnAck.splice(0)) wake();
  } else if (m.type === 'stop') {
    controller.abort();
  } else {
    void (async () => {
      // Lines read but not yet handed on are handed on within this turn of the event loop.
      for (let turns = 0; turns < 100 && run?.slices.some((s) => s.undelivered); turns++) await new Promise((r) => setImmediate(r));
      // The state and the bytes it covers are taken together, and the bytes are posted first.
      const slices = run?.slices ?? [];
      const states = statesOf(slices);
      flushAll();
      post({ type: 'state', id: m.id, states, progress: slices.map(progressOf) });
    })();
  }
});

const timer = setInterval(flushAll, 100);
run = startVisit(
  { ...input.options, signal: controller.signal, onMessage: (message) => post({ type: 'message', message }) },
  {
    deliver(batch) {
      const s = batch.slice;
      const chunks = encoder.encode(batch.entries);
      const list = pending.get(s) ?? [];
      list.push(...chunks);
      pending.set(s, list);
      pendingSize.set(s, (pendingSize.get(s) ?? 0) + chunks.reduce((n, c) => n + c.length, 0));
      if ((pendingSize.get(s) ?? 0) >= batchBytes) flush(s);
      if (unacked < maxUnacked) return;
      return new Promise<void>((resolve) => wakeOnAck.push(resolve));
    },
    onSliceState(s) {
      // A token or an end: what came before goes out now, so the main thread's progress is current.
      flush(s.sliceId);
    },
  },
);
run.done.then(
  (report) => {
    clearInterval(timer);
    flushAll();
    post({ type: 'done', report, states: statesOf(run.slices) });
    port.close();
  },
  (err: unknown) => {
    clearInterval(timer);
    wakeOnAck = [];
    post({ type: 'error', code: (err as { code?: unknown }).code as string | undefined, message: err instanceof Error ? err.message : String(err) });
    port.close();
  },
);
