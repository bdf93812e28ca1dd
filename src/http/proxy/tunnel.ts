import net, { type Socket } from 'node:net';
import tls from 'node:tls';
import { TransportError, toTransportError } from '../transport-error.js';
import type { TlsOptions } from '../transport.js';
import { connectHeader, connectRequestHead, parseConnectResponse, type ConnectResponse } from './connect-response.js';
import type { PendingSocket } from './pending-socket.js';
import type { ProxyRoute } from './proxy-route.js';

/** A forward proxy, resolved: where it is (see `proxyFor`) and the TLS options of an https:// one (its CA). */
export interface ProxyHop {
  route: ProxyRoute;
  tls?: TlsOptions;
}

/** How `openTunnel` reaches its target. */
export interface TunnelOptions {
  /** TLS to the target inside the tunnel (an https endpoint): node:tls options, ALPN and servername included. */
  tls?: tls.ConnectionOptions;
  /** Bound on all of it, in ms: the connection to the proxy, its answer to CONNECT, and the TLS handshake with the target. */
  timeoutMs: number;
}

/**
 * `TransportError.detail` of a proxy that will not tunnel to an http:// endpoint (403, 405, 501...): HTTP/2 there
 * needs a tunnel, HTTP/1.1 can go through the proxy as a forwarding one (see `AutoTransport`).
 */
export const noTunnelDetail = 'PROXY_NO_TUNNEL';

/**
 * One connection through a forward proxy (RFC 9110 §9.3.6): connects to the proxy (TLS to it for an https:// proxy),
 * asks `CONNECT host:port`, and on a 2xx hands over the tunnel, after a TLS handshake with the target through it
 * when `options.tls` is given. Each call is a connection of its own, so a pool's connections are separate tunnels
 * and a layer-4 balancer behind the proxy still spreads them.
 *
 * Every failure before the tunnel carries a byte of ours is a `TransportError` of failure `connect` (or
 * `connect-timeout`; `tls` for the target's handshake): nothing was sent, so any request may be retried, and its
 * `unreachable` names the proxy, so that a wrong proxy ends a run at once (see `Reachability`).
 */
export function openTunnel(hop: ProxyHop, host: string, port: number, options: TunnelOptions): PendingSocket {
  const route = hop.route;
  const authority = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  const proxyTls = route.protocol === 'https:';
  let settled = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Socket | undefined;
  let stage = 'accept the connection';
  const finish = (): void => {
    settled = true;
    clearTimeout(timer);
  };
  const promise = new Promise<Socket>((resolve, reject) => {
    const fail = (err: TransportError): void => {
      if (settled) return;
      finish();
      current?.destroy();
      reject(err);
    };
    timer = setTimeout(() => {
      const seconds = Math.round(options.timeoutMs / 100) / 10;
      const words = `the proxy ${route.shown} did not ${stage} within ${seconds} s`;
      fail(new TransportError('connect-timeout', words, { unreachable: words, detail: 'PROXY_TIMEOUT' }));
    }, options.timeoutMs);
    const raw = proxyTls
      ? tls.connect({
          host: route.host,
          port: route.port,
          ...(net.isIP(route.host) === 0 && { servername: route.host }),
          ...hop.tls,
          ALPNProtocols: ['http/1.1'],
        })
      : net.connect({ host: route.host, port: route.port });
    current = raw;
    raw.setNoDelay(true);
    raw.once(proxyTls ? 'secureConnect' : 'connect', () => {
      stage = `answer CONNECT ${authority}`;
      raw.write(connectRequestHead(host, port, route.authorization));
    });
    const onError = (err: Error): void => fail(proxyConnectionError(route, err, proxyTls));
    const onClose = (): void => {
      const words = `the proxy ${route.shown} closed the connection before answering CONNECT ${authority}`;
      fail(new TransportError('connect', words, { unreachable: words, detail: 'PROXY_CLOSED' }));
    };
    let head: Buffer | undefined;
    const onData = (chunk: Buffer): void => {
      head = head === undefined ? chunk : Buffer.concat([head, chunk]);
      let parsed: ReturnType<typeof parseConnectResponse>;
      try {
        parsed = parseConnectResponse(head);
      } catch (err) {
        const words = `the proxy ${route.shown} answered CONNECT ${authority} with something that is not HTTP: ${(err as Error).message}`;
        fail(new TransportError('connect', words, { unreachable: words, detail: 'PROXY_PROTOCOL', cause: err }));
        return;
      }
      if (parsed === undefined) return;
      raw.removeListener('data', onData);
      raw.pause();
      const { response, rest } = parsed;
      if (response.status < 200 || response.status > 299) {
        fail(refusal(route, authority, response, options.tls !== undefined));
        return;
      }
      raw.removeListener('error', onError);
      raw.removeListener('close', onClose);
      if (options.tls === undefined) {
        if (rest.length > 0) raw.unshift(rest);
        finish();
        resolve(raw);
        return;
      }
      if (rest.length > 0) {
        const words = `the proxy ${route.shown} sent ${rest.length} bytes into the tunnel to ${authority} before the TLS handshake`;
        fail(new TransportError('connect', words, { unreachable: words, detail: 'PROXY_PROTOCOL' }));
        return;
      }
      // The TLS socket reads and fails for it from here; an error the old one still emits is the same failure.
      raw.on('error', () => undefined);
      stage = `let the TLS handshake with ${authority} through`;
      const secure = tls.connect({ host, ...options.tls, socket: raw });
      current = secure;
      const onTlsError = (err: Error): void => fail(throughProxy(toTransportError(err, true), route));
      secure.once('error', onTlsError);
      secure.once('close', onClose);
      secure.once('secureConnect', () => {
        secure.removeListener('error', onTlsError);
        secure.removeListener('close', onClose);
        if (settled) return;
        secure.pause();
        finish();
        resolve(secure);
      });
    };
    raw.on('data', onData);
    raw.on('error', onError);
    raw.on('close', onClose);
  });
  return {
    promise,
    cancel() {
      if (settled) return;
      finish();
      current?.destroy();
    },
  };
}

