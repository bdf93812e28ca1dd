import { FifoQueue } from '../structures/fifo-queue.js';
import type { Faults, FaultSettings } from './faults.js';

/*
 * The document handler's queue and the content nodes behind it, as DocumentV1ApiHandler has them
 * (document-operation-executor.def). An operation goes to the content nodes at once when nothing waits before it
 * and they have room; otherwise it waits in the handler's queue, in arrival order. The queue refuses (429) an
 * operation when `maxThrottled` (256) already wait, when the oldest waiting one was enqueued more than
 * `maxThrottledAge` (3 s) earlier, or when the bytes waiting would pass `maxThrottledBytes` (a quarter of the
 * heap; a lone operation may pass it). Operations at the content nodes do not count as waiting.
 *
 * The content nodes' room: at most `contentSlots` document operations at once (0: as many as come), and at most
 * `maxOpsPerSecond` started per second (0: no bound). Visits and bulk runs wait in the same queue but take no
 * room when they leave it: they have their own throttling, as in the service. The settings are read live from
 * the fault settings, so `PUT /_sim/faults` changes them at run time.
 */

/** The handler refuses new operations while the oldest waiting one has waited longer than this (maxThrottledAge). */
export const maxQueueAgeMs = 3000;

/** The share of the heap the waiting operations' bytes may take (maxThrottledBytes = -0.25). */
export const queueHeapShare = 0.25;

/**
 * The container's JVM heap when the node's memory is not known (ApplicationContainerCluster: 1536 MB).
 * @example
 * ```ts
 * import { defaultHeapMb, startDocumentServer } from 'vespa-bulk/simulator';
 *
 * // A container with a quarter of the usual heap: it throttles (429) sooner.
 * const server = await startDocumentServer({ port: 0, heapMb: defaultHeapMb / 4 });
 * await server.close();
 * ```
 */
export const defaultHeapMb = 1536;

/** How far behind the service rate may fall (a late timer) and still catch up: ms of turns served at once. */
const rateCatchUpMs = 10;

/** An operation in the handler's queue. */
export interface QueuedOperation {
  /** When it entered the queue (ms, performance clock). */
  readonly enqueuedMs: number;
  /** Its estimated size: the request body's bytes (0 without a body). */
  readonly bytes: number;
  /** A single-document operation, which takes room at the content nodes; visits and bulk runs take none. */
  readonly document: boolean;
  /** Timed out or abandoned: it leaves the queue when it reaches the head, without going anywhere. */
  readonly cancelled: boolean;
  /** It leaves the queue for the content nodes (their room already taken for it). */
  dispatch(): void;
  /** It leaves the queue cancelled, or the server closes. */
  drop(): void;
}

/** A refusal: the message of the 429. */
export interface Overload {
  readonly message: string;
}

/** Where an operation goes: to the content nodes now (room taken), into the queue, or refused. */
export type Verdict = 'dispatch' | 'queue' | Overload;

/** What the queue holds now. */
export interface QueueCounts {
  /** Operations waiting in the handler's queue. */
  waiting: number;
  /** Their bytes. */
  waitingBytes: number;
  /** How long the oldest of them has waited, in ms (0 when none waits). */
  oldestWaitingMs: number;
  /** Document operations at the content nodes. */
  atContentNodes: number;
  /** The bytes bound of the queue (a quarter of the heap). */
  maxWaitingBytes: number;
}

const ageRefusal: Overload = {
  message: `Rejecting execution due to overload: ${(maxQueueAgeMs / 1000).toFixed(1)} seconds worth of work enqueued`,
};

export class Admission {
  private readonly queue = new FifoQueue<QueuedOperation>();
  private queuedBytes = 0;
  private atContentNodes = 0;
  /** When the service rate lets the next document operation start (ms, performance clock). */
  private nextTurnMs = 0;
  private turnTimer: NodeJS.Timeout | undefined;
  private pumping = false;
  /** The bytes bound of the queue; 0: none. */
  readonly maxQueuedBytes: number;

  constructor(
    private readonly faults: Pick<Faults, 'current' | 'onChange'>,
    heapMb = defaultHeapMb,
  ) {
    this.maxQueuedBytes = Math.ceil(queueHeapShare * heapMb * 1024 * 1024);
    faults.onChange((patch: Partial<FaultSettings>) => {
      // A new rate starts afresh: turns spaced at the old rate are forgotten.
      if (patch.maxOpsPerSecond !== undefined) this.nextTurnMs = 0;
      if (patch.maxOpsPerSecond !== undefined || patch.contentSlots !== undefined) this.pump();
    });
  }

