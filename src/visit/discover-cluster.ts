import type { ConnectionOptions } from '../http/connection-options.js';
import { VespaBulkError } from '../core/errors.js';
import { createChainTransport } from '../http/create-transport.js';
import { headerList, parseBody, send } from '../http/exchange.js';
import { splitEndpoint } from '../http/endpoint.js';
import { Reachability } from '../http/reachability.js';
import { TransportError } from '../http/transport-error.js';

/**
 * The content clusters named in the service's answer to a visit of cluster `*`. The document API has no
 * listing of its clusters, but its 400 for an unknown cluster names every one it has: "Your Vespa deployment
 * has no content cluster '*', only 'a', 'b'". The official `vespa visit` finds its clusters the same way.
 */
export function clustersFromMessage(message: string): string[] | undefined {
  const m = /no content cluster '\*', only (.*)$/s.exec(message);
  if (!m) return undefined;
  return [...m[1].matchAll(/'([^']*)'/g)].map((x) => x[1]);
}

/** Where and how `discoverContentClusters` asks the document API for the content cluster names (`protocol` as the visit that follows speaks). */
export interface DiscoverOptions extends Omit<ConnectionOptions, 'transport'> {
  /** Container endpoint (a path prefix is kept). */
  endpoint: string;
  /** Aborts the request. */
  signal?: AbortSignal;
}

/** What asks for the content clusters: a visit of cluster `*`, which visits nothing. */
export const clusterDiscoveryPath = '/document/v1/?cluster=*&wantedDocumentCount=1';

/**
 * The content clusters in the service's answer to `clusterDiscoveryPath`. An answer that names none is a VB_VISIT
 * error quoting what it said, so the user can give `--cluster` instead.
 */
export function clustersFromAnswer(status: number, body: Buffer): string[] {
  const parsed = parseBody(body) as { message?: unknown } | undefined;
  const message = typeof parsed?.message === 'string' ? parsed.message : body.toString('utf8').slice(0, 300);
  const clusters = status === 400 ? clustersFromMessage(message) : undefined;
  if (clusters === undefined || clusters.length === 0) {
    throw new VespaBulkError(
      'VB_VISIT',
      `could not find the content clusters (asked with cluster=*, the service answered ${status}: ${message}); name one with --cluster`,
      {
        status,
      },
    );
  }
  return clusters;
}

/** Asks the service which content clusters it has (one request that visits nothing); see `clustersFromAnswer`. */
export async function discoverContentClusters(options: DiscoverOptions): Promise<string[]> {
  const { origin, prefix } = splitEndpoint(options.endpoint);
  const transport = createChainTransport(origin, 1, {
    protocol: options.protocol,
    timeoutMs: 60_000,
    tls: options.tls,
    proxy: options.proxy,
    proxyTls: options.proxyTls,
    onProtocol: options.onProtocol,
  });
  try {
    const res = await send(transport, {
      method: 'GET',
      path: `${prefix}${clusterDiscoveryPath}`,
      headers: headerList(options.headers),
      ...(options.signal !== undefined && { signal: options.signal }),
    }).catch((err: unknown) => {
      throw err instanceof TransportError ? (new Reachability(options.endpoint).verdict(err) ?? err) : err;
    });
    return clustersFromAnswer(res.status, res.body);
  } finally {
    await transport.close();
  }
}
