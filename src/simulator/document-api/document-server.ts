import type { DocumentModel } from '../../schema/document-model.js';
import { bearerChecker, checkClientCertificate, type AccessVerdict, type ServerTlsOptions } from '../http/auth.js';
import { Admission, defaultHeapMb } from '../admission.js';
import { BucketLocks, defaultBucketBits } from '../bucket-locks.js';
import { InProgress } from '../http/in-progress.js';
import { serverStats, type ServerStats } from './admin-paths.js';
import { Faults, type FaultSettings } from '../faults.js';
import { VisitCost } from './visit-cost.js';
import { createRequestHandler, type HandlerState } from './handler.js';
import { sendJson } from '../http/http-response.js';
import { createListener, listen, type RequestListener } from '../http/listener.js';
import { handlerErrorBody } from './responses.js';
import { DocumentStore } from './document-store.js';
import { SelectionCache } from './selection-cache.js';

/**
 * The document half of the Vespa simulator: /document/v1 as the real container answers it, on one port
 * that speaks HTTP/1.1 and cleartext HTTP/2, with faults to switch on at will.
 */
export interface DocumentServerOptions {
  /** Default '127.0.0.1'. */
  host?: string;
  /** Default 8080; 0 picks a free port. */
  port?: number;
  /** Content cluster names until a package is deployed (then the package's `<content>` ids); default ['content']. */
  clusters?: string[];
  /** 413 above this; default 100 MiB, the service's default (maxDocumentOperationRequestSizeMib). */
  maxBodyBytes?: number;
  /**
   * The container's JVM heap, in MiB: a quarter of it bounds the bytes of the operations waiting in the handler's
   * queue (maxThrottledBytes). Default 1536, the container's heap when the node's memory is not known.
   */
  heapMb?: number;
  faults?: Partial<FaultSettings>;
  /**
   * The bits of a document's location that make its bucket, whose lock a write holds at the content nodes for
   * `latencyMs` (writes to one bucket wait for each other; see docs/simulator.md). Default 16, the service's
   * distribution bits; fewer (e.g. 6) give a small corpus many documents per bucket.
   */
  bucketBits?: number;
  /**
   * Serve this store instead of a new one: a server started on the same port with the store of one that was
   * closed is that server killed and restarted with its data kept (`clusters` is then ignored).
   */
  store?: DocumentStore;
  /** One line per request: true for stderr, or a stream. Off by default. */
  requestLog?: boolean | NodeJS.WritableStream;
  /** Documents per plain visit response (without wantedDocumentCount), between continuation lines in a stream, and per bulk chunk. Default 1000. */
  visitChunkDocuments?: number;
  /** Document types stored in the global bucket space (seen only by visits with bucketSpace=global) until a package is deployed (then its `global="true"` types). Default none. */
  globalDocumentTypes?: string[];
  /** Serve HTTPS (HTTP/2 and HTTP/1.1 by ALPN) with this certificate; optionally demand client certificates. */
  tls?: ServerTlsOptions;
  /**
   * Require `Authorization: Bearer <token>` on every request except the simulator's own /_sim/ admin paths
   * (tests and operators change faults without credentials): missing 401, wrong 403.
   */
  token?: string;
}

export type { ServerTlsOptions } from '../http/auth.js';

export type { FaultSettings } from '../faults.js';
export type { ServerStats } from './admin-paths.js';
export { DocumentStore } from './document-store.js';
export type { StoredDocument, SeedDocument } from './document-store.js';

/** A running document-interface simulator: its URL, its store and its faults. */
export interface DocumentServer {
  /** 'http://127.0.0.1:<port>', or https:// with `tls`. */
  url: string;
  port: number;
  store: DocumentStore;
  /** The faults injected, changeable at run time. */
  faults: {
    /** The settings now. */
    get(): FaultSettings;
    /** Changes some settings; returns them all. */
    set(patch: Partial<FaultSettings>): FaultSettings;
    /** Faults injected so far, per kind. */
    injected(): Record<string, number>;
  };
  /**
   * Requests in progress now and the most seen at once, overall and on one connection (an HTTP/1.1 connection is
   * served one request at a time), and what waits in the handler's queue. `reset` starts the maxima afresh.
   */
  stats(options?: { reset?: boolean }): ServerStats;
  /** null: any type is accepted (nothing deployed yet); otherwise other types are 400. */
  setDocumentTypes(types: string[] | null): void;
  /**
   * The deployed package's document model (schemas, document-api settings); null: schema-less, as before a deploy.
   * @internal The simulator's config half calls it on activation.
   */
  setDocumentModel(model: DocumentModel | null): void;
  /**
   * Serves the deployed package's content clusters: their ids become the clusters, each holding only the document
   * types it lists, and the types marked `global` are visited in the global bucket space. null: back to `clusters`
   * and `globalDocumentTypes`.
   * @internal The simulator's config half calls it on activation.
   */
  setContentClusters(clusters: { id: string; documents: { type: string; global: boolean }[] }[] | null): void;
  /** Stops the server, closing open connections. */
  close(): Promise<void>;
}

