import { VespaBulkError } from '../core/errors.js';
import { configRequest, jsonObject } from './config-request.js';
import { applicationPath, resolveTarget, type DeployTarget } from './target.js';
import type { ApplicationStatus, ReindexingStatus } from './types.js';

/** Requests on the deployed application: status, delete, package content, restart and reindexing. */

/**
 * The application's status on the config server: its generation and the Vespa version it runs.
 * @example
 * ```ts
 * import { getApplication } from 'vespa-bulk';
 *
 * const status = await getApplication({ configUrl: 'http://127.0.0.1:19071' });
 * console.log(status.generation);
 * ```
 */
export async function getApplication(target: DeployTarget): Promise<ApplicationStatus> {
  const t = resolveTarget(target);
  return jsonObject<ApplicationStatus>(
    'status',
    await configRequest(t, { step: 'status', method: 'GET', path: applicationPath(t) }),
  );
}

/**
 * Deletes the application from the config server (all its sessions).
 * @example
 * ```ts
 * import { deleteApplication } from 'vespa-bulk';
 *
 * await deleteApplication({ configUrl: 'http://127.0.0.1:19071', application: 'staging' });
 * ```
 */
export async function deleteApplication(target: DeployTarget): Promise<{ message: string }> {
  const t = resolveTarget(target);
  return jsonObject('delete', await configRequest(t, { step: 'delete', method: 'DELETE', path: applicationPath(t) }));
}

/**
 * Lists a package directory ('' = root): URLs, directories ending in `/`.
 * @example
 * ```ts
 * import { listContent } from 'vespa-bulk';
 *
 * console.log(await listContent({ configUrl: 'http://127.0.0.1:19071' }, 'schemas', { recursive: true }));
 * ```
 */
export async function listContent(
  target: DeployTarget,
  dir = '',
  options: { recursive?: boolean } = {},
): Promise<string[]> {
  const t = resolveTarget(target);
  const path = contentPath(dir);
  const response = await configRequest(t, {
    step: 'content ls',
    method: 'GET',
    path: `${applicationPath(t)}/content/${path}${path === '' || path.endsWith('/') ? '' : '/'}`,
    query: { recursive: options.recursive || undefined },
  });
  if (!Array.isArray(response.json))
    throw new VespaBulkError('VB_DEPLOY', `content ls failed: '${dir}' is a file, not a directory`);
  return response.json as string[];
}

/**
 * One package file's bytes and the content type the server gave it.
 * @example
 * ```ts
 * import { readContent } from 'vespa-bulk';
 *
 * const { bytes } = await readContent({ configUrl: 'http://127.0.0.1:19071' }, 'services.xml');
 * console.log(new TextDecoder().decode(bytes));
 * ```
 */
export async function readContent(
  target: DeployTarget,
  file: string,
): Promise<{ contentType: string; bytes: Uint8Array }> {
  const t = resolveTarget(target);
  const path = contentPath(file);
  if (path === '') throw new VespaBulkError('VB_USAGE', 'content cat needs a file path, e.g. services.xml');
  const response = await configRequest(t, {
    step: 'content cat',
    method: 'GET',
    path: `${applicationPath(t)}/content/${path}`,
  });
  // A directory answers its listing; printing that as the file's content would mislead.
  if (
    !path.endsWith('.json') &&
    Array.isArray(response.json) &&
    response.json.every((u) => typeof u === 'string' && u.includes('/content/'))
  ) {
    throw new VespaBulkError('VB_DEPLOY', `content cat failed: '${file}' is a directory; list it with content ls`);
  }
  return { contentType: response.contentType, bytes: response.bytes };
}

/** Encodes a package path segment by segment; `..` is refused here, before any request. */
function contentPath(path: string): string {
  const trimmed = path.replace(/^\/+/, '');
  const segments = trimmed.split('/');
  if (segments.some((s) => s === '..' || s === '.'))
    throw new VespaBulkError('VB_USAGE', `'${path}' must be a path inside the application package (no '.' or '..')`);
  return segments.map(encodeURIComponent).join('/');
}

