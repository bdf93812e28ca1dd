/** The feeder: `feed(source, options)` and the parts a caller may want to reuse. */
export { Feeder, type FeedOutcome, type FeedProgress, type StopReason } from './feeder.js';
export { feed, createFeeder, resolveWorkers } from './feed.js';
export { WorkerFeeder } from './workers/coordinator.js';
export type { FeedOptions, Compression } from './options.js';
export type { OperationResult } from './operation-result.js';
export type { FeedSummary, FeedCounters } from './stats.js';
export type { FeedSource, InputPosition } from './source.js';
export type { FeedCheckpoint } from './checkpoint.js';
export type { FailureMark } from './failures.js';
export { readFeedCheckpoint } from './checkpoint.js';
export { parseShard, type Shard } from './shard.js';
export { parseOperation, type FeedOperation, type OperationKind } from './operation.js';
