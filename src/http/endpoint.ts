import { isIP } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import { VespaBulkError } from '../core/errors.js';
import type { TlsOptions } from './transport.js';

/** Splits an endpoint URL into the origin a transport connects to and a path prefix (no trailing slash). */
export function splitEndpoint(endpoint: string): { origin: string; prefix: string } {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new VespaBulkError('VB_USAGE', `invalid endpoint URL '${endpoint}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new VespaBulkError('VB_USAGE', `endpoint '${endpoint}' must be http:// or https://`);
  return { origin: url.origin, prefix: url.pathname.replace(/\/+$/, '') };
}

export function isLoopback(origin: string): boolean {
  const host = new URL(origin).hostname;
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\./.test(host);
}

/**
 * Where a connection to an origin goes: the host as sockets take it (IPv6 without brackets), the port (the scheme's
 * when none is given), and for https the node:tls options: SNI for a name (never for an address), the caller's
 * options, and the protocols ALPN offers.
 */
export function originConnection(
  origin: URL,
  tls: TlsOptions | undefined,
  alpn: string[],
): { host: string; port: number; tls: ConnectionOptions | undefined } {
  const host = origin.hostname.replace(/^\[|\]$/g, '');
  const https = origin.protocol === 'https:';
  return {
    host,
    port: Number(origin.port) || (https ? 443 : 80),
    tls: https ? { ...(isIP(host) === 0 && { servername: host }), ...tls, ALPNProtocols: alpn } : undefined,
  };
}
