/** The feeder: `feed(source, options)` and the parts a caller may want to reuse. */
export { Feeder } from './feeder.js';
export type { FeedOutcome, FeedProgress, StopReason } from './feeder.js';
export { feed, resolveWorkers } from './feeder.js';
export type { FeedOptions, Compression } from './options.js';
export type { OperationResult } from './operation-result.js';
export type { FeedSummary, FeedCounters } from './stats.js';
export type { FeedSource, InputPosition, OpenPosition } from './source.js';
export type { FeedCheckpoint } from './feed-checkpoint.js';
export type { FailureMark } from './failures.js';
export { readFeedCheckpoint } from './feed-checkpoint.js';
export { parseShard, type Shard } from './shard.js';
export { parseOperation, type FeedOperation, type OperationKind } from '../document/operation.js';
export {
  loadTransform,
  type TransformFunction,
  type TransformResult,
  type TransformSpec,
  type OperationObject,
} from '../transform/transform.js';
