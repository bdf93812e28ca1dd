import { timingSafeEqual } from 'node:crypto';
import type { TLSSocket } from 'node:tls';

/**
 * The simulator's access checks: a bearer token, and (for a TLS server that asks for but does not demand a
 * client certificate) whether a presented certificate was signed by the trusted CA. Pure apart from reading
 * the socket's TLS state.
 */
export interface ServerTlsOptions {
  /** Server certificate (PEM text or Buffer). */
  cert: string | Buffer;
  /** Its private key (PEM). */
  key: string | Buffer;
  /** CA whose client certificates are accepted; with it the server asks clients for a certificate. */
  ca?: string | Buffer;
  /** Refuse, at the handshake, clients without a certificate signed by `ca`. Needs `ca`. Default false. */
  requireClientCert?: boolean;
}

export type AccessVerdict =
  | { ok: true }
  | { ok: false; status: 401 | 403; reason: 'missing' | 'wrong' | 'certificate'; message: string };

const allowed: AccessVerdict = { ok: true };

/** node:tls server options for `tls`: the client certificate is requested only when a CA is given. */
export function serverTlsOptions(tls: ServerTlsOptions): {
  cert: string | Buffer;
  key: string | Buffer;
  ca?: string | Buffer;
  requestCert: boolean;
  rejectUnauthorized: boolean;
} {
  if (tls.requireClientCert && tls.ca === undefined)
    throw new Error('tls.requireClientCert needs tls.ca, the CA client certificates must be signed by');
  return {
    cert: tls.cert,
    key: tls.key,
    ...(tls.ca !== undefined ? { ca: tls.ca } : {}),
    requestCert: tls.ca !== undefined,
    rejectUnauthorized: tls.requireClientCert === true,
  };
}

/** Compares in constant time so the token cannot be guessed byte by byte from response times. */
function sameToken(given: string, expected: Buffer): boolean {
  const g = Buffer.from(given);
  return g.length === expected.length && timingSafeEqual(g, expected);
}

/**
 * A checker for `Authorization: Bearer <token>`: missing (or another scheme) is 401, a wrong token 403. The
 * messages never echo what was sent.
 */
export function bearerChecker(token: string): (authorization: string | undefined) => AccessVerdict {
  const expected = Buffer.from(token);
  return (authorization) => {
    if (authorization === undefined || authorization === '') {
      return {
        ok: false,
        status: 401,
        reason: 'missing',
        message: 'Missing credentials: send Authorization: Bearer <token>',
      };
    }
    const match = /^Bearer[ \t]+(\S+)\s*$/i.exec(authorization);
    if (match === null)
      return {
        ok: false,
        status: 401,
        reason: 'missing',
        message: 'Unsupported authorization scheme: send Authorization: Bearer <token>',
      };
    if (!sameToken(match[1], expected)) return { ok: false, status: 403, reason: 'wrong', message: 'Invalid token' };
    return allowed;
  };
}

/**
 * With a CA but no demanded certificate the handshake lets anyone in; a client that did present a
 * certificate the CA did not sign is refused here (403) rather than silently treated as anonymous.
 */
export function checkClientCertificate(socket: unknown): AccessVerdict {
  const tls = socket as Partial<TLSSocket> | undefined;
  if (tls === undefined || typeof tls.getPeerCertificate !== 'function' || tls.authorized === true) return allowed;
  const peer = tls.getPeerCertificate();
  if (peer === undefined || peer === null || Object.keys(peer).length === 0) return allowed;
  return {
    ok: false,
    status: 403,
    reason: 'certificate',
    message: `Client certificate not accepted: ${String(tls.authorizationError ?? 'not signed by a trusted CA')}`,
  };
}
