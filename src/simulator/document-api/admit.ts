import type { QueuedOperation } from '../admission.js';
import { isGone, type AnyRequest, type AnyResponse } from '../http/http-response.js';
import { serve } from './fault-injection.js';
import type { HandlerState, Work } from './handler-state.js';
import { reply } from './replies.js';
import { handlerErrorBody } from './responses.js';

/**
 * Admission, then service: the handler's queue refuses (429) or holds the operation until the content nodes
 * have room (admission.ts); there it takes `latencyMs`, then it is served. A request whose timeout passes first
 * is answered 504 and never applied. `bytes` is the operation's estimated size, its body's length. Single-document
 * operations (`id` given) take room at the content nodes; visits and bulk runs do not, and streamed visits run
 * until their last byte.
 */
export function admit(state: HandlerState, req: AnyRequest, res: AnyResponse, pathId: string, id: string | undefined, write: boolean, timeoutMs: number, work: Work, bytes = 0): void {
  const verdict = state.admission.verdict(bytes, id !== undefined);
  if (verdict === 'dispatch') {
    // The common case, kept free of allocations: no latency, nothing waiting.
    if (state.faults.current.latencyMs <= 0) serve(state, req, res, pathId, id, write, work);
    else new PendingOperation(state, req, res, pathId, id, write, timeoutMs, work, bytes).atContentNodes();
  } else if (verdict === 'queue') state.admission.enqueue(new PendingOperation(state, req, res, pathId, id, write, timeoutMs, work, bytes).waitForTurn());
  else reply(state, req, res, 429, handlerErrorBody(pathId, verdict.message));
}

/** An operation that is not served at once: it waits in the handler's queue, or for the content nodes' latency. */
class PendingOperation implements QueuedOperation {
  readonly enqueuedMs = performance.now();
  readonly document: boolean;
  private timedOut = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly state: HandlerState,
    private readonly req: AnyRequest,
    private readonly res: AnyResponse,
    private readonly pathId: string,
    private readonly id: string | undefined,
    private readonly write: boolean,
    private readonly timeoutMs: number,
    private readonly work: Work,
    readonly bytes: number,
  ) {
    this.document = id !== undefined;
  }

  get cancelled(): boolean {
    // A request abandoned while it waited is not sent on, as in the service.
    return this.timedOut || isGone(this.res);
  }

  /** Waits in the queue, answered 504 if its timeout passes there. */
  waitForTurn(): this {
    this.timer = setTimeout(timeOutInQueue, this.timeoutMs, this);
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
    const leftMs = this.timeoutMs - (performance.now() - this.enqueuedMs);
    const { latencyMs } = this.state.faults.current;
    if (latencyMs >= leftMs) setTimeout(timeOutAtContentNodes, Math.max(0, leftMs), this);
    else if (latencyMs > 0) setTimeout(served, latencyMs, this);
    else served(this);
  }

  serve(): void {
    // An operation whose client left while it was at the content nodes is not answered.
    if (isGone(this.res)) this.state.admission.release(this.document);
    else serve(this.state, this.req, this.res, this.pathId, this.id, this.write, this.work);
  }

  timeOut(inQueue: boolean): void {
    if (inQueue) {
      this.timedOut = true;
      this.state.admission.cancelled();
    } else this.state.admission.release(this.document);
    if (!isGone(this.res)) reply(this.state, this.req, this.res, 504, handlerErrorBody(this.pathId, `Timeout after ${this.timeoutMs}ms`));
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
