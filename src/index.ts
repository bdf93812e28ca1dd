/**
 * vespa-bulk as a library. The CLI (`vespa-bulk`) is a thin shell over these exports.
 */
export { VespaBulkError, errorCodes, isVespaBulkError, describePlace, type ErrorCode, type ErrorPlace } from './errors.js';
export {
  parseDocumentId,
  formatDocumentId,
  toDocumentPath,
  toVisitPath,
  encodePathSegment,
  type DocumentId,
} from './document/id.js';
export { tensorFormats, type TensorFormat } from './document/tensor-format.js';
export type { Protocol, WireProtocol } from './http/transport.js';
export { retryDelay, defaultRetryPolicy, parseRetryAfter, type RetryPolicy, type RetryInput } from './http/retry-delay.js';
export { parseSelection, evaluateSelection, compileSelection, type Selection, type SelectionDocument, type SelectionContext } from './selection/index.js';
export { connectOptions, securityHeaders, type SecurityOptions } from './http/tls.js';

// The simulator.
export { startSimulator, type Simulator, type SimulatorOptions } from './simulator/simulator.js';
export { startDocumentServer, type DocumentServer, type DocumentServerOptions, type ServerStats } from './simulator/document-api/document-server.js';
export type { InProgressCounts } from './simulator/http/in-progress.js';
export type { QueueCounts } from './simulator/admission.js';
export { type FaultSettings } from './simulator/faults.js';
export { startConfigServer, type ConfigServer, type ConfigServerOptions } from './simulator/config-server/config-server.js';
export type { ServerTlsOptions } from './simulator/http/auth.js';

// Deployment.
export * from './deploy/index.js';

// Feeding.
export {
  feed,
  Feeder,
  readCheckpoint,
  parseShard,
  parseOperation,
  type FeedOptions,
  type FeedSummary,
  type FeedCounters,
  type FeedOutcome,
  type StopReason,
  type InputPosition,
  type FeedProgress,
  type OperationResult,
  type FeedSource,
  type Compression,
  type Checkpoint,
  type FailureMark,
  type Shard,
  type FeedOperation,
  type OperationKind,
} from './feed/index.js';
export { DocumentClient, type DocumentClientOptions, type DocumentParams, type DocumentResponse } from './http/document-client.js';
export { waitForEndpoint, type WaitForEndpointOptions, type EndpointAnswer } from './http/wait-for-endpoint.js';

// Visiting, bulk operations and migration.
export * from './visit/index.js';

// The content clusters of a service, as a whole-cluster visit finds them.
export { discoverContentClusters, clustersFromMessage, type DiscoverOptions } from './visit/discover-cluster.js';

// Benchmarking a cluster: generated load, its profiles, and the speedtest of `feed --speedtest`.
export {
  bench,
  isHeld,
  highestHeldRate,
  minAchievedShare,
  parseRates,
  parseRamp,
  parseMix,
  speedtestSource,
  type BenchOptions,
  type BenchFeedOptions,
  type BenchResult,
  type BenchStep,
  type HeldCriteria,
  type StepFigures,
  type Mix,
} from './bench/index.js';
export type { LatencyFigures } from './feed/stats.js';

// Checking a corpus against an application package's schemas, as the cluster would, without a cluster.
export { validate, type ValidateOptions, type ValidateOutcome, type ValidateSummary, type Refusal } from './validate/validate.js';
export type { DocumentModel, DocumentType } from './schema/document-model.js';
export type { DataType, PrimitiveName, TensorType, TensorDimension } from './schema/data-type.js';

// Recording a run: per-second stats, the HTML report, the Prometheus endpoint.
export * from './report/index.js';
