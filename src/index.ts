/**
 * `vespa-bulk`: the library's root entry: feeding, visiting (with the bulk operations and migration), single
 * documents, deployment and validation. The CLI (`vespa-bulk`) is a thin shell over the package's entries.
 *
 * The other entries load apart, so importing this one loads neither the simulator nor the report:
 * `vespa-bulk/simulator` (a local cluster), `vespa-bulk/report` (recording a run, the HTML report,
 * the metrics endpoint) and `vespa-bulk/bench` (generated load and the speedtest).
 */
export { VespaBulkError, errorCodes, isVespaBulkError, describePlace, type ErrorCode, type ErrorPlace } from './core/errors.js';
export { OptionError } from './core/options-check.js';
export {
  parseDocumentId,
  formatDocumentId,
  toDocumentPath,
  toVisitPath,
  encodePathSegment,
  type DocumentId,
} from './document/id.js';
export { tensorFormats, type TensorFormat } from './document/tensor-format.js';
export { answerMessage, statusMessage } from './document/answer-message.js';
export { createTransport, defaultH2Connections } from './http/create-transport.js';
export type {
  Protocol,
  WireProtocol,
  Transport,
  TransportOptions,
  TransportRequest,
  TransportStats,
  ResponseHandler,
  RequestControl,
  TlsOptions,
} from './http/transport.js';
export { TransportError, type TransportFailure } from './http/transport-error.js';
export { send, exchange, type RawResponse, type Exchange, type BodyReader } from './http/exchange.js';
export { retryDelay, defaultRetryPolicy, parseRetryAfter, type RetryPolicy, type RetryInput } from './http/retry-delay.js';
export { parseSelection, evaluateSelection, compileSelection, type Selection, type SelectionDocument, type SelectionContext } from './selection/index.js';
export {
  connectOptions,
  securityHeaders,
  needsTlsMaterial,
  isInlinePem,
  isAuthFailure,
  authFailureHint,
  redact,
  type SecurityOptions,
} from './http/tls.js';
export { maskHeaders } from './http/headers.js';
export { describeEndpoint } from './http/reachability.js';
export { writeFileAtomically, removeLeftoverTemporaryFiles } from './fs/atomic-write.js';

// Deployment.
export * from './deploy/index.js';

// Feeding.
export {
  feed,
  Feeder,
  readFeedCheckpoint,
  parseShard,
  parseOperation,
  type FeedOptions,
  type FeedSummary,
  type FeedCounters,
  type FeedOutcome,
  type StopReason,
  type InputPosition,
  type OpenPosition,
  type FeedProgress,
  type OperationResult,
  type FeedSource,
  type Compression,
  type FeedCheckpoint,
  type FailureMark,
  type Shard,
  type FeedOperation,
  type OperationKind,
} from './feed/index.js';
export type { LatencyFigures } from './feed/stats.js';
// Tables (CSV, TSV, Parquet) as feed input: how rows become operations.
export type { RowOptions } from './tabular/row-operation.js';
export { inputFormats, type InputFormat } from './tabular/input-format.js';
export type { TimestampUnit } from './tabular/json-value.js';
export { checkFeedOptions } from './feed/options.js';
export { checkResumable } from './feed/feed-checkpoint.js';
export { resumedOptions, ResumeConflictError, type RecordedFeed, type RecordedOptions, type SendingOptions } from './feed/recorded-options.js';
export { loadTransform, type TransformFunction, type TransformResult, type TransformSpec, type OperationObject } from './feed/transform.js';
// One document's operation from a command line's words (what the single-document commands take).
export {
  checkGivenId,
  conditionAndCreate,
  singleOperationOf,
  splitPositionals,
  fieldsTextOf,
  type SingleOperation,
  type SingleOperationInput,
  type OperationMeta,
} from './document/single-operation.js';
export { DocumentClient, type DocumentClientOptions, type DocumentParams, type DocumentResponse } from './http/document-client.js';
export { waitForEndpoint, type WaitForEndpointOptions, type EndpointAnswer } from './http/wait-for-endpoint.js';

// Visiting, bulk operations and migration.
export * from './visit/index.js';
export { bucketSpacesOf, checkVisitOptionValues, parseDocumentSpec, slicesOf } from './visit/query.js';

// The content clusters of a service, as a whole-cluster visit finds them.
export { discoverContentClusters, clustersFromMessage, type DiscoverOptions } from './visit/discover-cluster.js';

// Checking a corpus against an application package's schemas, as the cluster would, without a cluster.
export { validate, type ValidateOptions, type ValidateOutcome, type ValidateSummary, type Refusal } from './validate/validate.js';
export type { DocumentModel, DocumentType } from './schema/document-model.js';
export type { DataType, PrimitiveName, TensorType, TensorDimension } from './schema/data-type.js';

// Comparing two corpora, clusters or exports, by meaning.
export * from './compare/index.js';
