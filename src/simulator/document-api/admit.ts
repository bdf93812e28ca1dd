import type { QueuedOperation } from '../admission.js';
import { isGone } from '../http/http-response.js';
import { runAdmitted } from './run-admitted.js';
import type { DocumentRequest, Job } from './handler-state.js';
import { reply } from './replies.js';
import { handlerErrorBody } from './responses.js';

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

/** An operation that is not served at once: it waits in the handler's queue, or for the content nodes' latency. */
class PendingOperation implements QueuedOperation {
  readonly enqueuedMs = performance.now();
  readonly document: boolean;
  readonly bytes: number;
  private timedOut = false;
  private timer: NodeJS.Timeout | undefined;

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

  /** At the content nodes: served after the latency, or 504 at the deadline when that comes first. */
  atContentNodes(): void {
    const leftMs = this.job.timeoutMs - (performance.now() - this.enqueuedMs);
    const { latencyMs } = this.request.state.faults.current;
    if (latencyMs >= leftMs) setTimeout(timeOutAtContentNodes, Math.max(0, leftMs), this);
    else if (latencyMs > 0) setTimeout(served, latencyMs, this);
    else served(this);
  }

  serve(): void {
    // An operation whose client left while it was at the content nodes is not answered.
    if (isGone(this.request.res)) this.request.state.admission.release(this.document);
    else runAdmitted(this.request, this.job);
  }

  timeOut(inQueue: boolean): void {
    const { state, res, pathId } = this.request;
    if (inQueue) {
      this.timedOut = true;
      state.admission.cancelled();
    } else state.admission.release(this.document);
    if (!isGone(res)) reply(this.request, 504, handlerErrorBody(pathId, `Timeout after ${this.job.timeoutMs}ms`));
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
