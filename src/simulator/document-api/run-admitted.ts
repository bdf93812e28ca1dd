import { closeWhenClientLeaves, cutExchange, isGone, sendThenCut, writeChunk } from '../http/http-response.js';
import { feedBlockMessage, injectedErrorMessage } from '../faults.js';
import type { DocumentRequest, Job } from './handler-state.js';
import { executeOperation } from './operations.js';
import { reply, replyError } from './replies.js';
import { handlerErrorBody, idBody, jsonContentType, storageErrorBody } from './responses.js';

/**
 * Runs an admitted request: the injected faults that replace the work (stall, garbage, an error status, feed
 * block) are drawn first, then the work runs. The content nodes' room is released when the answer is done (for
 * a stall, when the client gives up).
 */
export function runAdmitted(request: DocumentRequest, job: Job): void {
  const { state, req, res, pathId } = request;
  const { id, write, work } = job;
  const { faults, admission } = state;
  let pending: void | Promise<void> = undefined;
  try {
    const fault = faults.drawResponseFault();
    const injected = fault === undefined ? faults.drawError() : 0;
    if (fault === 'stall') {
      // Accepted and never answered; its room at the content nodes is held until the client gives up.
      pending = isGone(res) ? undefined : new Promise<void>((resolve) => res.once('close', () => resolve()));
      if (pending !== undefined) closeWhenClientLeaves(res);
      if (state.log !== undefined) state.log(`${req.method} ${req.url} (stalled)`);
    } else if (fault === 'garbage') {
      const garbage = faults.nextGarbageBody();
      res.writeHead(200, { 'content-type': garbage.contentType, 'content-length': Buffer.byteLength(garbage.body) });
      res.end(garbage.body);
      if (state.log !== undefined) state.log(`${req.method} ${req.url} 200 (not JSON)`);
    } else if (injected !== 0) {
      const message = injectedErrorMessage(injected);
      // 503 comes from the HTTP layer and 429 from the handler queue; the rest from storage, with the id.
      if (id === undefined || injected === 503) reply(request, injected, handlerErrorBody(pathId, message));
      else reply(request, injected, storageErrorBody(pathId, id, message));
    } else if (write && faults.current.feedBlock && !freesSpace(work)) {
      faults.note('feed-block');
      if (id === undefined) reply(request, 500, handlerErrorBody(pathId, feedBlockMessage));
      else reply(request, 507, storageErrorBody(pathId, id, feedBlockMessage));
    } else if (typeof work === 'function') {
      pending = work();
    } else if (work.kind !== 'get' && work.dryRun) {
      reply(request, 200, idBody(pathId, work.id));
    } else {
      const result = executeOperation(work);
      answer(request, result.status, result.body, result.headers);
    }
  } catch (err) {
    replyError(request, err);
  }
  // A single-document operation gives its room at the content nodes back (admit.ts); visits and bulk runs took none.
  const document = id !== undefined;
  if (pending === undefined) admission.release(document);
  else
    pending.then(
      () => admission.release(document),
      (err: unknown) => {
        admission.release(document);
        replyError(request, err);
      },
    );
}

/** Answers work that was done, unless a truncate or close fault loses the answer on the way. */
export function answer(request: DocumentRequest, status: number, body: string, headers?: Record<string, string>): void {
  const { state, req, res } = request;
  if (isGone(res)) return;
  if (state.faults.drawTruncate()) {
    // The whole body, but a length that promises more: the client waits for bytes that never come, then the cut.
    res.writeHead(status, { 'content-type': jsonContentType, 'content-length': Buffer.byteLength(body) + 64 });
    writeChunk(res, body, () => cutExchange(res));
    if (state.log !== undefined) state.log(`${req.method} ${req.url} ${status} (cut short)`);
  } else if (state.faults.drawClose()) {
    sendThenCut(res, status, body);
    if (state.log !== undefined) state.log(`${req.method} ${req.url} ${status} (connection cut)`);
  } else reply(request, status, body, headers);
}

/**
 * Whether a write goes through a feed block: a remove does, since it frees what the block is about (the distributors
 * reject puts and most updates, not removes: docs.vespa.ai, "Feed block").
 */
function freesSpace(work: Job['work']): boolean {
  return typeof work === 'object' && work.kind === 'remove';
}
