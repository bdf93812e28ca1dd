import type { QueryParameters } from './query-parameters.js';
import { encodeContinuation, fieldsJsonOf, fieldsOf, type ClusterStore, type StoredEntry } from './document-store.js';
import { applyUpdate } from './update-ops.js';
import type { VisitScope } from './visit-plan.js';
import { maxScannedPerRequest } from './visit-handler.js';

/**
 * Bulk operations by selection: update-where (PUT), delete-where (DELETE) and copy (POST) on a collection path
 * or the root. Each request works through one chunk and answers `{"pathId","documentCount"}` plus a
 * continuation while more remains; the client repeats the request with it until none comes back.
 */
export type BulkOperation =
  | { kind: 'update'; fields: unknown }
  | { kind: 'delete' }
  | { kind: 'copy'; destination: ClusterStore };

/**
 * What the three share, in the service's order (after what each checks first: copy its destination cluster,
 * update-where its cluster): the parameters they refuse, then the selection, then the cluster, each required even
 * with one content cluster. Returns the cluster's name.
 */
export function checkBulkParameters(query: QueryParameters, pathId: string): string {
  query.disallow(pathId, 'concurrency', 'fieldSet', 'route', 'wantedDocumentCount');
  query.require('selection', pathId);
  return query.require('cluster', pathId);
}

/**
 * Runs one chunk: at most `chunkDocuments` matching documents, or `timeChunkMs` of work, whichever ends
 * first. Update-where applies the update to each matching document (a document that no longer exists is
 * skipped, as the service's races allow); delete-where leaves tombstones; copy writes to the destination.
 */
export function runBulkChunk(
  scope: VisitScope,
  operation: BulkOperation,
  chunkDocuments: number,
  timeChunkMs: number,
): string {
  const deadline = performance.now() + timeChunkMs;
  const { ordered, accepts, cluster } = scope;
  let count = 0;
  let i = scope.start;
  const end = Math.min(ordered.length, scope.start + maxScannedPerRequest);
  for (; i < end && count < chunkDocuments; i++) {
    const e = ordered[i];
    if (!e.removed && accepts(e)) {
      apply(cluster, e, operation);
      count++;
    }
    if ((i & 1023) === 0 && performance.now() > deadline) {
      i++;
      break;
    }
  }
  let body = `{"pathId":${JSON.stringify(scope.pathId)},"documentCount":${count}`;
  if (i < ordered.length) {
    const last = ordered[Math.max(scope.start, i - 1)];
    body += `,"continuation":${JSON.stringify(encodeContinuation({ bucket: last.bucket, id: last.id }))}`;
  }
  return `${body}}`;
}

function apply(cluster: ClusterStore, entry: StoredEntry, operation: BulkOperation): void {
  switch (operation.kind) {
    case 'update':
      cluster.put(entry.id, applyUpdate(fieldsOf(entry), operation.fields));
      return;
    case 'delete':
      cluster.remove(entry.id);
      return;
    case 'copy':
      operation.destination.put(entry.id, undefined, operation.destination.clock.now(), fieldsJsonOf(entry));
      return;
  }
}
