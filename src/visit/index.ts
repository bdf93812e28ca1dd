/** Visiting: the library half of `vespa-bulk visit` and the bulk operations. */
export { visit, VisitedDocument, VisitFailedError, type VisitIterable } from './visit.js';
export { exportDocuments, type ExportOptions, type ExportResumed, type ExportSummary } from './export/index.js';
export { defaultSinceMarginMs } from './export/since.js';
export { bulkOperation, type BulkOptions, type BulkSummary, type BulkKind } from './bulk.js';
export {
  startVisit,
  type VisitConsumer,
  type VisitReport,
  type VisitRun,
  type LocalVisitRun,
  type SliceView,
  type InflightReport,
} from './visitor.js';
export type { LimitChange } from '../limit/limit-search.js';
export {
  defaultVisitRetryPolicy,
  defaultVisitSlices,
  defaultAdaptiveStart,
  type AdaptiveSliceOptions,
  type VisitOptions,
  type VisitSelectionOptions,
  type VisitRetryPolicy,
  type SliceResumeState,
  type VisitMessage,
} from './options.js';
export type { SliceReport, SliceStatus } from './slice-visitor.js';
export type { VisitBatch } from './visit-batch.js';
export type { VisitEntry } from '../document/visit-entry.js';
export { parseTimeBound, parseTimeRange } from './time-range.js';
export { outputFormats, type OutputFormat } from '../sinks/output-format.js';
export { readVisitCheckpoint, type VisitCheckpoint, type SliceCheckpoint } from './visit-checkpoint.js';
