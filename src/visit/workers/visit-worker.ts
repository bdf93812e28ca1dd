import { gzipSync } from 'node:zlib';
import { ParentChannel, dispatch } from '../../threads/channel.js';
import { toWireError } from '../../threads/errors.js';
import { createEncoder } from '../../sinks/output-format.js';
import { linesHandedOn, savedStates, type SliceVisitor } from '../slice-visitor.js';
import { createChains, type ChainSet } from '../visitor.js';
import type { SliceProgress, ToWorker, VisitProtocol } from './protocol.js';

// The entry of one visit worker: runs the chains the main thread starts here and posts their bytes in batches.

/** Encoded bytes of one slice not posted yet; a batch goes out at this size (or on a timer, a token, a snapshot). */
const batchBytes = 256 * 1024;
/** Batches posted and not yet written by the main thread before the slices pause. */
const maxUnacked = 4;

function progressOf(s: SliceVisitor): SliceProgress {
  return {
    key: s.key,
    status: s.status,
    documents: s.documents,
    removes: s.removes,
    retries: s.retries,
    percentFinished: s.percentFinished,
  };
}

/**
 * The encoded bytes of each slice, posted in batches (a gzip member each when compressing); while `maxUnacked`
 * batches wait for the main thread to write them, the chains that deliver more wait too.
 */
class Batches {
  // Keyed by slice id: the two bucket spaces' chains of one slice go to the same output.
  private readonly pending = new Map<number, Buffer[]>();
  private readonly pendingSize = new Map<number, number>();
  private unacked = 0;
  private readonly wakeOnAck: Array<() => void> = [];

  constructor(
    private readonly gzip: boolean,
    private readonly post: (slice: number, data: Uint8Array, rawBytes: number) => void,
  ) {}

  /** Adds encoded lines of a slice; a returned promise settles once the main thread has caught up. */
  add(slice: number, chunks: Buffer[]): void | Promise<void> {
    const list = this.pending.get(slice) ?? [];
    list.push(...chunks);
    this.pending.set(slice, list);
    this.pendingSize.set(slice, (this.pendingSize.get(slice) ?? 0) + chunks.reduce((n, c) => n + c.length, 0));
    if ((this.pendingSize.get(slice) ?? 0) >= batchBytes) this.flush(slice);
    if (this.unacked < maxUnacked) return;
    return new Promise<void>((resolve) => this.wakeOnAck.push(resolve));
  }

  /** Posts what the slice has pending. */
  flush(slice: number): void {
    const chunks = this.pending.get(slice);
    if (chunks === undefined || chunks.length === 0) return;
    const rawBytes = this.pendingSize.get(slice) ?? 0;
    this.pending.set(slice, []);
    this.pendingSize.set(slice, 0);
    let data: Uint8Array;
    if (this.gzip) {
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
    this.unacked++;
    this.post(slice, data, rawBytes);
  }

  flushAll(): void {
    for (const s of this.pending.keys()) this.flush(s);
  }

  /** The main thread wrote a batch. */
  ack(): void {
    this.unacked--;
    if (this.unacked < maxUnacked) for (const wake of this.wakeOnAck.splice(0)) wake();
  }
}

/** The chains this worker runs: starting them, telling how each stopped, their states, and the worker's end. */
class ChainsHere {
  /** Chains run here (their state is this worker's to report), and those running now. */
  private readonly ran = new Set<SliceVisitor>();
  private readonly running = new Set<string>();
  private ending = false;
  private failed = false;
  private over = false;

  constructor(
    private readonly port: ParentChannel<VisitProtocol>,
    private readonly chains: ChainSet,
    private readonly batches: Batches,
    private readonly onOver: () => void,
  ) {}

  /** The progress of the chains of `slice` run here. */
  progressOf(slice: number): SliceProgress[] {
    return [...this.ran].filter((s) => s.sliceId === slice).map(progressOf);
  }

  start(key: string): void {
    const s = this.chains.byKey.get(key);
    if (s === undefined || this.failed) {
      if (s !== undefined)
        this.port.post({ type: 'chain', key, outcome: 'done', progress: progressOf(s), report: s.report() });
      return;
    }
    this.ran.add(s);
    this.running.add(key);
    s.run().then(
      () => {
        this.running.delete(key);
        // The chain's bytes go before the word that it stopped: the main thread has written them when it reads it.
        this.batches.flush(s.sliceId);
        this.port.post({
          type: 'chain',
          key,
          outcome: s.isWaiting() ? 'parked' : 'done',
          progress: progressOf(s),
          report: s.report(),
        });
        this.finishIfOver();
      },
      (err: unknown) => {
        this.running.delete(key);
        if (!this.failed) {
          // The visit cannot go on (nothing answers, or the encoding failed): this worker's chains stop, the main thread stops the rest.
          this.failed = true;
          this.chains.stop();
          this.port.post({ type: 'error', error: toWireError(err) });
        }
        this.finishIfOver();
      },
    );
  }

  /** No chain will be started any more: `done` goes out once the running ones stop. */
  end(): void {
    this.ending = true;
    this.finishIfOver();
  }

  /** Answers snapshot `id`: the state and the bytes it covers are taken together, and the bytes are posted first. */
  async answerSnapshot(id: number): Promise<void> {
    await linesHandedOn(this.ran);
    const states = savedStates(this.ran);
    this.batches.flushAll();
    this.port.post({ type: 'state', id, states, progress: [...this.ran].map(progressOf) });
  }

  /** After `end`, when the last chain here stopped. */
  private finishIfOver(): void {
    if (this.over || !this.ending || this.running.size > 0) return;
    this.over = true;
    this.onOver();
    this.batches.flushAll();
    this.port.post({
      type: 'done',
      reports: [...this.ran].map((s) => s.report()),
      states: savedStates(this.ran),
      bytes: this.chains.bytes(),
    });
    void this.chains.close().finally(() => this.port.close());
  }
}

const port = ParentChannel.open<VisitProtocol>();
const input = port.start;
const encoder = createEncoder(input.format);
const batches = new Batches(input.gzip, (slice, data, rawBytes) =>
  port.post({ type: 'batch', slice, data, rawBytes, bytesReceived: chains.bytes(), progress: here.progressOf(slice) }, [
    data.buffer as ArrayBuffer,
  ]),
);
// The main thread tells the caller once, whichever worker learns it first.
const chains = createChains(
  {
    ...input.options,
    onProtocol: (protocol, why) => port.post({ type: 'protocol', protocol, ...(why !== undefined && { why }) }),
  },
  {
    deliver: (batch) => batches.add(batch.slice, encoder.encode(batch.entries)),
    onSliceState(s) {
      // A token, a park or an end: what came before goes out now, so the main thread's progress is current.
      batches.flush(s.sliceId);
    },
  },
);
const timer = setInterval(() => batches.flushAll(), 100);
const here = new ChainsHere(port, chains, batches, () => clearInterval(timer));

port.onMessage(
  dispatch<ToWorker>({
    ack: () => batches.ack(),
    stop: () => chains.stop(),
    start: (m) => here.start(m.key),
    park: (m) => chains.byKey.get(m.key)?.park(m.wanted),
    end: () => here.end(),
    snapshot: (m) => void here.answerSnapshot(m.id),
  }),
);
port.post({ type: 'ready' });
