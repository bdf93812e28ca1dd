import { Http2Transport } from './h2/h2-transport.js';
import { Http1Transport } from './http1-transport.js';
import { AutoTransport } from './auto-transport.js';
import type { Transport, TransportOptions } from './transport.js';
import { proxyFor } from './proxy/proxy-route.js';

/**
 * A transport to one origin: HTTP/2, HTTP/1.1, or the one the server speaks (see `TransportOptions`).
 * @example
 * ```ts
 * import { createTransport, DocumentClient, feed } from 'vespa-bulk';
 *
 * // One set of connections for a feed and the reads after it; the caller closes it.
 * const transport = createTransport({ origin: 'http://127.0.0.1:8080', protocol: 'h2' });
 * try {
 *   await feed(['corpus.jsonl'], { endpoint: 'http://127.0.0.1:8080', transport });
 *   const client = new DocumentClient({ endpoint: 'http://127.0.0.1:8080', transport });
 *   console.log((await client.get('id:mynamespace:music::song-1')).status);
 *   await client.close();
 * } finally {
 *   await transport.close();
 * }
 * ```
 */
export function createTransport(options: TransportOptions): Transport {
  const protocol = options.protocol ?? 'auto';
  const tls = options.origin.startsWith('https:');
  const route = proxyFor(options.proxy, options.origin);
  const proxy = route === undefined ? undefined : { route, tls: options.proxyTls };
  const c = options.concurrency;
  const h2 = (alpn?: string[]): Http2Transport =>
    new Http2Transport(options.origin, {
      connections: options.connections ?? Math.min(defaultH2Connections, c ?? defaultH2Connections),
      maxStreams: options.maxStreams,
      timeoutMs: options.timeoutMs,
      tls: options.tls,
      alpn,
      maxConnectionAgeMs: options.maxConnectionAgeMs ?? defaultMaxConnectionAgeMs,
      proxy,
    });
  const h1 = (): Http1Transport =>
    new Http1Transport(options.origin, {
      connections: options.connections ?? (c !== undefined ? Math.ceil(c / Math.max(1, options.pipelining ?? 1)) : 128),
      pipelining: options.pipelining,
      timeoutMs: options.timeoutMs,
      batchWrites: options.batchWrites,
      tls: options.tls,
      proxy,
    });
  if (protocol === 'h2' || protocol === 'http1.1') {
    const transport = protocol === 'h2' ? h2() : h1();
    if (options.onProtocol !== undefined) queueMicrotask(() => options.onProtocol!(protocol));
    return transport;
  }
  return new AutoTransport(() => h2(tls ? ['h2', 'http/1.1'] : undefined), h1, tls, options.onProtocol);
}

/**
 * HTTP/2 connections kept open by default: enough for a layer-4 balancer to reach every container of a large
 * cluster, few enough to cost one node nothing (benchmarks/cluster/run.ts).
 */
export const defaultH2Connections = 16;

/**
 * The transport of `concurrency` chains of requests, each with one request out at a time (a visit's slices, a bulk
 * operation, cluster discovery): HTTP/2 streams spread over the connections, HTTP/1.1 a connection per chain,
 * since the container serves a connection one request at a time. Nothing to pipeline, no writes to batch.
 */
export function createChainTransport(
  origin: string,
  concurrency: number,
  options: Pick<
    TransportOptions,
    'protocol' | 'tls' | 'timeoutMs' | 'onProtocol' | 'connections' | 'maxConnectionAgeMs' | 'proxy' | 'proxyTls'
  >,
): Transport {
  return createTransport({ ...options, origin, concurrency, pipelining: 1, batchWrites: false });
}

/** How long an HTTP/2 connection carries new requests before it is renewed, by default (see `TransportOptions.maxConnectionAgeMs`). */
export const defaultMaxConnectionAgeMs = 60_000;
