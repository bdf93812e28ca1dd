import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { servedDocumentTypes, type ContentCluster, type PackageFormat } from '../../schema/app-package.js';
import { documentModelOf, type DocumentModel } from '../../schema/document-model.js';
import { ConfigServerError, Deployments, type Application, type PrepareOutcome, type Session } from './deployments.js';
import { parseContentPath, listDirectory, contentTypeOf } from './package-content.js';
import { bearerChecker, checkClientCertificate, serverTlsOptions, type AccessVerdict, type ServerTlsOptions } from '../http/auth.js';

/** The simulated config server (Vespa's deployment interface, normally port 19071). */
export interface ConfigServerOptions {
  /** Interface to listen on. Default 127.0.0.1. */
  host?: string;
  /** Port; default 19071, 0 = ephemeral. */
  port?: number;
  /** Services reach the wanted generation this long after activation (staggered within it). Default 1000. */
  convergeDelayMs?: number;
  /** How long reindexing a document type takes at speed 1 (it scales with 1/speed). Default 2000. */
  reindexDurationMs?: number;
  /** Known engine versions; the first is the current one, used when prepare names none. */
  vespaVersions?: string[];
  /** Tenants that exist. Default ['default'] (a self-hosted Vespa has only that one). */
  tenants?: string[];
  /** Largest accepted package body. Default 100 MiB. */
  maxPackageBytes?: number;
  /**
   * Called after each activation, and after a deletion that leaves applications live, with the document types
   * the content clusters of every live application serve, and those clusters (one document interface serves
   * them all; a cluster id used by two applications is the first one's).
   */
  onActivate?: (activated: { documentTypes: string[]; generation: number; model: DocumentModel; contentClusters: { id: string; documents: { type: string; global: boolean }[] }[] }) => void;
  /** Called after the last live application is deleted. */
  onDelete?: () => void;
  /** Serve HTTPS (HTTP/1.1) with this certificate; optionally demand client certificates signed by `ca`. */
  tls?: ServerTlsOptions;
  /** Require `Authorization: Bearer <token>` on every request: missing 401 UNAUTHORIZED, wrong 403 FORBIDDEN. */
  token?: string;
}

/** A running config-server simulator. */
export interface ConfigServer {
  /** e.g. http://127.0.0.1:19071 (https:// with `tls`) */
  url: string;
  port: number;
  /** Stops the server. */
  close(): Promise<void>;
}

export const defaultVespaVersions = ['8.600.35', '8.599.6', '8.590.11'];

const vespaVersionPattern = /^\d+\.\d+\.\d+(?:\.[A-Za-z0-9_-]+)?$/;

