import type { VisitEntry } from '../document/visit-entry.js';

/** New documents of one slice, in the order the service sent them. */
export interface VisitBatch {
  slice: number;
  entries: VisitEntry[];
}
