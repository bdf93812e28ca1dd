/**
 * `vespa-bulk`: the library's root entry, what a program that moves documents in and out of Vespa imports:
 * feeding, visiting and exporting, bulk operations, migrating, comparing, single documents, deployment,
 * validation, the errors and their codes, document ids and the selection language.
 *
 * The other entries load apart, so importing this one loads neither the simulator nor the report:
 * `vespa-bulk/simulator` (a local cluster), `vespa-bulk/report` (recording a run, the HTML report,
 * the metrics endpoint) and `vespa-bulk/bench` (generated load and the speedtest).
 *
 * These names are the published contract, pinned by test/architecture/public-api.txt. The CLI is not built on
 * this entry: it imports the modules it needs by path (src/cli/main.ts, which is not part of the contract).
 */

// Errors: every error is a VespaBulkError with a stable code.
export { VespaBulkError, errorCodes, isVespaBulkError, type ErrorCode, type ErrorPlace } from './core/errors.js';
export { OptionError } from './core/options-check.js';
export { TransportError, type TransportFailure } from './http/transport-error.js';

// Feeding.
export { feed, Feeder, type FeedOutcome, type FeedProgress } from './feed/feeder.js';
export type { StopReason } from './feed/driver.js';
export type { FeedOptions, Compression } from './feed/options.js';
export type { FeedSummary, FeedCounters } from './feed/stats.js';
export type { FeedOperationObject, FeedSource, InputPosition, OpenPosition } from './feed/source.js';
export type { OperationResult } from './feed/operation-result.js';
export { readFeedCheckpoint, type FeedCheckpoint } from './feed/feed-checkpoint.js';
export type { InputIdentity } from './feed/input-identity.js';
export type { SameFailureVerdict } from './feed/same-failure.js';
export type { QueueReading } from './feed/throttle.js';
export type { FailureMark } from './feed/failures.js';
export { parseShard, type Shard } from './feed/shard.js';
export type { OperationKind } from './document/operation.js';
export type { LatencyFigures } from './feed/stats.js';
export type { RecordedOptions } from './feed/recorded-options.js';
export type { TransformFunction, TransformResult, TransformSpec, OperationObject } from './transform/transform.js';
// Tables (CSV, TSV, Parquet) as feed input: how rows become operations.
export type { RowOptions } from './tabular/row-operation.js';
export type { InputFormat } from './tabular/input-format.js';
export type { TimestampUnit } from './tabular/json-value.js';

// Single documents.
export {
  DocumentClient,
  type DocumentClientOptions,
  type DocumentParams,
  type DocumentResponse,
} from './http/document-client.js';
export { waitForEndpoint, type WaitForEndpointOptions, type EndpointAnswer } from './http/wait-for-endpoint.js';
export { parseDocumentId, formatDocumentId, type DocumentId } from './document/id.js';
export { tensorFormats, type TensorFormat } from './document/tensor-format.js';

// Visiting, exporting, bulk operations and migration.
export {
  visit,
  VisitedDocument,
  VisitFailedError,
  type VisitIterable,
  type VisitedPut,
  type VisitedRemove,
} from './visit/visit.js';
export { exportDocuments, type ExportOptions, type ExportResumed, type ExportSummary } from './visit/export/index.js';
export { bulkOperation, type BulkOptions, type BulkSummary, type BulkKind } from './visit/bulk.js';
export { migrate, type MigrateOptions, type MigrateSummary } from './migrate/migrate.js';
export type { MigrateVerifyOptions } from './migrate/migrate-verify.js';
export type { VisitReport, VisitRun, SliceView, InflightReport } from './visit/visitor.js';
export type { LimitChange } from './limit/limit-search.js';
export {
  defaultVisitSlices,
  defaultVisitRetryPolicy,
  defaultAdaptiveStart,
  type AdaptiveSliceOptions,
  type VisitOptions,
  type VisitSelectionOptions,
  type VisitRetryPolicy,
  type SliceResumeState,
  type VisitMessage,
} from './visit/options.js';
export { defaultSinceMarginMs } from './visit/export/since.js';
export type { SliceReport, SliceStatus } from './visit/slice-visitor.js';
export type { OutputFormat } from './sinks/output-format.js';
export { readVisitCheckpoint, type VisitCheckpoint, type SliceCheckpoint } from './visit/visit-checkpoint.js';

// The selection language: check a selection before a visit or a bulk operation, or apply one to documents here.
export {
  parseSelection,
  compileSelection,
  type Selection,
  type SelectionDocument,
  type SelectionContext,
} from './selection/index.js';

// Comparing two corpora, clusters or exports, by meaning.
export { compare, type CompareSummary, type CompareSideSummary, type TypeComparison } from './compare/compare.js';
export {
  defaultComparePartitions,
  type CompareOptions,
  type CompareSide,
  type CompareClusterSide,
  type CompareExportSide,
  type CompareProgress,
} from './compare/options.js';

// Deployment: the whole of `deploy`, its steps, and the application's other config server calls.
export { deploy, type DeployOptions, type DeployResult } from './deploy/deploy.js';
export {
  uploadPackage,
  prepareSession,
  activateSession,
  prepareAndActivate,
  type PrepareOptions,
} from './deploy/session.js';
export {
  getApplication,
  deleteApplication,
  listContent,
  readContent,
  restartServices,
  triggerReindex,
  getReindexing,
  type RestartOptions,
  type ReindexOptions,
} from './deploy/application.js';
export {
  getConvergence,
  getServiceConvergence,
  waitForConvergence,
  waitForServiceConvergence,
  type ConvergenceQuery,
  type WaitForConvergenceOptions,
} from './deploy/converge.js';
export type { PackageUpload } from './deploy/package.js';
export { DeployError } from './deploy/config-request.js';
export type { DeployTarget } from './deploy/target.js';
export type * from './deploy/types.js';

// Checking a corpus against an application package's schemas, as the cluster would, without a cluster.
export {
  validate,
  type ValidateOptions,
  type ValidateOutcome,
  type ValidateSummary,
  type Refusal,
} from './validate/validate.js';

// The transport, for a caller that shares one between calls or sets what the calls' options do not.
export { createTransport } from './http/create-transport.js';
export type {
  Protocol,
  WireProtocol,
  Transport,
  TransportOptions,
  TransportRequest,
  BodyFrame,
  TransportStats,
  ResponseHandler,
  RequestControl,
  TlsOptions,
} from './http/transport.js';
export type { ConnectionOptions } from './http/connection-options.js';
export type { SecurityOptions } from './http/tls.js';
export { proxyFor, type ProxySetting, type ProxyRoute } from './http/proxy/proxy-route.js';
export type { RetryPolicy } from './http/retry-delay.js';