  /**
   * Where an operation of `bytes` goes. 'dispatch' has taken its room at the content nodes (give it back with
   * `release`); 'queue' means the caller enqueues it now.
   */
  verdict(bytes: number, document: boolean): Verdict {
    const { queueLimit } = this.faults.current;
    if ((this.queue.length === 0 || queueLimit === 0) && this.hasRoom(document)) {
      this.take(document);
      return 'dispatch';
    }
    // maxThrottled 0: no queue; the operation goes to the content nodes or is refused, naming their window.
    if (queueLimit === 0) return overload(`${this.atContentNodes} requests already enqueued`);
    const waiting = this.queue.length + 1;
    if (waiting > queueLimit) return overload(`${queueLimit} requests already enqueued`);
    if (waiting > 1 && performance.now() - this.queue.peek()!.enqueuedMs > maxQueueAgeMs) return ageRefusal;
    const total = this.queuedBytes + bytes;
    if (this.maxQueuedBytes !== 0 && this.queuedBytes !== 0 && total > this.maxQueuedBytes)
      return overload(
        `estimated size of operation is ${prettyBytes(bytes)}, total size of queue ${prettyBytes(total)} would exceed queue limit of ${prettyBytes(this.maxQueuedBytes)}`,
      );
    return 'queue';
  }

  /** Puts an operation the verdict said 'queue' to at the back of the queue. */
  enqueue(op: QueuedOperation): void {
    this.queue.push(op);
    this.queuedBytes += op.bytes;
    this.armTurnTimer();
  }

  /** A document operation left the content nodes: its room goes to the next waiting one. */
  release(document: boolean): void {
    if (!document) return;
    this.atContentNodes--;
    if (this.queue.length > 0) this.pump();
  }

  /** An operation in the queue was cancelled: it leaves now if it is at the head (as the dispatcher would find it). */
  cancelled(): void {
    this.pump();
  }

  counts(): QueueCounts {
    const oldest = this.queue.peek();
    return {
      waiting: this.queue.length,
      waitingBytes: this.queuedBytes,
      oldestWaitingMs: oldest === undefined ? 0 : performance.now() - oldest.enqueuedMs,
      atContentNodes: this.atContentNodes,
      maxWaitingBytes: this.maxQueuedBytes,
    };
  }

  /** The server closes: every waiting operation is dropped and no timer is left. */
  close(): void {
    clearTimeout(this.turnTimer);
    this.turnTimer = undefined;
    for (let op = this.queue.shift(); op !== undefined; op = this.queue.shift()) op.drop();
    this.queuedBytes = 0;
  }

  private hasRoom(document: boolean): boolean {
    if (!document) return true;
    const { contentSlots, maxOpsPerSecond } = this.faults.current;
    if (contentSlots > 0 && this.atContentNodes >= contentSlots) return false;
    return maxOpsPerSecond <= 0 || performance.now() >= this.nextTurnMs;
  }

  private take(document: boolean): void {
    if (!document) return;
    this.atContentNodes++;
    const { maxOpsPerSecond } = this.faults.current;
    if (maxOpsPerSecond > 0)
      this.nextTurnMs = Math.max(this.nextTurnMs, performance.now() - rateCatchUpMs) + 1000 / maxOpsPerSecond;
  }

  /** Sends waiting operations on, in order, while the content nodes have room; cancelled ones at the head leave. */
  private pump(): void {
    // A dispatch may answer at once and release, which pumps again: the loop below already goes on.
    if (this.pumping) return;
    this.pumping = true;
    try {
      for (let op = this.queue.peek(); op !== undefined; op = this.queue.peek()) {
        const cancelled = op.cancelled;
        if (!cancelled) {
          if (!this.hasRoom(op.document)) break;
          this.take(op.document);
        }
        this.queue.shift();
        this.queuedBytes -= op.bytes;
        if (cancelled) op.drop();
        else op.dispatch();
      }
    } finally {
      this.pumping = false;
    }
    this.armTurnTimer();
  }

  /** Wakes the queue when the service rate gives its head a turn (a full set of slots wakes it by a release). */
  private armTurnTimer(): void {
    if (this.turnTimer !== undefined || this.queue.length === 0) return;
    const { contentSlots, maxOpsPerSecond } = this.faults.current;
    if (maxOpsPerSecond <= 0 || (contentSlots > 0 && this.atContentNodes >= contentSlots)) return;
    // The turn may have come since the head was found without room: then at once.
    this.turnTimer = setTimeout(this.onTurn, Math.max(0, this.nextTurnMs - performance.now()));
  }

  private readonly onTurn = (): void => {
    this.turnTimer = undefined;
    this.pump();
  };
}

function overload(reason: string): Overload {
  return { message: `Rejecting execution due to overload: ${reason}` };
}

/** A byte count as the handler writes it (BytesQuantity.asPrettyString): the largest binary unit that divides it evenly. */
export function prettyBytes(bytes: number): string {
  if (bytes === 0) return '0 bytes';
  if (bytes === 1) return '1 byte';
  const units = ['bytes', 'kB', 'MB', 'GB', 'TB'];
  let unit = 0;
  let remaining = bytes;
  while (remaining % 1024 === 0 && unit < units.length - 1) {
    remaining /= 1024;
    unit++;
  }
  return `${remaining} ${units[unit]}`;
}
