import { VespaBulkError } from '../core/errors.js';
import { authFailureHint, isAuthFailure, redact } from '../http/tls.js';
import { headerList, header, send, type RawResponse } from '../http/exchange.js';
import { TransportError } from '../http/transport-error.js';
import { configTransport, type ResolvedTarget } from './target.js';

/**
 * The config server refused a step. `step` names it (upload, prepare, activate, status...), `errorCode` is the
 * server's `error-code` (e.g. INVALID_APPLICATION_PACKAGE), `body` the parsed response when it was JSON.
 * @example
 * ```ts
 * import { deploy, DeployError } from 'vespa-bulk';
 *
 * try {
 *   await deploy({ configUrl: 'http://127.0.0.1:19071' }, 'app/');
 * } catch (err) {
 *   if (err instanceof DeployError) console.error(err.message); // the config server's own message
 *   else throw err;
 * }
 * ```
 */
export class DeployError extends VespaBulkError {
  constructor(
    readonly step: string,
    status: number,
    readonly errorCode: string,
    readonly serverMessage: string,
    readonly body: unknown,
    /** What the user should check, e.g. the credentials on a 401/403. */
    readonly hint?: string,
  ) {
    super('VB_DEPLOY', `${step} failed: ${status} ${errorCode}: ${serverMessage}${hint ? ` (${hint})` : ''}`, {
      status,
    });
    this.name = 'DeployError';
  }
}

/** One request to the config server, as `configRequest` sends it. */
export interface ConfigRequest {
  /** What this request does, for error messages: `upload`, `prepare`, `activate`... */
  step: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Path (already encoded) below the config server URL. */
  path: string;
  query?: Record<string, string | number | boolean | string[] | undefined>;
  body?: Uint8Array;
  contentType?: string;
  /** Give up waiting for the answer after this long. Default 60 s. */
  timeoutMs?: number;
}

/** The config server's answer: status and parsed body. */
export interface ConfigResponse {
  status: number;
  contentType: string;
  /** Raw body. */
  bytes: Uint8Array;
  /** Parsed JSON body, or undefined when the body is not JSON. */
  json: unknown;
}

/**
 * One request to the config server; non-2xx answers become DeployError, transport failures VB_TRANSPORT.
 * Nothing here retries; a 401/403 says which credentials to check. Secrets are masked in every message.
 */
export async function configRequest(target: ResolvedTarget, req: ConfigRequest): Promise<ConfigResponse> {
  const url = new URL(target.configUrl + req.path);
  for (const [name, value] of Object.entries(req.query ?? {})) {
    if (value === undefined) continue;
    url.searchParams.set(name, Array.isArray(value) ? value.join(',') : String(value));
  }
  const timeoutMs = req.timeoutMs ?? 60_000;
  let response: RawResponse;
  try {
    response = await send(configTransport(target), {
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers: headerList({
        accept: 'application/json',
        ...(req.contentType ? { 'content-type': req.contentType } : {}),
        ...target.headers,
      }),
      body: req.body === undefined ? null : Buffer.from(req.body.buffer, req.body.byteOffset, req.body.byteLength),
      timeoutMs,
    });
  } catch (err) {
    if (!(err instanceof TransportError)) throw err;
    const message = `${req.step} failed: cannot reach the config server at ${target.configUrl}: ${err.unreachable ?? err.message}${tlsHint(err, url.protocol === 'https:')}`;
    throw new VespaBulkError(
      err.code === 'VB_TIMEOUT' ? 'VB_TIMEOUT' : 'VB_TRANSPORT',
      redact(message, target.secrets),
      { cause: err },
    );
  }
  const bytes = new Uint8Array(response.body.buffer, response.body.byteOffset, response.body.byteLength);
  const contentType = header(response.headers, 'content-type') ?? '';
  const status = response.status;
  let json: unknown;
  if (contentType.includes('json') || (bytes[0] === 0x7b && status >= 400)) {
    try {
      json = JSON.parse(new TextDecoder().decode(bytes));
    } catch {
      json = undefined;
    }
  }
  if (status >= 200 && status < 300) return { status, contentType, bytes, json };
  const body = json as { 'error-code'?: unknown; message?: unknown } | undefined;
  const errorCode = typeof body?.['error-code'] === 'string' ? body['error-code'] : 'HTTP_' + status;
  const message =
    typeof body?.message === 'string'
      ? body.message
      : new TextDecoder().decode(bytes).slice(0, 500).trim() || '(empty body)';
  const hint = isAuthFailure(status) ? authFailureHint(status) : undefined;
  throw new DeployError(req.step, status, errorCode, redact(message, target.secrets), json, hint);
}

/** What a TLS failure usually means, in words the flags use (the words of `err.unreachable`, where it has them, say it already). */
function tlsHint(err: TransportError, https: boolean): string {
  if (err.unreachable !== undefined || !https) return '';
  if (err.failure === 'tls')
    return ' (TLS handshake refused: check --cert / --key and that the server trusts their CA)';
  return '';
}

/** The JSON body of a 2xx response, which must be an object. */
export function jsonObject<T>(step: string, response: ConfigResponse): T {
  if (typeof response.json !== 'object' || response.json === null) {
    throw new DeployError(
      step,
      response.status,
      'BAD_RESPONSE',
      `expected a JSON object, got ${response.contentType || 'no content type'}`,
      undefined,
    );
  }
  return response.json as T;
}
