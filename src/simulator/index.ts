/**
 * `vespa-bulk/simulator`: a local stand-in for a Vespa cluster's /document/v1 interface and config server,
 * for tests and demos. The root entry (`vespa-bulk`) does not load it.
 */
export { startSimulator, type Simulator, type SimulatorOptions } from './simulator.js';
export {
  startDocumentServer,
  type DocumentServer,
  type DocumentServerOptions,
  type ServerStats,
} from './document-api/document-server.js';
export type { InProgressCounts } from './http/in-progress.js';
export { defaultHeapMb, type QueueCounts } from './admission.js';
export { defaultBucketBits, type BucketLockCounts } from './bucket-locks.js';
export { type FaultSettings } from './faults.js';
export { startConfigServer, type ConfigServer, type ConfigServerOptions } from './config-server/config-server.js';
export type { ServerTlsOptions } from './http/auth.js';