/** Starts the config-server half of the simulator (deploy interface) on loopback. */
export async function startConfigServer(options: ConfigServerOptions = {}): Promise<ConfigServer> {
  const host = options.host ?? '127.0.0.1';
  const deployments = new Deployments({
    convergeDelayMs: options.convergeDelayMs ?? 1000,
    reindexDurationMs: options.reindexDurationMs ?? 2000,
    vespaVersions: options.vespaVersions ?? defaultVespaVersions,
    tenants: options.tenants ?? ['default'],
    now: Date.now,
  });
  const scheme = options.tls ? 'https' : 'http';
  const context: Context = {
    deployments,
    options,
    maxPackageBytes: options.maxPackageBytes ?? 100 * 1024 * 1024,
    scheme,
    checkToken: options.token === undefined ? undefined : bearerChecker(options.token),
    checkCert: options.tls?.ca !== undefined && options.tls.requireClientCert !== true,
  };
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    handle(context, req, res).catch((err: unknown) => {
      const error = err instanceof ConfigServerError ? err : new ConfigServerError(500, 'INTERNAL_SERVER_ERROR', err instanceof Error ? err.message : String(err));
      const headers = error.status === 401 ? { 'www-authenticate': 'Bearer realm="vespa"' } : undefined;
      sendJson(res, error.status, { 'error-code': error.errorCode, message: error.message }, headers);
    });
  };
  const server = options.tls ? createHttpsServer(serverTlsOptions(options.tls), onRequest) : createServer(onRequest);
  // Refused handshakes (no or foreign client certificate) only end that socket.
  server.on('tlsClientError', (_err: Error, socket: { destroy(): void }) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 19071, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return {
    url: `${scheme}://${urlHost}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

interface Context {
  deployments: Deployments;
  options: ConfigServerOptions;
  maxPackageBytes: number;
  scheme: 'http' | 'https';
  checkToken: ((authorization: string | undefined) => AccessVerdict) | undefined;
  checkCert: boolean;
}

const verdictCodes = { 401: 'UNAUTHORIZED', 403: 'FORBIDDEN' } as const;

/** Throws the 401/403 a request without the right credentials gets; the body is drained first. */
function checkAccess(context: Context, req: IncomingMessage): void {
  let verdict: AccessVerdict = context.checkCert ? checkClientCertificate(req.socket) : { ok: true };
  if (verdict.ok && context.checkToken !== undefined) verdict = context.checkToken(req.headers.authorization);
  if (verdict.ok) return;
  req.resume();
  throw new ConfigServerError(verdict.status, verdictCodes[verdict.status], verdict.message);
}

interface Request {
  method: string;
  /** Raw (still percent-encoded) path segments after the leading `/`. */
  segments: string[];
  query: URLSearchParams;
  base: string;
  req: IncomingMessage;
}

async function handle(context: Context, req: IncomingMessage, res: ServerResponse): Promise<void> {
  checkAccess(context, req);
  const raw = req.url ?? '/';
  const q = raw.indexOf('?');
  // Not `new URL()`: it would resolve `..` and `%2e%2e` before we can refuse them.
  const path = q === -1 ? raw : raw.slice(0, q);
  const request: Request = {
    method: req.method ?? 'GET',
    segments: path.split('/').slice(1),
    query: new URLSearchParams(q === -1 ? '' : raw.slice(q + 1)),
    base: `${context.scheme}://${req.headers.host ?? 'localhost'}`,
    req,
  };
  const s = request.segments;
  const route = (methods: string[], run: () => Promise<void> | void): Promise<void> | void => {
    if (!methods.includes(request.method)) throw new ConfigServerError(405, 'METHOD_NOT_ALLOWED', `Method '${request.method}' is not supported for '${path}'; use ${methods.join(' or ')}`);
    return run();
  };

  if (path === '/state/v1/health') return route(['GET'], () => sendJson(res, 200, { status: { code: 'up' } }));
  if (path === '/status.html') return route(['GET'], () => send(res, 200, 'text/plain', 'OK'));
  if (s[0] === 'application' && s[1] === 'v2' && s[2] === 'tenant' && s[3] !== undefined && s[3] !== '') {
    const tenant = decodeSegment(s[3]);
    const rest = s.slice(4);
    if (rest.length === 1 && rest[0] === 'session') return route(['POST'], () => createSession(context, request, res, tenant));
    if (rest.length === 1 && rest[0] === 'prepareandactivate') return route(['POST'], () => prepareAndActivate(context, request, res, tenant));
    if (rest[0] === 'session' && rest.length >= 3) {
      const sessionId = decodeSegment(rest[1]);
      if (rest.length === 3 && rest[2] === 'prepared') return route(['PUT'], () => prepare(context, request, res, tenant, sessionId));
      if (rest.length === 3 && rest[2] === 'active') return route(['PUT'], () => activate(context, request, res, tenant, sessionId));
      if (rest[2] === 'content') {
        return route(['GET'], () => {
          const session = context.deployments.session(tenant, sessionId);
          serveContent(request, res, session.pkg.files, `${request.base}/application/v2/tenant/${tenant}/session/${session.id}/content/`, rest.slice(3));
        });
      }
    }
    if (rest[0] === 'application' && (rest.length === 1 || (rest.length === 2 && rest[1] === ''))) {
      return route(['GET'], () => sendJson(res, 200, context.deployments.applicationsOf(tenant).map((a) => applicationUrl(request.base, a))));
    }
    if (rest[0] === 'application' && rest[2] === 'environment' && rest[4] === 'region' && rest[6] === 'instance' && rest.length >= 8) {
      // Environment and region are accepted as given: a self-hosted config server has a single zone.
      const app = (): Application => context.deployments.application(tenant, decodeSegment(rest[1]), decodeSegment(rest[7]));
      const sub = rest.slice(8);
      if (sub.length === 0 || (sub.length === 1 && sub[0] === '')) {
        return route(['GET', 'DELETE'], () => (request.method === 'GET' ? getApplication(request, res, app()) : deleteApplication(context, res, app())));
      }
      if (sub[0] === 'serviceconverge' && sub.length <= 2) return route(['GET'], () => serviceConverge(context, request, res, app(), sub[1]));
      if (sub[0] === 'content') return route(['GET'], () => serveContent(request, res, app().pkg.files, `${applicationUrl(request.base, app())}/content/`, sub.slice(1)));
      if (sub.length === 1 && sub[0] === 'restart') return route(['POST'], () => restart(context, request, res, app()));
      if (sub.length === 1 && sub[0] === 'reindex') return route(['POST'], () => reindex(context, request, res, app()));
      if (sub.length === 1 && sub[0] === 'reindexing') return route(['GET'], () => sendJson(res, 200, context.deployments.reindexingStatus(app())));
    }
  }
  throw new ConfigServerError(404, 'NOT_FOUND', `Nothing at '${path}'`);
}

