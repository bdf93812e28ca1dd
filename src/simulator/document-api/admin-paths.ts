import type { QueueCounts } from '../admission.js';
import type { BucketLockCounts } from '../bucket-locks.js';
import { validateFaultPatch } from '../faults.js';
import type { InProgressCounts } from '../http/in-progress.js';
import { readRequestBody } from '../http/request-body.js';
import type { DocumentRequest, HandlerState } from './handler-state.js';
import { methodNotAllowed, notFound, refuseBody, reply } from './replies.js';
import { handlerErrorBody } from './responses.js';

/** What a document server has seen: requests in progress (per connection and overall) and its handler's queue. */
export interface ServerStats extends InProgressCounts {
  queue: QueueCounts;
  /** The content nodes' bucket locks: held, waited for now, and how many writes waited. */
  bucketLocks: BucketLockCounts;
  /**
   * The content nodes' visiting since the start: `iterated` counts the stored entries (tombstones included) that
   * visit requests walked through, those of each request's bucket space and slice, whether they matched or not.
   */
  visits: { iterated: number };
}

export function serverStats(state: HandlerState): ServerStats {
  return {
    ...state.inProgress.counts(),
    queue: state.admission.counts(),
    bucketLocks: state.bucketLocks.counts(),
    visits: { iterated: state.visitCost.iterated },
  };
}

/**
 * The simulator's own paths under /_sim/ (never subject to faults): `GET|PUT /_sim/faults` reads or merges the
 * fault settings, `GET|DELETE /_sim/documents` counts or clears the stored documents, `GET /_sim/stats` tells
 * what is in progress (this request included) and `DELETE /_sim/stats` starts its maxima afresh.
 */
export function adminPath(request: DocumentRequest): void {
  const { state, req, pathId } = request;
  if (pathId === '/_sim/faults') {
    if (req.method === 'GET') {
      reply(request, 200, JSON.stringify(state.faults.get()));
      return;
    }
    if (req.method === 'PUT' || req.method === 'POST') {
      readRequestBody(req, state.maxBodyBytes, (body) => patchFaults(request, body), refuseBody, request);
      return;
    }
    methodNotAllowed(request, ['GET', 'PUT']);
    return;
  }
  if (pathId === '/_sim/stats') {
    if (req.method === 'DELETE') state.inProgress.reset();
    if (req.method === 'GET' || req.method === 'DELETE') reply(request, 200, JSON.stringify(serverStats(state)));
    else methodNotAllowed(request, ['DELETE', 'GET']);
    return;
  }
  if (pathId === '/_sim/documents') {
    if (req.method === 'DELETE') {
      const removed = state.store.size();
      state.store.clear();
      reply(request, 200, JSON.stringify({ removed }));
      return;
    }
    if (req.method === 'GET') {
      const counts: Record<string, number> = {};
      for (const name of state.store.clusterNames) counts[name] = state.store.size(name);
      reply(request, 200, JSON.stringify({ documents: state.store.size(), clusters: counts }));
      return;
    }
    methodNotAllowed(request, ['GET', 'DELETE']);
    return;
  }
  notFound(request);
}

function patchFaults(request: DocumentRequest, body: Buffer): void {
  const { state, pathId } = request;
  let patch: unknown;
  try {
    patch = JSON.parse(body.toString('utf8'));
  } catch (err) {
    reply(request, 400, handlerErrorBody(pathId, `Failed parsing JSON: ${(err as Error).message}`));
    return;
  }
  const problem = validateFaultPatch(patch);
  if (problem !== undefined) reply(request, 400, handlerErrorBody(pathId, problem));
  else reply(request, 200, JSON.stringify(state.faults.set(patch as object)));
}
