import { VespaBulkError } from '../errors.js';

/**
 * Whether a transport error means that nothing answers at the endpoint at all (as opposed to a service that
 * answered and then failed): the connection was refused, the host name does not resolve, the TLS handshake
 * failed, or nothing accepted the connection in time. Pure: decided by the error codes of node and undici.
 */

/** Connection-level codes and what they mean to a user. */
const causes: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'unknown host',
  EAI_AGAIN: 'the host name could not be resolved',
  EAI_NONAME: 'unknown host',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EADDRNOTAVAIL: 'address not available',
  UND_ERR_CONNECT_TIMEOUT: 'connect timed out',
  ERR_TLS_HANDSHAKE_TIMEOUT: 'TLS handshake timed out',
  ERR_TLS_CERT_ALTNAME_INVALID: "TLS handshake failed: the server's certificate is not for this host name",
  DEPTH_ZERO_SELF_SIGNED_CERT: "TLS handshake failed: the server's certificate is self-signed and not trusted (--ca)",
  SELF_SIGNED_CERT_IN_CHAIN: "TLS handshake failed: the server's certificate chain is not trusted (--ca)",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "TLS handshake failed: the server's certificate is not trusted (--ca)",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: "TLS handshake failed: the server's certificate is not trusted (--ca)",
  CERT_HAS_EXPIRED: "TLS handshake failed: the server's certificate has expired",
  CERT_NOT_YET_VALID: "TLS handshake failed: the server's certificate is not valid yet",
  EPROTO: 'TLS handshake failed',
};

/** The error and its causes, outermost first (a TransportError wraps undici's). */
function chainOf(err: unknown): Array<{ code?: unknown; undiciCode?: unknown; socket?: { bytesRead?: unknown } }> {
  const chain = [];
  for (let e = err as { cause?: unknown } | undefined, depth = 0; typeof e === 'object' && e !== null && depth < 4; depth++) {
    chain.push(e as { code?: unknown }); // eslint-disable-line @typescript-eslint/no-unnecessary-type-assertion -- the chain holds what the check reads
    e = e.cause as typeof e;
  }
  return chain;
}

/**
 * What a connection-level error means in words, or undefined when it is not one (the endpoint may have
 * answered). `tls`: the endpoint is https, where a connection closed before a single byte of answer is how a
 * TLS 1.3 server refuses the client's certificate (the client's side of the handshake has already ended).
 */
export function unreachableCause(err: unknown, tls = false): string | undefined {
  for (const e of chainOf(err)) {
    for (const code of [e.undiciCode, e.code]) {
      if (typeof code !== 'string') continue;
      const known = causes[code];
      if (known !== undefined) return `${known} (${code})`;
      // OpenSSL's own codes: the peer speaks no TLS, refused ours, or sent an alert during the handshake.
      if (code.startsWith('ERR_SSL_')) return `TLS handshake failed (${code})`;
      if (tls && code === 'UND_ERR_SOCKET' && e.socket?.bytesRead === 0) {
        return `TLS handshake refused: the server closed the connection without answering; does it need a client certificate (--cert, --key)? (${code})`;
      }
    }
  }
  return undefined;
}

/** Base URL without credentials or query, for messages. */
export function describeEndpoint(endpoint: string): string {
  try {
    const url = new URL(endpoint);
    return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
  } catch {
    return endpoint;
  }
}

/** The VB_UNREACHABLE error for `endpoint`, naming the cause. */
export function unreachableError(endpoint: string, cause: string, err?: unknown): VespaBulkError {
  return new VespaBulkError('VB_UNREACHABLE', `nothing answers at ${describeEndpoint(endpoint)}: ${cause}`, { cause: err });
}

/**
 * Whether a request failed because the server does not speak HTTP/2, which it was asked for (`protocol: 'h2'`):
 * the H2Error `H2_NOT_SUPPORTED`, as it is or wrapped in a TransportError.
 */
export function isH2Refusal(err: unknown): boolean {
  return chainOf(err).some((e) => e.code === 'H2_NOT_SUPPORTED' || e.undiciCode === 'H2_NOT_SUPPORTED');
}

/** The VB_PROTOCOL error for an endpoint that does not speak HTTP/2 although `protocol: 'h2'` asked for it. */
export function protocolError(endpoint: string, err: unknown): VespaBulkError {
  const refusal = chainOf(err).find((e) => e.code === 'H2_NOT_SUPPORTED') as { message?: string } | undefined;
  const why = refusal?.message ?? 'it does not speak HTTP/2';
  return new VespaBulkError('VB_PROTOCOL', `${describeEndpoint(endpoint)} does not speak HTTP/2 (${why}); use --protocol auto or --protocol http1.1`, { cause: err });
}
