/** `bench`: generated load against a cluster, its profiles, and the speedtest source of `feed --speedtest`. */
export { bench, type BenchOptions, type BenchFeedOptions, type BenchResult, type BenchStep } from './bench.js';
export type { Mix } from './operations.js';
export { speedtestSource } from './speedtest.js';
// A document model already read, for `BenchOptions.model`.
export type { DocumentModel, DocumentType } from '../schema/document-model.js';
export type { DataType, PrimitiveName, TensorType, TensorDimension } from '../schema/data-type.js';
