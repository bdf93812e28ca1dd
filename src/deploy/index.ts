export { deploy, type DeployOptions, type DeployResult } from './deploy.js';
export { uploadPackage, prepareSession, activateSession, prepareAndActivate, type PrepareOptions } from './session.js';
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
} from './application.js';
export {
  getConvergence,
  getServiceConvergence,
  waitForConvergence,
  waitForServiceConvergence,
  type ConvergenceQuery,
  type WaitForConvergenceOptions,
} from './converge.js';
export { readPackage, type PackageUpload } from './package.js';
export { rememberSession, recallSession, sessionStateFile, type RememberedSession } from './session-state.js';
export { DeployError, configRequest, type ConfigRequest, type ConfigResponse } from './config-request.js';
export { resolveTarget, applicationPath, defaultConfigUrl, type DeployTarget, type ResolvedTarget } from './target.js';
export type * from './types.js';
