import type { ProxySetting } from './proxy/proxy-route.js';
import type { Protocol, TlsOptions, Transport, WireProtocol } from './transport.js';

/**
 * How a call reaches the service, the same fields with the same meanings for `feed()` (`FeedOptions`), `visit()`
 * and the exports (`VisitOptions`), `bulkOperation()` (`BulkOptions`) and `DocumentClient`
 * (`DocumentClientOptions`), each of which extends it. Each call opens its own connections from these (see
 * `TransportOptions`), unless given a `transport` to send through.
 */
export interface ConnectionOptions {
  /** Extra headers on every request (authentication tokens). */
  headers?: Record<string, string>;
  /**
   * Which HTTP the own connections speak. `auto` (default): HTTP/2 where the server speaks it (cleartext with prior
   * knowledge on http://, ALPN on https://), else HTTP/1.1. `h2`: HTTP/2, or the call fails with VB_PROTOCOL before
   * anything is applied. `http1.1`. The protocol spoken is told to `onProtocol` (and is in the call's summary or
   * report).
   */
  protocol?: Protocol;
  /**
   * Called once the protocol is known (with `auto`: once the server has answered the first connection); `why`, when
   * the choice was not the server's own (a proxy that will not tunnel), says so in words.
   */
  onProtocol?: (protocol: WireProtocol, why?: string) => void;
  /** TLS options for https endpoints (ca, cert, key), e.g. `connectOptions(security)`, exported by the package. */
  tls?: TlsOptions;
  /** The forward proxy: see `TransportOptions.proxy`. */
  proxy?: ProxySetting;
  /** TLS options of an https:// proxy: see `TransportOptions.proxyTls`. */
  proxyTls?: TlsOptions;
  /**
   * Send through this transport (`createTransport`) instead of connections of the call's own; `protocol`, `tls`,
   * `proxy` and `proxyTls` then apply to nothing sent to the service (the transport's own settings do). It is lent, not given: the call never closes or destroys it, also
   * when it stops with requests still on the wire (it aborts only its own), so one transport can serve a feed, a
   * visit and a `DocumentClient` at once.
   */
  transport?: Transport;
}
