/** Response bodies of the deployment interface, as far as vespa-bulk reads them; other fields pass through. */

/** One line of the config server's prepare log. */
export interface LogEntry {
  time: number;
  level: string;
  message: string;
}

/** One change that needs an action (restart, refeed, reindex), as the config server lists it. */
export interface ChangeAction {
  /** restart: */
  clusterName?: string;
  clusterType?: string;
  serviceType?: string;
  /** refeed and reindex: */
  name?: string;
  documentType?: string;
  messages?: string[];
  services?: { serviceName?: string; serviceType?: string; configId?: string; hostName?: string }[];
}

/** The actions a prepared change needs before it takes full effect. */
export interface ConfigChangeActions {
  restart: ChangeAction[];
  refeed: ChangeAction[];
  reindex: ChangeAction[];
}

/** The new session of an upload. */
export interface UploadResult {
  tenant: string;
  'session-id': string;
  prepared: string;
  content: string;
  message: string;
}

/** The config server's answer to a prepare: its log and the change actions. */
export interface PrepareResult {
  log: LogEntry[];
  configChangeActions: ConfigChangeActions;
  tenant: string;
  'session-id': string;
  message: string;
  activate?: string;
}

/** The config server's answer to an activation. */
export interface ActivateResult {
  tenant: string;
  'session-id': string;
  message: string;
  url: string;
  application?: { id?: string; generation?: number; [k: string]: unknown };
}

/** The answer of the one-request prepare-and-activate. */
export interface PrepareAndActivateResult {
  log: LogEntry[];
  message: string;
  'session-id': string;
  activated: boolean;
  tenant: string;
  url: string;
  configChangeActions: ConfigChangeActions;
}

/** The active application's generation and versions (`getApplication`). */
export interface ApplicationStatus {
  generation: number;
  applicationPackageFileReference: string;
  modelVersions?: string[];
  /** The interface document's name for the same facts, with generations. */
  versions?: { generation: number; engineVersion: string }[];
}

/** One service in a ConvergenceResult. */
export interface ServiceConvergence {
  host: string;
  port: number;
  type: string;
  clusterName?: string;
  url: string;
  currentGeneration: number;
}

/** Whether every service runs the wanted config generation. */
export interface ConvergenceResult {
  url: string;
  currentGeneration: number;
  wantedGeneration: number;
  converged: boolean;
  services: ServiceConvergence[];
}

/** The convergence of one service (`getServiceConvergence`). */
export interface SingleServiceConvergence {
  url: string;
  host: string;
  wantedGeneration: number;
  converged: boolean;
  currentGeneration: number;
}

/** Reindexing progress of one document type. */
export interface ReindexingEntry {
  readyMillis?: number;
  startedMillis?: number;
  endedMillis?: number;
  state?: string;
  progress?: number;
  speed?: number;
  cause?: string;
  message?: string;
}

/** Reindexing progress per cluster and document type. */
export interface ReindexingStatus {
  enabled: boolean;
  clusters: Record<string, { pending: unknown; ready: Record<string, ReindexingEntry> }>;
}
