import type { TlsOptions } from '../transport.js';
import type { ProxyHop } from '../proxy/tunnel.js';

/** How an `Http2Transport` (h2-transport.ts) connects and holds its connections. */
export interface H2PoolOptions {
  /** Connections kept open while there is work, the requests spread over them. Default 1 (`createTransport` sets the transport's default). */
  connections?: number;
  /** Streams at once per connection at most (the server's own limit applies too). Default 256. */
  maxStreams?: number;
  /** TLS options for https (ca, cert, key, rejectUnauthorized, servername). */
  tls?: TlsOptions;
  /** ms to connect (and, for TLS, to finish the handshake). Default 10 s. */
  connectTimeoutMs?: number;
  /** Default bound on the wait for an answer's headers, and on any gap in its body, in ms; 0 none. Default 300 s. */
  timeoutMs?: number;
  /** Receive window per stream. Default {@link defaultStreamWindow}, 16 MiB. */
  streamWindow?: number;
  /**
   * Receive window of each connection: the most its streams together hold received and unread (a paused reader's
   * share is returned when it reads on). Default {@link connectionWindowFor} the pool's connections.
   */
  connectionWindow?: number;
  /** ALPN protocols offered on https. Default ['h2']; the auto pool offers http/1.1 too. */
  alpn?: string[];
  /** See `TransportOptions.maxConnectionAgeMs`. Default 0: never (`createTransport` sets the transport's default). */
  maxConnectionAgeMs?: number;
  /** A forward proxy to reach the origin through: each connection its own CONNECT tunnel (see `openTunnel`). */
  proxy?: ProxyHop;
}

/**
 * The receive window of a stream unless told otherwise (SETTINGS_INITIAL_WINDOW_SIZE): what the server may send on
 * it before our WINDOW_UPDATE comes back, so a stream's rate is at most about this much per round trip. 16 MiB: an
 * export of 4 slices over a 20 ms round trip ran at 3.0 times the documents/s of 1 MiB (4.1 times at 50 ms), as fast
 * as HTTP/1.1 through the same delaying relay (benchmarks/visit/protocols.ts windows). What the streams together hold
 * unread is bounded by the connection's window, not by this times the streams.
 */
export const defaultStreamWindow = 16 << 20;

/**
 * The default receive window of each connection: a share of 256 MiB for the whole pool (64 MiB at most, the stream
 * window at least), so that what a slow reader leaves unread is bounded by the pool, not by its connections times a
 * window (16 connections of 64 MiB held about 1 GiB behind a lagging export). 16 connections get 16 MiB each: one
 * stream's whole window, and at 20 ms a round trip still some 800 MB/s per connection.
 */
export function connectionWindowFor(connections: number): number {
  const share = Math.floor((256 << 20) / Math.max(1, connections));
  return Math.min(64 << 20, Math.max(defaultStreamWindow, share));
}
