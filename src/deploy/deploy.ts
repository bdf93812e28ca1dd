import { checkDuration } from '../core/options-check.js';
import { waitForConvergence } from './converge.js';
import { readPackage, type PackageUpload } from './package.js';
import { activateSession, prepareSession, uploadPackage, type PrepareOptions } from './session.js';
import type { DeployTarget } from './target.js';
import type { ActivateResult, ConvergenceResult, PrepareResult, UploadResult } from './types.js';

export interface DeployOptions extends PrepareOptions {
  /** After activation, wait this long for services to converge; 0 or undefined = do not wait. */
  waitSeconds?: number;
  /** Reports each finished step (progress output). */
  onStep?: (step: 'upload' | 'prepare' | 'activate', result: UploadResult | PrepareResult | ActivateResult) => void;
  /** Called with each convergence poll while waiting (progress output). */
  onConvergencePoll?: (result: ConvergenceResult) => void;
}

/** What each step of `deploy()` answered, and the convergence when waited for. */
export interface DeployResult {
  package: Pick<PackageUpload, 'source' | 'files'>;
  upload: UploadResult;
  prepare: PrepareResult;
  activate: ActivateResult;
  /** Present when waitSeconds was given. */
  convergence?: ConvergenceResult;
}

/**
 * Deploys an application package in the three steps of the interface (upload, prepare, activate) so that a
 * failure names the step, then optionally waits for the services to converge on the new generation.
 * @example
 * ```ts
 * import { deploy } from 'vespa-bulk';
 *
 * const result = await deploy({ configUrl: 'http://127.0.0.1:19071' }, 'app/', { waitSeconds: 300 });
 * console.log(result.activate['session-id'], result.convergence?.converged);
 * ```
 */
export async function deploy(target: DeployTarget, path: string, options: DeployOptions = {}): Promise<DeployResult> {
  // Before anything is uploaded: a bad wait found after activation would leave the caller unsure what happened.
  checkDuration(options, 'waitSeconds');
  checkDuration(options, 'timeoutSeconds', true);
  const pkg = await readPackage(path);
  const upload = await uploadPackage(target, pkg);
  options.onStep?.('upload', upload);
  const prepare = await prepareSession(target, upload['session-id'], options);
  options.onStep?.('prepare', prepare);
  const activate = await activateSession(target, upload['session-id']);
  options.onStep?.('activate', activate);
  const result: DeployResult = { package: { source: pkg.source, files: pkg.files }, upload, prepare, activate };
  if (options.waitSeconds !== undefined && options.waitSeconds > 0) {
    result.convergence = await waitForConvergence(target, {
      timeoutMs: options.waitSeconds * 1000,
      generation: activate.application?.generation,
      onPoll: options.onConvergencePoll,
    });
  }
  return result;
}
