import type { DocumentModel } from '../../schema/document-model.js';
import type { AnyRequest, AnyResponse } from '../http/http-response.js';
import type { Admission } from '../admission.js';
import type { BucketLocks } from '../bucket-locks.js';
import type { Faults } from '../faults.js';
import type { InProgress } from '../http/in-progress.js';
import type { DocumentStore } from './document-store.js';
import type { PreparedOperation } from './operations.js';
import type { SelectionCache } from './selection-cache.js';
import type { VisitCost } from './visit-cost.js';

/** What one simulated container's request handler works on; each document server has its own. */
export interface HandlerState {
  store: DocumentStore;
  faults: Faults;
  admission: Admission;
  /** The content nodes' bucket locks: writes to one bucket are processed one at a time. */
  bucketLocks: BucketLocks;
  /** The port's requests in progress (HTTP/1.1 one at a time per connection). */
  inProgress: InProgress;
  /** null: any document type is accepted (nothing deployed yet). */
  documentTypes: Set<string> | null;
  globalTypes: Set<string>;
  /** The deployed package's document model: puts and updates are judged against it. null: nothing deployed. */
  model: DocumentModel | null;
  /** Compiled selections and conditions, by text. */
  selections: SelectionCache;
  maxBodyBytes: number;
  visitChunkDocuments: number;
  /** The content nodes' time to iterate visited documents (off unless `visitCostUs` is set). */
  visitCost: VisitCost;
  log: ((line: string) => void) | undefined;
}

/** What an admitted request does: a single-document operation, or a visit/bulk run (possibly async). */
export type Work = PreparedOperation | (() => void | Promise<void>);

/**
 * One request to the document handler, made once when it arrives and handed down to everything that answers it,
 * in place of the handler state, request, response and path as separate arguments.
 */
export interface DocumentRequest {
  readonly state: HandlerState;
  readonly req: AnyRequest;
  readonly res: AnyResponse;
  /** The path, without the query. */
  readonly pathId: string;
}

/** What `admit` is given to admit: the work, and what the queue and the content nodes need to know of it. */
export interface Job {
  /** The document, for a single-document operation (it takes room at the content nodes); undefined for visits and bulk runs. */
  id: string | undefined;
  /** A write: refused while feed is blocked. */
  write: boolean;
  timeoutMs: number;
  work: Work;
  /** The operation's estimated size: its body's length. */
  bytes: number;
}
