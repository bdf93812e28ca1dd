import type { DocumentModel } from '../../schema/document-model.js';
import type { Admission } from '../admission.js';
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
