import type { DocumentModel } from '../../schema/document-model.js';
import { bearerChecker, checkClientCertificate, type AccessVerdict, type ServerTlsOptions } from '../http/auth.js';
import { sendBody, type AnyRequest, type AnyResponse } from '../http/http-response.js';
import { createListener, listen } from '../http/listener.js';
import { readRequestBody } from '../http/request-body.js';
import { ConfigServerError, Deployments } from './deployments.js';
import type { ConfigServerRequest, ConfigServerResponse, ConfigServerState } from './request.js';
import { matchRoute } from './routes.js';

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
  onActivate?: (activated: {
    documentTypes: string[];
    generation: number;
    model: DocumentModel;
    contentClusters: { id: string; documents: { type: string; global: boolean }[] }[];
  }) => void;
  /** Called after the last live application is deleted. */
  onDelete?: () => void;
  /** Serve HTTPS with this certificate; optionally demand client certificates signed by `ca`. */
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

const jsonType = 'application/json';

/**
 * Starts the config-server half of the simulator (deploy interface) on loopback: the same listener as the
 * document interface (HTTP/1.1 and cleartext HTTP/2, or TLS), on its own port, with the routes of routes.ts.
 * @example
 * ```ts
 * import { deploy } from 'vespa-bulk';
 * import { startConfigServer } from 'vespa-bulk/simulator';
 *
 * const config = await startConfigServer({ port: 0 });
 * await deploy({ configUrl: config.url }, 'app/');
 * await config.close();
 * ```
 */
export async function startConfigServer(options: ConfigServerOptions = {}): Promise<ConfigServer> {
  const host = options.host ?? '127.0.0.1';
  const server: ConfigServerState = {
    deployments: new Deployments({
      convergeDelayMs: options.convergeDelayMs ?? 1000,
      reindexDurationMs: options.reindexDurationMs ?? 2000,
      vespaVersions: options.vespaVersions ?? defaultVespaVersions,
      tenants: options.tenants ?? ['default'],
      now: Date.now,
    }),
    maxPackageBytes: options.maxPackageBytes ?? 100 * 1024 * 1024,
    onActivate: options.onActivate,
    onDelete: options.onDelete,
  };
  const frontDoor: FrontDoor = {
    server,
    scheme: options.tls ? 'https' : 'http',
    checkToken: options.token === undefined ? undefined : bearerChecker(options.token),
    checkCert: options.tls?.ca !== undefined && options.tls.requireClientCert !== true,
  };
  const listener = createListener(
    (req, res) => {
      handle(frontDoor, req).then(
        (response) => send(res, response),
        (err: unknown) => sendError(res, err),
      );
    },
    { tls: options.tls },
  );
  const port = await listen(listener, options.port ?? 19071, host);
  return { url: `${frontDoor.scheme}://${urlHostOf(host)}:${port}`, port, close: () => listener.close() };
}

/** The host as the server's URL names it: a wildcard address by loopback (reachable from here), IPv6 in brackets. */
function urlHostOf(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

/** What stands before the routes: the access checks, and the scheme for the URLs in answers. */
interface FrontDoor {
  server: ConfigServerState;
  scheme: 'http' | 'https';
  checkToken: ((authorization: string | undefined) => AccessVerdict) | undefined;
  checkCert: boolean;
}

const verdictCodes = { 401: 'UNAUTHORIZED', 403: 'FORBIDDEN' } as const;

/** Throws the 401/403 a request without the right credentials gets; the body is drained first. */
function checkAccess(frontDoor: FrontDoor, req: AnyRequest): void {
  let verdict: AccessVerdict = frontDoor.checkCert ? checkClientCertificate(req.socket) : { ok: true };
  if (verdict.ok && frontDoor.checkToken !== undefined) verdict = frontDoor.checkToken(req.headers.authorization);
  if (verdict.ok) return;
  req.resume();
  throw new ConfigServerError(verdict.status, verdictCodes[verdict.status], verdict.message);
}

async function handle(frontDoor: FrontDoor, req: AnyRequest): Promise<ConfigServerResponse> {
  checkAccess(frontDoor, req);
  const raw = req.url ?? '/';
  const q = raw.indexOf('?');
  // Not `new URL()`: it would resolve `..` and `%2e%2e` before we can refuse them.
  const path = q === -1 ? raw : raw.slice(0, q);
  const method = req.method ?? 'GET';
  const { handler, params, rest } = matchRoute(method, path);
  const request: ConfigServerRequest = {
    server: frontDoor.server,
    method,
    path,
    params,
    rest,
    query: new URLSearchParams(q === -1 ? '' : raw.slice(q + 1)),
    headers: req.headers,
    base: `${frontDoor.scheme}://${authorityOf(req)}`,
    body: () => readPackageBody(req, frontDoor.server.maxPackageBytes),
  };
  return handler(request);
}

/** The host (and port) the client addressed: `Host` over HTTP/1.1, `:authority` over HTTP/2. */
function authorityOf(req: AnyRequest): string {
  const authority = req.headers.host ?? req.headers[':authority'];
  return typeof authority === 'string' && authority !== '' ? authority : 'localhost';
}

/** The whole body by the shared reader (gunzipped when so encoded); 413 past `limit`. */
function readPackageBody(req: AnyRequest, limit: number): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    readRequestBody(req, limit, resolve, refuseBody, { reject, limit });
  });
}

function refuseBody(
  context: { reject: (err: Error) => void; limit: number },
  status: 413 | 400,
  message: string,
): void {
  context.reject(
    new ConfigServerError(
      status,
      'BAD_REQUEST',
      status === 413 ? `Application package is larger than ${context.limit} bytes` : message,
    ),
  );
}

function send(res: AnyResponse, response: ConfigServerResponse): void {
  if ('json' in response) sendBody(res, response.status, jsonType, JSON.stringify(response.json));
  else sendBody(res, response.status, response.contentType, response.body);
}

/** Errors answer `{error-code, message}`; anything but a ConfigServerError is a 500. */
function sendError(res: AnyResponse, err: unknown): void {
  const error =
    err instanceof ConfigServerError
      ? err
      : new ConfigServerError(500, 'INTERNAL_SERVER_ERROR', err instanceof Error ? err.message : String(err));
  const headers = error.status === 401 ? { 'www-authenticate': 'Bearer realm="vespa"' } : undefined;
  sendBody(
    res,
    error.status,
    jsonType,
    JSON.stringify({ 'error-code': error.errorCode, message: error.message }),
    headers,
  );
}
