import { maxQueueAgeMs } from '../admission.js';
import { isGone, type AnyRequest, type AnyResponse } from '../http/http-response.js';
import { serve } from './fault-injection.js';
import type { HandlerState, Work } from './handler-state.js';
import { reply } from './replies.js';
import { handlerErrorBody } from './responses.js';

/**
 * Admission, then service: a full queue or an aged one is 429, a wait longer than the request's timeout 504;
 * otherwise the work is served after its turn (at once when no rate or latency is set). Streamed visits stay
 * admitted until their last byte.
 */
export function admit(state: HandlerState, req: AnyRequest, res: AnyResponse, pathId: string, id: string | undefined, write: boolean, timeoutMs: number, work: Work): void {
  const { admission } = state;
  if (!admission.tryAdmit()) {
    reply(state, req, res, 429, handlerErrorBody(pathId, `Rejecting execution due to overload: ${admission.queueLimit} requests already enqueued`));
    return;
  }
  const delay = admission.delayMs();
  if (delay < 0) {
    admission.release();
    reply(state, req, res, 429, handlerErrorBody(pathId, `Rejecting execution due to overload: ${(maxQueueAgeMs / 1000).toFixed(1)} seconds worth of work enqueued`));
    return;
  }
  if (delay === 0) {
    serve(state, req, res, pathId, id, write, work);
    return;
  }
  if (delay >= timeoutMs) {
    setTimeout(() => {
      admission.release();
      if (!isGone(res)) reply(state, req, res, 504, handlerErrorBody(pathId, `Timeout after ${timeoutMs}ms`));
    }, timeoutMs);
    return;
  }
  setTimeout(() => {
    // A request abandoned while it queued is not dispatched, as in the service.
    if (isGone(res)) admission.release();
    else serve(state, req, res, pathId, id, write, work);
  }, delay);
}
