import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import type { TlsOptions, TransportOptions } from './transport.js';
import { proxySecrets, type ProxySetting } from './proxy/proxy-route.js';
import { VespaBulkError } from '../core/errors.js';
import { maskHeaders } from './headers.js';

/**
 * How a client proves who it is and whom it trusts: TLS trust and client certificate (mutual TLS), a bearer
 * token, and extra headers (an authenticating proxy). Shared by feed, visit, document and deploy.
 *
 * `ca`, `cert` and `key` are file paths; a value that itself starts with `-----BEGIN` is taken as the PEM
 * text (the official CLI's VESPA_CLI_DATA_PLANE_CERT etc. carry PEM inline).
 */
export interface SecurityOptions {
  /** CA certificate(s) to trust instead of the system's (PEM file). */
  ca?: string;
  /** Client certificate for mutual TLS (PEM file); needs `key`. */
  cert?: string;
  /** Private key of `cert` (PEM file). */
  key?: string;
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** Extra request headers, e.g. for a proxy; values of secret-looking headers are masked in output. */
  headers?: Record<string, string>;
  /** Skip verifying the server's certificate (the CLI sets it from the official CLI's VESPA_CLI_DATA_PLANE_TRUST_ALL). */
  insecure?: boolean;
  /** The variable that held inline PEM for `ca`, `cert` or `key`, named in messages instead of the PEM. */
  origin?: { ca?: string; cert?: string; key?: string };
  /** The forward proxy: see `TransportOptions.proxy`; its user info is its credentials. */
  proxy?: ProxySetting;
  /** CA certificate(s) to trust for an https:// proxy instead of the system's (PEM file or text). */
  proxyCa?: string;
}

/** TLS material read from the files of SecurityOptions, ready for node:tls. */
export interface TlsMaterial {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
}

/** The flag each field comes from, for messages. */
const flagOf = { ca: '--ca', cert: '--cert', key: '--key', token: '--token', proxyCa: '--proxy-ca' } as const;

/** True when requests need TLS options of their own (custom trust, a client certificate, no verification). */
export function needsTlsMaterial(security: SecurityOptions | undefined): boolean {
  return (
    security?.ca !== undefined ||
    security?.cert !== undefined ||
    security?.key !== undefined ||
    security?.insecure === true
  );
}

/** A value that is PEM text itself rather than a file name. */
export function isInlinePem(value: string): boolean {
  return value.trimStart().startsWith('-----BEGIN');
}

/**
 * The PEM of a flag's value (a file, or the text itself). node:tls silently ignores a CA file without PEM blocks,
 * which would only show later as an untrusted server: one is refused here.
 */
function readMaterial(field: 'ca' | 'cert' | 'key' | 'proxyCa', value: string): Buffer {
  if (isInlinePem(value)) return Buffer.from(value);
  let pem: Buffer;
  try {
    pem = readFileSync(value);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new VespaBulkError('VB_USAGE', `${flagOf[field]} names a file that cannot be read: '${value}': ${code}`, {
      cause: err,
    });
  }
  if (!pem.includes('-----BEGIN'))
    throw new VespaBulkError('VB_USAGE', `${flagOf[field]} '${value}': not a PEM file (no -----BEGIN line)`);
  return pem;
}

/**
 * Reads and checks the TLS files: each must be readable, cert and key come together, and they must load as
 * PEM (and match). Every problem is VB_USAGE naming the flag and the file, so it shows before any request.
 */
export function readTlsMaterial(security: SecurityOptions): TlsMaterial {
  if ((security.cert === undefined) !== (security.key === undefined)) {
    throw new VespaBulkError(
      'VB_USAGE',
      security.cert === undefined
        ? '--key needs --cert (the client certificate it belongs to)'
        : '--cert needs --key (its private key)',
    );
  }
  const material: TlsMaterial = {};
  if (security.ca !== undefined) material.ca = readMaterial('ca', security.ca);
  if (security.cert !== undefined) material.cert = readMaterial('cert', security.cert);
  if (security.key !== undefined) material.key = readMaterial('key', security.key);
  try {
    if (material.ca) createSecureContext({ ca: material.ca });
  } catch (err) {
    throw new VespaBulkError(
      'VB_USAGE',
      `--ca '${describeSource(security.ca!)}': not a PEM certificate: ${(err as Error).message}`,
      { cause: err },
    );
  }
  try {
    if (material.cert) createSecureContext({ cert: material.cert, key: material.key });
  } catch (err) {
    // Node's messages here name no secret, only what failed (e.g. "key values mismatch").
    throw new VespaBulkError(
      'VB_USAGE',
      `--cert '${describeSource(security.cert!)}' / --key '${describeSource(security.key!)}': cannot load the client certificate: ${(err as Error).message}`,
      { cause: err },
    );
  }
  if (material.cert) refuseExpired(material.cert, describeSource(security.cert!, security.origin?.cert));
  return material;
}