async function createSession(context: Context, request: Request, res: ServerResponse, tenant: string): Promise<void> {
  const session = await uploadSession(context, request, tenant);
  const sessionUrl = `${request.base}/application/v2/tenant/${tenant}/session/${session.id}`;
  sendJson(res, 200, {
    log: [],
    tenant,
    'session-id': String(session.id),
    prepared: `${sessionUrl}/prepared`,
    content: `${sessionUrl}/content/`,
    message: `Session ${session.id} for tenant '${tenant}' created.`,
  });
}

async function uploadSession(context: Context, request: Request, tenant: string): Promise<Session> {
  const format = packageFormat(request.req.headers['content-type']);
  const body = await readPackageBody(request.req, context.maxPackageBytes);
  return context.deployments.session(tenant, String(context.deployments.createSession(tenant, body, format).id));
}

function prepareSession(context: Context, request: Request, session: Session): PrepareOutcome {
  const q = request.query;
  const version = q.get('vespaVersion') ?? undefined;
  if (version !== undefined && !vespaVersionPattern.test(version)) {
    throw new ConfigServerError(400, 'BAD_REQUEST', `Invalid vespaVersion '${version}': expected <major>.<minor>.<micro>, e.g. 8.600.35`);
  }
  const timeout = q.get('timeout');
  if (timeout !== null && !(Number(timeout) > 0)) throw new ConfigServerError(400, 'BAD_REQUEST', `Invalid timeout '${timeout}': expected a positive number of seconds`);
  return context.deployments.prepare(session, {
    applicationName: q.get('applicationName') || 'default',
    instance: q.get('instance') || 'default',
    ignoreValidationErrors: booleanParam(q, 'ignoreValidationErrors'),
    dryRun: booleanParam(q, 'dryRun'),
    verbose: booleanParam(q, 'verbose'),
    vespaVersion: version,
  });
}

function prepare(context: Context, request: Request, res: ServerResponse, tenant: string, sessionId: string): void {
  const session = context.deployments.session(tenant, sessionId);
  const { log, actions } = prepareSession(context, request, session);
  const dry = booleanParam(request.query, 'dryRun');
  sendJson(res, 200, {
    log,
    tenant,
    'session-id': String(session.id),
    activate: `${request.base}/application/v2/tenant/${tenant}/session/${session.id}/active`,
    message: `Session ${session.id} for tenant '${tenant}' prepared${dry ? ' (dry run: nothing was changed)' : ''}.`,
    configChangeActions: actions,
  });
}

function activate(context: Context, request: Request, res: ServerResponse, tenant: string, sessionId: string): void {
  const session = context.deployments.session(tenant, sessionId);
  const app = activateSession(context, session, booleanParam(request.query, 'ignoreSessionStaleFailure'));
  sendJson(res, 200, {
    tenant,
    'session-id': String(session.id),
    message: `Session ${session.id} for tenant '${tenant}' activated.`,
    url: applicationUrl(request.base, app),
    application: { id: `${app.tenant}:${app.name}:${app.instance}`, checksum: app.pkg.fileReference, generation: app.generation, previousActiveGeneration: app.previousGeneration },
  });
}