export const defaultMaxBodyBytes = 100 * 1024 * 1024;

/**
 * Starts the /document/v1 simulator on loopback.
 * @example
 * ```ts
 * import { DocumentClient } from 'vespa-bulk';
 * import { startDocumentServer } from 'vespa-bulk/simulator';
 *
 * const server = await startDocumentServer({ port: 0, token: 'secret' });
 * const client = new DocumentClient({ endpoint: server.url, headers: { authorization: 'Bearer secret' } });
 * console.log((await client.get('id:mynamespace:music::nothing')).status); // 404
 * await client.close();
 * await server.close();
 * ```
 */
export async function startDocumentServer(options: DocumentServerOptions = {}): Promise<DocumentServer> {
  const host = options.host ?? '127.0.0.1';
  const store = options.store ?? new DocumentStore(options.clusters ?? ['content']);
  const faults = new Faults(options.faults);
  const heapMb = options.heapMb ?? defaultHeapMb;
  if (!(heapMb > 0) || !Number.isFinite(heapMb))
    throw new Error(`heapMb must be a positive number of MiB, got ${heapMb}`);
  const state: HandlerState = {
    store,
    faults,
    admission: new Admission(faults, heapMb),
    bucketLocks: new BucketLocks(options.bucketBits ?? defaultBucketBits),
    inProgress: new InProgress(),
    documentTypes: null,
    model: null,
    globalTypes: new Set(options.globalDocumentTypes ?? []),
    selections: new SelectionCache(),
    maxBodyBytes: options.maxBodyBytes ?? defaultMaxBodyBytes,
    visitChunkDocuments: Math.max(1, options.visitChunkDocuments ?? 1000),
    visitCost: new VisitCost(faults),
    log: requestLogger(options.requestLog),
  };
  const listener = createListener(guarded(createRequestHandler(state), options, state.log), {
    tls: options.tls,
    inProgress: state.inProgress,
  });
  const port = await listen(listener, options.port ?? 8080, host);
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `${options.tls ? 'https' : 'http'}://${urlHost}:${port}`,
    port,
    store,
    faults: { get: () => faults.get(), set: (patch) => faults.set(patch), injected: () => faults.injected() },
    stats(statsOptions) {
      const stats = serverStats(state);
      if (statsOptions?.reset === true) state.inProgress.reset();
      return stats;
    },
    setDocumentTypes(types) {
      state.documentTypes = types === null ? null : new Set(types);
    },
    setDocumentModel(model) {
      state.model = model;
    },
    setContentClusters(clusters) {
      store.serve(
        clusters === null ? null : clusters.map((c) => ({ name: c.id, documentTypes: c.documents.map((d) => d.type) })),
      );
      const globalTypes =
        clusters === null
          ? (options.globalDocumentTypes ?? [])
          : clusters.flatMap((c) => c.documents.filter((d) => d.global).map((d) => d.type));
      state.globalTypes = new Set(globalTypes);
    },
    close: () => {
      state.admission.close();
      return listener.close();
    },
  };
}

function requestLogger(option: boolean | NodeJS.WritableStream | undefined): ((line: string) => void) | undefined {
  if (option === undefined || option === false) return undefined;
  const out = option === true ? process.stderr : option;
  return (line) => {
    out.write(`${new Date().toISOString()} ${line}\n`);
  };
}

/**
 * The handler behind the access checks. Without a token and without optional client certificates this is the
 * handler itself, so the cleartext path costs nothing extra.
 */
function guarded(
  handler: RequestListener,
  options: DocumentServerOptions,
  log: ((line: string) => void) | undefined,
): RequestListener {
  const checkToken = options.token === undefined ? undefined : bearerChecker(options.token);
  const checkCert = options.tls?.ca !== undefined && options.tls.requireClientCert !== true;
  if (checkToken === undefined && !checkCert) return handler;
  return (req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const pathId = q < 0 ? url : url.slice(0, q);
    let verdict: AccessVerdict = checkCert ? checkClientCertificate(req.socket) : { ok: true };
    if (verdict.ok && checkToken !== undefined && !pathId.startsWith('/_sim/'))
      verdict = checkToken(req.headers.authorization);
    if (verdict.ok) {
      handler(req, res);
      return;
    }
    // The body is read and dropped so an HTTP/1.1 connection stays usable for the next request.
    req.resume();
    const headers = verdict.status === 401 ? { 'www-authenticate': 'Bearer realm="vespa"' } : undefined;
    sendJson(res, verdict.status, handlerErrorBody(pathId, verdict.message), headers);
    if (log !== undefined) log(`${req.method} ${pathId} ${verdict.status} (${verdict.reason})`);
  };
}
