import type { buildConnector as BuildConnector } from 'undici';
import { originConnection } from '../endpoint.js';
import { header } from '../exchange.js';
import type { RequestControl, ResponseHandler, TlsOptions } from '../transport.js';
import { TransportError } from '../transport-error.js';
import type { ProxyRoute } from './proxy-route.js';
import { openTunnel, proxyAuthWords, type ProxyHop } from './tunnel.js';

/** How long a tunnel may take to open, as undici's own connector allows a connection (10 s). */
const tunnelTimeoutMs = 10_000;

/** An undici connector whose every connection is a tunnel through the proxy to `origin` (TLS to it inside for https). */
export function tunnelConnector(hop: ProxyHop, origin: URL, tls: TlsOptions | undefined): BuildConnector.connector {
  const { host, port, tls: tlsOptions } = originConnection(origin, tls, ['http/1.1']);
  return (_opts, callback) => {
    openTunnel(hop, host, port, { tls: tlsOptions, timeoutMs: tunnelTimeoutMs }).promise.then(
      (socket) => {
        callback(null, socket);
        // Flows once undici listens: it does so before the next tick.
        socket.resume();
      },
      (err: Error) => callback(err, null),
    );
  };
}

/** The origin of the proxy itself, for a client that sends its requests there. */
export function proxyOrigin(route: ProxyRoute): string {
  return `${route.protocol}//${route.host.includes(':') ? `[${route.host}]` : route.host}:${route.port}`;
}

/**
 * A request forwarded by the proxy (absolute URI): the proxy's own 407 is its refusal, not the endpoint's answer, so
 * it fails the request as a tunnel's 407 does (never sent), instead of reaching the caller as a status.
 */
export class Forwarded implements ResponseHandler {
  private refusal: string | undefined;

  constructor(
    private readonly route: ProxyRoute,
    private readonly inner: ResponseHandler,
  ) {}

  onStart(control: RequestControl): void {
    this.inner.onStart?.(control);
  }

  onHeaders(status: number, headers: readonly string[]): void {
    if (status === 407) this.refusal = proxyAuthWords(this.route, '407', header(headers, 'proxy-authenticate'));
    else this.inner.onHeaders(status, headers);
  }

  onData(chunk: Buffer): void {
    if (this.refusal === undefined) this.inner.onData(chunk);
  }

  onComplete(): void {
    if (this.refusal === undefined) this.inner.onComplete();
    else
      this.inner.onError(
        new TransportError('connect', this.refusal, { unreachable: this.refusal, detail: 'PROXY_AUTH' }),
      );
  }

  onError(err: TransportError): void {
    this.inner.onError(err);
  }
}