function activateSession(context: Context, session: Session, ignoreStale: boolean): Application {
  const app = context.deployments.activate(session, ignoreStale);
  announceDocumentTypes(context, app.generation);
  return app;
}

function announceDocumentTypes(context: Context, generation: number): void {
  const live = context.deployments.liveApplications();
  if (live.length === 0) {
    context.options.onDelete?.();
    return;
  }
  const documentTypes = [...new Set(live.flatMap((a) => servedDocumentTypes(a.pkg)))];
  const models = live.map((a) => documentModelOf(a.pkg));
  const model: DocumentModel = {
    types: new Map(models.flatMap((m) => [...m.types])),
    ignoreUndefinedFields: models.some((m) => m.ignoreUndefinedFields),
    documentApi: models.some((m) => m.documentApi),
  };
  const contentClusters = new Map<string, ContentCluster>();
  for (const c of live.flatMap((a) => a.pkg.contents)) if (!contentClusters.has(c.id)) contentClusters.set(c.id, c);
  context.options.onActivate?.({ documentTypes, generation, model, contentClusters: [...contentClusters.values()] });
}

async function prepareAndActivate(context: Context, request: Request, res: ServerResponse, tenant: string): Promise<void> {
  const session = await uploadSession(context, request, tenant);
  const { log, actions } = prepareSession(context, request, session);
  const dry = booleanParam(request.query, 'dryRun');
  const app = dry ? undefined : activateSession(context, session, booleanParam(request.query, 'ignoreSessionStaleFailure'));
  const name = request.query.get('applicationName') || 'default';
  const instance = request.query.get('instance') || 'default';
  sendJson(res, 200, {
    log,
    tenant,
    url: app ? applicationUrl(request.base, app) : `${request.base}/application/v2/tenant/${tenant}/application/${name}/environment/prod/region/default/instance/${instance}`,
    'session-id': String(session.id),
    message: `Session ${session.id} for tenant '${tenant}' prepared${app ? ' and activated' : ' (dry run: not activated)'}.`,
    activated: app !== undefined,
    configChangeActions: actions,
  });
}

function getApplication(request: Request, res: ServerResponse, app: Application): void {
  sendJson(res, 200, {
    generation: app.generation,
    applicationPackageFileReference: app.pkg.fileReference,
    modelVersions: [app.vespaVersion],
    versions: app.versions,
    url: applicationUrl(request.base, app),
  });
}

function deleteApplication(context: Context, res: ServerResponse, app: Application): void {
  context.deployments.delete(app);
  // Deleting one of several applications must not open the document interface to every type.
  announceDocumentTypes(context, Math.max(0, ...context.deployments.liveApplications().map((a) => a.generation)));
  sendJson(res, 200, { message: `Application '${app.tenant}.${app.name}.${app.instance}' deleted` });
}

function serviceConverge(context: Context, request: Request, res: ServerResponse, app: Application, hostPort: string | undefined): void {
  const url = `${applicationUrl(request.base, app)}/serviceconverge`;
  const timeout = request.query.get('timeout');
  if (timeout !== null && !/^\d+(\.\d+)?(ms|s|m)?$/.test(timeout)) throw new ConfigServerError(400, 'BAD_REQUEST', `Invalid timeout '${timeout}': expected seconds, e.g. 60 or 60s`);
  const version = request.query.get('vespaVersion');
  if (version !== null && !vespaVersionPattern.test(version)) throw new ConfigServerError(400, 'BAD_REQUEST', `Invalid vespaVersion '${version}'`);
  // Services run the version they were deployed with; asking about another one can never converge.
  const onVersion = version === null || version === app.vespaVersion;
  const generations = app.services.map((_, i) => (onVersion ? context.deployments.serviceGeneration(app, i) : app.previousGeneration));
  if (hostPort !== undefined && hostPort !== '') {
    const name = decodeSegment(hostPort);
    const index = app.services.findIndex((s) => `${s.host}:${s.port}` === name);
    if (index === -1) {
      const wanted = app.generation;
      sendJson(res, 410, { 'error-code': 'NOT_FOUND', message: `Service '${name}' is not part of the application`, url: `${url}/${name}`, host: name, wantedGeneration: wanted, problem: 'Host:port (service) no longer part of application' });
      return;
    }
    sendJson(res, 200, { url: `${url}/${name}`, host: name, wantedGeneration: app.generation, converged: generations[index] === app.generation, currentGeneration: generations[index] });
    return;
  }
  const currentGeneration = Math.min(...generations);
  sendJson(res, 200, {
    services: app.services.map((s, i) => ({ host: s.host, port: s.port, type: s.type, clusterName: s.clusterName, url: `${url}/${s.host}:${s.port}`, currentGeneration: generations[i] })),
    url,
    currentGeneration,
    wantedGeneration: app.generation,
    converged: currentGeneration === app.generation,
  });
}