/** Which services `restartServices` restarts (all when empty). */
export interface RestartOptions {
  /** Only services on these hosts. */
  hostname?: string[];
  /** Only these kinds of clusters: admin, container, content. */
  clusterType?: string[];
  /** Only these clusters (their ids in services.xml). */
  clusterId?: string[];
}

/**
 * Asks the config server to restart the selected services of the application.
 * @example
 * ```ts
 * import { restartServices } from 'vespa-bulk';
 *
 * await restartServices({ configUrl: 'http://127.0.0.1:19071' }, { clusterType: ['container'] });
 * ```
 */
export async function restartServices(
  target: DeployTarget,
  options: RestartOptions = {},
): Promise<{ message: string }> {
  const t = resolveTarget(target);
  const response = await configRequest(t, {
    step: 'restart',
    method: 'POST',
    path: `${applicationPath(t)}/restart`,
    query: {
      hostname: nonEmpty(options.hostname),
      clusterType: nonEmpty(options.clusterType),
      clusterId: nonEmpty(options.clusterId),
    },
  });
  return jsonObject('restart', response);
}

/** Which documents `triggerReindex` reindexes: by cluster, document type, and at what speed. */
export interface ReindexOptions {
  /** Content cluster ids; required when documentType is given. */
  clusterId?: string[];
  documentType?: string[];
  /** Only document types in indexed (not streaming) mode. */
  indexedOnly?: boolean;
  /** Speed multiplier, 0.0 to 100.0 (the service itself may accept less). */
  speed?: number;
  /** Why, for the logs. */
  cause?: string;
}

/**
 * Starts reindexing of the selected clusters and document types.
 * @example
 * ```ts
 * import { getReindexing, triggerReindex } from 'vespa-bulk';
 *
 * const target = { configUrl: 'http://127.0.0.1:19071' };
 * await triggerReindex(target, { clusterId: ['content'], documentType: ['music'] });
 * console.log(await getReindexing(target));
 * ```
 */
export async function triggerReindex(target: DeployTarget, options: ReindexOptions = {}): Promise<{ message: string }> {
  if (options.speed !== undefined && !(options.speed >= 0 && options.speed <= 100)) {
    throw new VespaBulkError('VB_USAGE', `reindex speed ${options.speed} is out of range: use 0.0 to 100.0`);
  }
  if (nonEmpty(options.documentType) && !nonEmpty(options.clusterId)) {
    throw new VespaBulkError('VB_USAGE', 'reindex: name the content cluster (--cluster) when naming document types');
  }
  const t = resolveTarget(target);
  const response = await configRequest(t, {
    step: 'reindex',
    method: 'POST',
    path: `${applicationPath(t)}/reindex`,
    query: {
      clusterId: nonEmpty(options.clusterId),
      documentType: nonEmpty(options.documentType),
      indexedOnly: options.indexedOnly || undefined,
      speed: options.speed,
      cause: options.cause,
    },
  });
  return jsonObject('reindex', response);
}

/**
 * The reindexing status per cluster and document type.
 * @example
 * ```ts
 * import { getReindexing } from 'vespa-bulk';
 *
 * const status = await getReindexing({ configUrl: 'http://127.0.0.1:19071' });
 * console.log(JSON.stringify(status, null, 2));
 * ```
 */
export async function getReindexing(target: DeployTarget): Promise<ReindexingStatus> {
  const t = resolveTarget(target);
  return jsonObject<ReindexingStatus>(
    'reindexing',
    await configRequest(t, { step: 'reindexing', method: 'GET', path: `${applicationPath(t)}/reindexing` }),
  );
}

const nonEmpty = (list: string[] | undefined): string[] | undefined => {
  const values = (list ?? [])
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
  return values.length === 0 ? undefined : values;
};