/**
 * An expired client certificate would only show as a refused handshake, request after request: refuse it
 * before anything is sent, naming where it came from and when it expired (as the official CLI does).
 */
export function refuseExpired(certPem: Buffer, source: string, now: Date = new Date()): void {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certPem);
  } catch {
    return; // createSecureContext accepted it; a parse failure here is not ours to report
  }
  const notAfter = new Date(cert.validTo);
  if (!(notAfter.getTime() < now.getTime())) return;
  const days = Math.floor((now.getTime() - notAfter.getTime()) / 86_400_000);
  throw new VespaBulkError(
    'VB_CERT_EXPIRED',
    `the client certificate ${source} expired at ${notAfter.toISOString()} (${days === 0 ? 'less than a day' : `${days} day${days === 1 ? '' : 's'}`} ago): renew it (e.g. 'vespa auth cert -f') or give another with --cert/--key`,
  );
}

/** A file name as it may be shown; inline PEM (a key!) is never echoed, the variable that held it is. */
function describeSource(value: string, origin?: string): string {
  if (!isInlinePem(value)) return value;
  return origin !== undefined ? `(from ${origin})` : '(inline PEM)';
}

/**
 * TLS options (node:tls) for the TLS material: `tls` of `createTransport` and of every option set that makes one.
 * `servername` only when given: a transport otherwise sends the origin's host name (SNI), which is what a transport
 * for one origin wants.
 */
export function connectOptions(security: SecurityOptions, servername?: string): TlsOptions {
  const material = needsTlsMaterial(security) ? readTlsMaterial(security) : {};
  return {
    ...(material.ca ? { ca: material.ca } : {}),
    ...(material.cert ? { cert: material.cert, key: material.key } : {}),
    ...(security.insecure && { rejectUnauthorized: false }),
    ...(servername !== undefined ? { servername } : {}),
  };
}

/**
 * The transport options of `security`: TLS material for the endpoint, and the proxy with the trust of an https:// one,
 * each only when set; what every command spreads into the options of the library call it makes.
 */
export function transportSecurity(security: SecurityOptions): Pick<TransportOptions, 'tls' | 'proxy' | 'proxyTls'> {
  return {
    ...(needsTlsMaterial(security) && { tls: connectOptions(security) }),
    ...(security.proxy !== undefined && { proxy: security.proxy }),
    ...(security.proxyCa !== undefined && { proxyTls: { ca: readMaterial('proxyCa', security.proxyCa) } }),
  };
}

/** `{ authorization: 'Bearer <token>' }`, or nothing without a token. */
export function authHeaders(security: SecurityOptions | undefined): Record<string, string> {
  return security?.token ? { authorization: `Bearer ${security.token}` } : {};
}

/** Every header a request carries for security: the extra headers, then the token (which wins). */
export function securityHeaders(security: SecurityOptions | undefined): Record<string, string> {
  return { ...(security?.headers ?? {}), ...authHeaders(security) };
}

/** The secret strings of `security` (token, secret header values), to hand to `redact`. */
export function secretsOf(security: SecurityOptions | undefined): string[] {
  const secrets: string[] = proxySecrets(security?.proxy);
  if (security?.token) secrets.push(security.token);
  const headers = security?.headers ?? {};
  const masked = maskHeaders(headers);
  for (const [name, value] of Object.entries(headers)) {
    if (masked[name] !== value && value !== '') {
      secrets.push(value);
      // "Bearer abc": the bare credential may be echoed without its scheme.
      const space = value.indexOf(' ');
      if (space > 0 && value.length - space > 4) secrets.push(value.slice(space + 1).trim());
    }
  }
  return secrets;
}

/**
 * `text` with every secret replaced by `***`, and the password of any URL userinfo too. Short secrets (under
 * 4 characters) are left alone: masking them would garble ordinary text while protecting nothing.
 */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^\s/:@]+):[^\s/@]+@/gi, '$1:***@');
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) {
    if (secret.length < 4) continue;
    out = out.split(secret).join('***');
  }
  return out;
}

/** The hint a 401/403 deserves: which credential to check. Such answers are never retried. */
export function authFailureHint(status: number): string {
  return status === 401
    ? 'credentials missing: check --token (or --cert/--key for mutual TLS)'
    : 'credentials refused: check --token / --cert';
}

/** True for the statuses that mean "your credentials": retrying cannot help. */
export function isAuthFailure(status: number): boolean {
  return status === 401 || status === 403;
}