function restart(context: Context, request: Request, res: ServerResponse, app: Application): void {
  context.deployments.restart(app, {
    hostname: listParam(request.query, 'hostname'),
    clusterType: listParam(request.query, 'clusterType'),
    clusterId: listParam(request.query, 'clusterId'),
  });
  sendJson(res, 200, { message: 'Success' });
}

function reindex(context: Context, request: Request, res: ServerResponse, app: Application): void {
  const q = request.query;
  const speedText = q.get('speed');
  const speed = speedText === null ? 1 : Number(speedText);
  if (speedText !== null && (speedText.trim() === '' || !Number.isFinite(speed) || speed < 0 || speed > 100)) {
    throw new ConfigServerError(400, 'BAD_REQUEST', `Invalid speed '${speedText}': expected a number from 0.0 to 100.0`);
  }
  const message = context.deployments.reindex(app, {
    clusterId: listParam(q, 'clusterId'),
    documentType: listParam(q, 'documentType'),
    indexedOnly: booleanParam(q, 'indexedOnly'),
    speed,
    cause: q.get('cause') ?? undefined,
  });
  sendJson(res, 200, { message });
}

function serveContent(request: Request, res: ServerResponse, files: Map<string, Uint8Array>, contentBase: string, rawSegments: string[]): void {
  const target = parseContentPath(rawSegments);
  const file = target.path === '' ? undefined : files.get(target.path);
  if (file && !target.directory) {
    send(res, 200, contentTypeOf(target.path), file);
    return;
  }
  const listing = listDirectory(files, target.path, request.query.get('recursive') === 'true');
  if (!listing) {
    const what = file ? `'${target.path}' is a file, not a directory: fetch it without the trailing '/'` : `No file or directory '${target.path}' in the application package`;
    throw new ConfigServerError(404, 'NOT_FOUND', what);
  }
  sendJson(res, 200, listing.map((p) => contentBase + p.split('/').map(encodeURIComponent).join('/')));
}

function applicationUrl(base: string, app: Application): string {
  return `${base}/application/v2/tenant/${app.tenant}/application/${app.name}/environment/prod/region/default/instance/${app.instance}`;
}

function packageFormat(contentType: string | undefined): PackageFormat {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  if (type === 'application/zip') return 'zip';
  if (type === 'application/x-gzip' || type === 'application/gzip') return 'gzip';
  throw new ConfigServerError(400, 'BAD_REQUEST', `Unsupported Content-Type '${contentType ?? ''}': send the package as application/zip or application/x-gzip`);
}

function booleanParam(q: URLSearchParams, name: string): boolean {
  const value = q.get(name);
  if (value === null) return false;
  if (value === 'true' || value === '') return true;
  if (value === 'false') return false;
  throw new ConfigServerError(400, 'BAD_REQUEST', `Invalid value '${value}' for boolean parameter '${name}': use true or false`);
}

function listParam(q: URLSearchParams, name: string): string[] | undefined {
  const values = q.getAll(name).flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '');
  return values.length === 0 ? undefined : values;
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new ConfigServerError(400, 'BAD_REQUEST', `Malformed percent-encoding in path segment '${segment}'`);
  }
}

async function readPackageBody(req: IncomingMessage, limit: number): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      req.resume();
      throw new ConfigServerError(413, 'BAD_REQUEST', `Application package is larger than ${limit} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers?: Record<string, string>): void {
  send(res, status, 'application/json', JSON.stringify(body), headers);
}

function send(res: ServerResponse, status: number, contentType: string, body: string | Uint8Array, headers?: Record<string, string>): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}
