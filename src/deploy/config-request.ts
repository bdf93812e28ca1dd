import { VespaBulkError } from '../errors.js';
import { authFailureHint, isAuthFailure, redact } from '../http/tls.js';
import { request } from '../http/undici-parts.js';
import type { ResolvedTarget } from './target.js';

/**
 * The config server refused a step. `step` names it (upload, prepare, activate, status...), `errorCode` is the
 * server's `error-code` (e.g. INVALID_APPLICATION_PACKAGE), `body` the parsed response when it was JSON.
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
    super('VB_DEPLOY', `${step} failed: ${status} ${errorCode}: ${serverMessage}${hint ? ` (${hint})` : ''}`, { status });
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
  let response;
  try {
    response = await request(url, {
      method: req.method,
      headers: { accept: 'application/json', ...(req.contentType ? { 'content-type': req.contentType } : {}), ...target.headers },
      body: req.body,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      ...(target.dispatcher ? { dispatcher: target.dispatcher } : {}),
    });
  } catch (err) {
    const code = (err as { code?: string }).code;
    const kind = code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' ? 'VB_TIMEOUT' : 'VB_TRANSPORT';
    const message = `${req.step} failed: cannot reach the config server at ${target.configUrl}: ${code ?? ''}${code ? ' ' : ''}${(err as Error).message}${tlsHint(code, err, url.protocol === 'https:')}`;
    throw new VespaBulkError(kind, redact(message, target.secrets), { cause: err });
  }
  const bytes = new Uint8Array(await response.body.arrayBuffer());
  const contentType = String(response.headers['content-type'] ?? '');
  let json: unknown;
  if (contentType.includes('json') || (bytes[0] === 0x7b && response.statusCode >= 400)) {
    try {
      json = JSON.parse(new TextDecoder().decode(bytes));
    } catch {
      json = undefined;
    }
  }
  if (response.statusCode >= 200 && response.statusCode < 300) return { status: response.statusCode, contentType, bytes, json };
  const body = json as { 'error-code'?: unknown; message?: unknown } | undefined;
  const errorCode = typeof body?.['error-code'] === 'string' ? body['error-code'] : 'HTTP_' + response.statusCode;
  const message = typeof body?.message === 'string' ? body.message : new TextDecoder().decode(bytes).slice(0, 500).trim() || '(empty body)';
  const hint = isAuthFailure(response.statusCode) ? authFailureHint(response.statusCode) : undefined;
  throw new DeployError(req.step, response.statusCode, errorCode, redact(message, target.secrets), json, hint);
}

/** What a TLS failure usually means, in words the flags use. */
function tlsHint(code: string | undefined, err: unknown, https: boolean): string {
  const text = `${code ?? ''} ${(err as Error).message ?? ''} ${String((err as { cause?: { code?: string } }).cause?.code ?? '')}`;
  if (/SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|CERT_UNTRUSTED|unable to verify/i.test(text)) return ' (the server certificate is not trusted: check --ca)';
  if (/ERR_SSL|alert|certificate required|handshake/i.test(text)) return ' (TLS handshake refused: check --cert / --key and that the server trusts their CA)';
  // Over TLS 1.3 a refused client certificate shows only as the server closing the connection.
  if (https && code === 'UND_ERR_SOCKET') return ' (if the server requires a client certificate, check --cert / --key)';
  return '';
}

/** The JSON body of a 2xx response, which must be an object. */
export function jsonObject<T>(step: string, response: ConfigResponse): T {
  if (typeof response.json !== 'object' || response.json === null) {
    throw new DeployError(step, response.status, 'BAD_RESPONSE', `expected a JSON object, got ${response.contentType || 'no content type'}`, undefined);
  }
  return response.json as T;
}
