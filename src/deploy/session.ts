import { checkDuration } from '../core/options-check.js';
import { configRequest, jsonObject } from './config-request.js';
import { readPackage, type PackageUpload } from './package.js';
import { resolveTarget, tenantPath, type DeployTarget } from './target.js';
import type { ActivateResult, PrepareAndActivateResult, PrepareResult, UploadResult } from './types.js';

/** The three steps of a deployment (upload, prepare, activate), each one request. */

export interface PrepareOptions {
  /** Turn validation errors that an override could allow into warnings. */
  ignoreValidationErrors?: boolean;
  /** Target engine version; default the config server's current one. */
  vespaVersion?: string;
  /** Seconds the config server may spend preparing (its default is 360). */
  timeoutSeconds?: number;
  /** Validate and report, change nothing. */
  dryRun?: boolean;
  /** Ask for the detailed (FINE) log lines too. */
  verbose?: boolean;
}

/**
 * Uploads a package (a directory, a .zip, or an already read PackageUpload) and returns the new session.
 * @example
 * ```ts
 * import { activateSession, prepareSession, uploadPackage } from 'vespa-bulk';
 *
 * const target = { configUrl: 'http://127.0.0.1:19071' };
 * const { 'session-id': session } = await uploadPackage(target, 'app.zip');
 * await prepareSession(target, session);
 * await activateSession(target, session);
 * ```
 */
export async function uploadPackage(target: DeployTarget, pkg: string | PackageUpload): Promise<UploadResult> {
  const t = resolveTarget(target);
  const upload = typeof pkg === 'string' ? await readPackage(pkg) : pkg;
  const response = await configRequest(t, {
    step: 'upload',
    method: 'POST',
    path: `${tenantPath(t)}/session`,
    body: upload.body,
    contentType: upload.contentType,
  });
  return jsonObject<UploadResult>('upload', response);
}

/**
 * Prepares an uploaded session: validation and change actions; nothing is active yet.
 * @example
 * ```ts
 * import { prepareSession, uploadPackage } from 'vespa-bulk';
 *
 * const target = { configUrl: 'http://127.0.0.1:19071' };
 * const { 'session-id': session } = await uploadPackage(target, 'app/');
 * const prepared = await prepareSession(target, session);
 * for (const action of prepared.configChangeActions.restart) console.log('restart needed:', action.messages);
 * ```
 */
export async function prepareSession(
  target: DeployTarget,
  sessionId: string,
  options: PrepareOptions = {},
): Promise<PrepareResult> {
  checkDuration(options, 'timeoutSeconds', true);
  const t = resolveTarget(target);
  const response = await configRequest(t, {
    step: 'prepare',
    method: 'PUT',
    path: `${tenantPath(t)}/session/${encodeURIComponent(sessionId)}/prepared`,
    query: prepareQuery(t.application, t.instance, options),
    timeoutMs: ((options.timeoutSeconds ?? 360) + 30) * 1000,
  });
  return normalizeActions(jsonObject<PrepareResult>('prepare', response));
}

/**
 * Activates a prepared session: the application starts using it.
 * @example
 * ```ts
 * import { activateSession } from 'vespa-bulk';
 *
 * // The session a `prepareSession` prepared earlier (its id).
 * await activateSession({ configUrl: 'http://127.0.0.1:19071' }, '42');
 * ```
 */
export async function activateSession(
  target: DeployTarget,
  sessionId: string,
  options: { ignoreSessionStaleFailure?: boolean } = {},
): Promise<ActivateResult> {
  const t = resolveTarget(target);
  const response = await configRequest(t, {
    step: 'activate',
    method: 'PUT',
    path: `${tenantPath(t)}/session/${encodeURIComponent(sessionId)}/active`,
    query: { ignoreSessionStaleFailure: options.ignoreSessionStaleFailure || undefined },
  });
  return jsonObject<ActivateResult>('activate', response);
}

/**
 * The one-request shortcut the official `vespa deploy` uses.
 * @example
 * ```ts
 * import { prepareAndActivate } from 'vespa-bulk';
 *
 * const result = await prepareAndActivate({ configUrl: 'http://127.0.0.1:19071' }, 'app/');
 * console.log(result['session-id'], result.activated);
 * ```
 */
export async function prepareAndActivate(
  target: DeployTarget,
  pkg: string | PackageUpload,
  options: PrepareOptions = {},
): Promise<PrepareAndActivateResult> {
  const t = resolveTarget(target);
  const upload = typeof pkg === 'string' ? await readPackage(pkg) : pkg;
  const response = await configRequest(t, {
    step: 'prepareandactivate',
    method: 'POST',
    path: `${tenantPath(t)}/prepareandactivate`,
    query: prepareQuery(t.application, t.instance, options),
    body: upload.body,
    contentType: upload.contentType,
    timeoutMs: ((options.timeoutSeconds ?? 360) + 30) * 1000,
  });
  return normalizeActions(jsonObject<PrepareAndActivateResult>('prepareandactivate', response));
}

function prepareQuery(
  applicationName: string,
  instance: string,
  o: PrepareOptions,
): Record<string, string | number | boolean | undefined> {
  return {
    applicationName,
    instance,
    ignoreValidationErrors: o.ignoreValidationErrors || undefined,
    vespaVersion: o.vespaVersion,
    timeout: o.timeoutSeconds,
    dryRun: o.dryRun || undefined,
    verbose: o.verbose || undefined,
  };
}

/** Older servers omit empty action lists; callers can always iterate all three. */
function normalizeActions<
  T extends { configChangeActions: PrepareResult['configChangeActions']; log: PrepareResult['log'] },
>(result: T): T {
  const a = (result.configChangeActions ?? {}) as Partial<PrepareResult['configChangeActions']>;
  return {
    ...result,
    log: result.log ?? [],
    configChangeActions: { restart: a.restart ?? [], refeed: a.refeed ?? [], reindex: a.reindex ?? [] },
  };
}