/** The failure of the connection to the proxy itself: refused, unknown host, its TLS. */
function proxyConnectionError(route: ProxyRoute, err: Error, proxyTls: boolean): TransportError {
  const lower = toTransportError(err, proxyTls);
  // Its certificate is trusted with --proxy-ca, not the endpoint's --ca.
  const cause = (lower.unreachable ?? lower.message).replace('(--ca)', '(--proxy-ca)');
  const words = `the proxy ${route.shown} cannot be reached: ${cause}`;
  return new TransportError('connect', words, { unreachable: words, detail: 'PROXY_UNREACHABLE', cause: err });
}

/** A lower failure inside the tunnel, its message saying which way it went. */
function throughProxy(err: TransportError, route: ProxyRoute): TransportError {
  const via = ` (through the proxy ${route.shown})`;
  return new TransportError(err.failure, `${err.message}${via}`, {
    unreachable: err.unreachable === undefined ? undefined : `${err.unreachable}${via}`,
    detail: err.detail,
    cause: err.cause ?? err,
  });
}

/** The proxy's answer to CONNECT was not a 2xx: why, in a user's words, and whether HTTP/1.1 may still go through it. */
function refusal(route: ProxyRoute, authority: string, response: ConnectResponse, tlsTarget: boolean): TransportError {
  const status = `${response.status}${response.reason === '' ? '' : ` ${response.reason}`}`;
  let words: string;
  let detail: string;
  if (response.status === 407) {
    words = proxyAuthWords(route, status, connectHeader(response, 'proxy-authenticate'));
    detail = 'PROXY_AUTH';
  } else if (response.status === 502 || response.status === 503 || response.status === 504) {
    words = `the proxy ${route.shown} could not reach ${authority} (${status})`;
    detail = 'PROXY_UPSTREAM';
  } else if (response.status >= 400 && response.status < 500) {
    words = `the proxy ${route.shown} refuses to tunnel to ${authority} (${status})`;
    detail = tlsTarget ? 'PROXY_REFUSED' : noTunnelDetail;
  } else {
    words = `the proxy ${route.shown} answered CONNECT ${authority} with ${status}`;
    detail = tlsTarget ? 'PROXY_REFUSED' : noTunnelDetail;
  }
  const unreachable =
    detail === noTunnelDetail
      ? `${words}; HTTP/2 to an http:// endpoint needs a CONNECT tunnel: --protocol auto or http1.1 sends HTTP/1.1 through the proxy instead`
      : words;
  return new TransportError('connect', words, { unreachable, detail });
}

/** A proxy's 407, in a user's words: which credentials to give, and how. */
export function proxyAuthWords(route: ProxyRoute, status: string, challenge: string | undefined): string {
  const scheme = /^\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)/.exec(challenge ?? '')?.[1];
  const basic = scheme === undefined || scheme.toLowerCase() === 'basic';
  const how = basic
    ? `give them in the proxy's URL: ${route.protocol}//USER:PASSWORD@${route.shown.slice(route.protocol.length + 2)}`
    : `it asks for ${scheme}, and vespa-bulk speaks only Basic proxy authentication`;
  return `the proxy ${route.shown} ${route.authorization === undefined ? 'asks for credentials' : 'refused the credentials in its URL'} (${status}): ${how}`;
}
