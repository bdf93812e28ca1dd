/** Response bodies of the deployment interface, as far as vespa-bulk reads them; other fields pass through. */

export interface LogEntry {
  time: number;
  level: string;
  message: string;
}

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

export interface ConfigChangeActions {
  restart: ChangeAction[];
  refeed: ChangeAction[];
  reindex: ChangeAction[];
}

export interface UploadResult {
  tenant: string;
  'session-id': string;
  prepared: string;
  content: string;
  message: string;
}

export interface PrepareResult {
  log: LogEntry[];
  configChangeActions: ConfigChangeActions;
  tenant: string;
  'session-id': string;
  message: string;
  activate?: string;
}

export interface ActivateResult {
  tenant: string;
  'session-id': string;
  message: string;
  url: string;
  application?: { id?: string; generation?: number; [k: string]: unknown };
}

export interface PrepareAndActivateResult {
  log: LogEntry[];
  message: string;
  'session-id': string;
  activated: boolean;
  tenant: string;
  url: string;
  configChangeActions: ConfigChangeActions;
}

export interface ApplicationStatus {
  generation: number;
  applicationPackageFileReference: string;
  modelVersions?: string[];
  /** The interface document's name for the same facts, with generations. */
  versions?: { generation: number; engineVersion: string }[];
}

export interface ServiceConvergence {
  host: string;
  port: number;
  type: string;
  clusterName?: string;
  url: string;
  currentGeneration: number;
}

export interface ConvergenceResult {
  url: string;
  currentGeneration: number;
  wantedGeneration: number;
  converged: boolean;
  services: ServiceConvergence[];
}

export interface SingleServiceConvergence {
  url: string;
  host: string;
  wantedGeneration: number;
  converged: boolean;
  currentGeneration: number;
}

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

export interface ReindexingStatus {
  enabled: boolean;
  clusters: Record<string, { pending: unknown; ready: Record<string, ReindexingEntry> }>;
}
