import type { QueuedOperation } from '../admission.js';
import { isGone } from '../http/http-response.js';
import { runAdmitted } from './run-admitted.js';
import type { DocumentRequest, Job } from './handler-state.js';
import { reply } from './replies.js';
import { handlerErrorBody } from './responses.js';
import { idParts } from './document-store.js';
import type { LockWaiter } from '../bucket-locks.js';

/**
 * Admission, then service: the handler's queue refuses (429) or holds the operation until the content nodes
 * have room (admission.ts); there it takes `latencyMs`, then it is served. A request whose timeout passes first
 * is answered 504 and never applied. `job.bytes` is the operation's estimated size, its body's length.
 * Single-document operations (`job.id` given) take room at the content nodes; visits and bulk runs do not, and
 * streamed visits run until their last byte.
 */
export function admit(request: DocumentRequest, job: Job): void {
  const { state } = request;
  const verdict = state.admission.verdict(job.bytes, job.id !== undefined);
  if (verdict === 'dispatch') {
    // The common case, kept free of further allocations: no latency, nothing waiting.
    if (state.faults.current.latencyMs <= 0) runAdmitted(request, job);
    else new PendingOperation(request, job).atContentNodes();
  } else if (verdict === 'queue') state.admission.enqueue(new PendingOperation(request, job).waitForTurn());
  else reply(request, 429, handlerErrorBody(request.pathId, verdict.message));
}

/**
 * An operation that is not served at once: it waits in the handler's queue, then (a write) for its bucket's lock,
 * and takes the content nodes' latency.
 */
class PendingOperation implements QueuedOperation, LockWaiter {
  readonly enqueuedMs = performance.now();
  readonly document: boolean;
  readonly bytes: number;
  private timedOut = false;
  private timer: NodeJS.Timeout | undefined;
  /** The bucket whose lock it holds (a write being processed), else undefined. */
  private locked: number | undefined;
  /** The bucket whose lock it waits for. */
  private awaited: number | undefined;

  constructor(
    private readonly request: DocumentRequest,
    private readonly job: Job,
  ) {
    this.document = job.id !== undefined;
    this.bytes = job.bytes;
  }

  get cancelled(): boolean {
    // A request abandoned while it waited is not sent on, as in the service.
    return this.timedOut || isGone(this.request.res);
  }

  /** Waits in the queue, answered 504 if its timeout passes there. */
  waitForTurn(): this {
    this.timer = setTimeout(timeOutInQueue, this.job.timeoutMs, this);
    return this;
  }

  dispatch(): void {
    clearTimeout(this.timer);
    this.atContentNodes();
  }

  drop(): void {
    clearTimeout(this.timer);
  }

  /**
   * At the content nodes: a write first takes its bucket's lock (waiting while another write to the bucket is
   * processed); then served after the latency, or 504 at the deadline when that comes first. Without latency the
   * work is done at once, so no write ever finds a lock held: the locks are taken only with latency.
   */
  atContentNodes(): void {
    const { state } = this.request;
    const leftMs = this.job.timeoutMs - (performance.now() - this.enqueuedMs);
    const bucket = this.job.write ? bucketOf(this.request, this.job.id) : undefined;
    if (bucket !== undefined && state.faults.current.latencyMs > 0 && !state.bucketLocks.acquire(bucket, this)) {
      this.awaited = bucket;
      this.timer = setTimeout(timeOutAtContentNodes, Math.max(0, leftMs), this);
      return;
    }
    this.locked = bucket !== undefined && state.faults.current.latencyMs > 0 ? bucket : undefined;
    this.process(leftMs);
  }

  /** Its bucket's lock is free for it: taken unless it timed out or its client left while it waited. */
  granted(): boolean {
    clearTimeout(this.timer);
    if (this.timedOut) return false;
    if (isGone(this.request.res)) {
      this.timedOut = true;
      this.request.state.admission.release(this.document);
      return false;
    }
    this.locked = this.awaited;
    this.awaited = undefined;
    this.process(this.job.timeoutMs - (performance.now() - this.enqueuedMs));
    return true;
  }

  private process(leftMs: number): void {
    const { latencyMs } = this.request.state.faults.current;
    if (latencyMs >= leftMs) this.timer = setTimeout(timeOutAtContentNodes, Math.max(0, leftMs), this);
    else if (latencyMs > 0) setTimeout(served, latencyMs, this);
    else served(this);
  }

  serve(): void {
    // An operation whose client left while it was at the content nodes is not answered.
    if (isGone(this.request.res)) this.request.state.admission.release(this.document);
    else runAdmitted(this.request, this.job);
    this.unlock();
  }

  /** Its processing is over (served or timed out): the next write to its bucket goes. */
  private unlock(): void {
    const bucket = this.locked;
    if (bucket === undefined) return;
    this.locked = undefined;
    this.request.state.bucketLocks.release(bucket);
  }

  timeOut(inQueue: boolean): void {
    const { state, res, pathId } = this.request;
    if (inQueue) {
      this.timedOut = true;
      state.admission.cancelled();
    } else {
      // Timed out waiting for its bucket's lock: passed over when its turn comes.
      if (this.awaited !== undefined) this.timedOut = true;
      state.admission.release(this.document);
    }
    this.unlock();
    if (!isGone(res)) reply(this.request, 504, handlerErrorBody(pathId, `Timeout after ${this.job.timeoutMs}ms`));
  }
}

/** The lock's bucket of a write's document id (none for a run without one, or an id the store cannot place). */
function bucketOf(request: DocumentRequest, id: string | undefined): number | undefined {
  if (id === undefined) return undefined;
  try {
    return request.state.bucketLocks.bucketOf(idParts(id).bucket);
  } catch {
    return undefined;
  }
}

function timeOutInQueue(op: PendingOperation): void {
  op.timeOut(true);
}

function timeOutAtContentNodes(op: PendingOperation): void {
  op.timeOut(false);
}

function served(op: PendingOperation): void {
  op.serve();
}
