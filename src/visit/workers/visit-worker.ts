import { gzipSync } from 'node:zlib';
import { ParentChannel, dispatch } from '../../workers/channel.js';
import { toWireError } from '../../workers/errors.js';
import { createEncoder } from '../formats.js';
import type { SliceVisitor } from '../slice-visitor.js';
import { createChains } from '../visitor.js';
import type { ChainState, SliceProgress, ToWorker, VisitProtocol } from './protocol.js';

// The entry of one visit worker: runs the chains the main thread starts here and posts their bytes in batches.

const port = ParentChannel.open<VisitProtocol>();
const input = port.start;

/** Encoded bytes of one slice not posted yet; a batch goes out at this size (or on a timer, a token, a snapshot). */
const batchBytes = 256 * 1024;
/** Batches posted and not yet written by the main thread before the slices pause. */
const maxUnacked = 4;

const encoder = createEncoder(input.format);
// Keyed by slice id: the two bucket spaces' chains of one slice go to the same output.
const pending = new Map<number, Buffer[]>();
const pendingSize = new Map<number, number>();
let unacked = 0;
const wakeOnAck: Array<() => void> = [];
/** Chains run here (their state is this worker's to report), and those running now. */
const ran = new Set<SliceVisitor>();
const running = new Set<string>();
let ending = false;
let failed = false;
let over = false;

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
  const progress = [...ran].filter((s) => s.sliceId === slice).map(progressOf);
  port.post({ type: 'batch', slice, data, rawBytes, bytesReceived: chains.bytes(), progress }, [data.buffer as ArrayBuffer]);
}

function flushAll(): void {
  for (const s of pending.keys()) flush(s);
}

function statesOf(slices: Iterable<SliceVisitor>): Record<string, ChainState> {
  const out: Record<string, ChainState> = {};
  for (const s of slices) {
    out[s.key] = {
      ...(s.status === 'finished' ? { finished: true } : s.continuation !== undefined ? { continuation: s.continuation } : {}),
      documents: s.documents + s.removes,
      ...(s.status !== 'finished' && { deliveredIds: s.exactlyOnce.pendingIds() }),
    };
  }
  return out;
}

// The main thread tells the caller once, whichever worker learns it first.
const chains = createChains({ ...input.options, onProtocol: (protocol) => port.post({ type: 'protocol', protocol }) }, {
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
    // A token, a park or an end: what came before goes out now, so the main thread's progress is current.
    flush(s.sliceId);
  },
});
const timer = setInterval(flushAll, 100);

function start(key: string): void {
  const s = chains.byKey.get(key);
  if (s === undefined || failed) {
    if (s !== undefined) port.post({ type: 'chain', key, outcome: 'done', progress: progressOf(s), report: s.report() });
    return;
  }
  ran.add(s);
  running.add(key);
  s.run().then(
    () => {
      running.delete(key);
      // The chain's bytes go before the word that it stopped: the main thread has written them when it reads it.
      flush(s.sliceId);
      port.post({ type: 'chain', key, outcome: s.status === 'waiting' ? 'parked' : 'done', progress: progressOf(s), report: s.report() });
      finishIfOver();
    },
    (err: unknown) => {
      running.delete(key);
      if (!failed) {
        // The visit cannot go on (nothing answers, or the encoding failed): this worker's chains stop, the main thread stops the rest.
        failed = true;
        chains.stop();
        port.post({ type: 'error', error: toWireError(err) });
      }
      finishIfOver();
    },
  );
}

/** After `end` (sent once the main thread starts no more chains), when the last chain here stopped. */
function finishIfOver(): void {
  if (over || !ending || running.size > 0) return;
  over = true;
  clearInterval(timer);
  flushAll();
  port.post({ type: 'done', reports: [...ran].map((s) => s.report()), states: statesOf(ran), bytes: chains.bytes() });
  void chains.close().finally(() => port.close());
}

port.onMessage(
  dispatch<ToWorker>({
    ack() {
      unacked--;
      if (unacked < maxUnacked) for (const wake of wakeOnAck.splice(0)) wake();
    },
    stop: () => chains.stop(),
    start: (m) => start(m.key),
    park: (m) => chains.byKey.get(m.key)?.park(m.wanted),
    end() {
      ending = true;
      finishIfOver();
    },
    snapshot: (m) => void answerSnapshot(m.id),
  }),
);

/** Answers snapshot `id`: the state and the bytes it covers are taken together, and the bytes are posted first. */
async function answerSnapshot(id: number): Promise<void> {
  // Lines read but not yet handed on are handed on within this turn of the event loop.
  for (let turns = 0; turns < 100 && [...ran].some((s) => s.undelivered); turns++) await new Promise((r) => setImmediate(r));
  const states = statesOf(ran);
  flushAll();
  port.post({ type: 'state', id, states, progress: [...ran].map(progressOf) });
}
