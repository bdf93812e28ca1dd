import { proxyShown } from '../http/proxy/proxy-route.js';
import type { ConnectionOptions } from '../http/connection-options.js';
import { VespaBulkError, isVespaBulkError } from '../core/errors.js';
import {
  OptionError,
  checkExclusive,
  checkInteger,
  checkOneOf,
  checkProtocol,
  checkUrl,
} from '../core/options-check.js';
import { notRepeatedReason, parseRetryAfter } from '../http/retry-delay.js';
import { retryLoop, type AttemptFailure, type RetryLoopOptions } from '../http/retry-loop.js';
import type { Transport, WireProtocol } from '../http/transport.js';
import { createChainTransport } from '../http/create-transport.js';
import { header, headerList, jsonObjectOf, send } from '../http/exchange.js';
import { Reachability } from '../http/reachability.js';
import { TransportError } from '../http/transport-error.js';
import { answerMessage, statusMessage } from '../document/answer-message.js';
import { updatesRepeatSafely } from '../document/operation.js';
import { checkVisitRetry, resolveVisitRetry, type VisitRetryPolicy, type VisitSelectionOptions } from './options.js';
import { clusterDiscoveryPath, clustersFromAnswer } from './discover-cluster.js';
import { visitPath } from './query.js';
import { isServerDuration } from '../time/duration.js';
import { visit } from './visit.js';
import { checkSelection } from './selection-check.js';

/**
 * Bulk update, delete and copy by selection: the service does the work, a chunk of at most `timeChunk` per
 * request, and the client repeats the request with the continuation until none comes back.
 */
export type BulkKind = 'update-where' | 'delete-where' | 'copy';

/** Options of `bulkOperation()`. */
/** Options of `bulkOperation()`; how it reaches the service is `ConnectionOptions` (the protocol spoken is in the summary). */
export interface BulkOptions
  extends Pick<
      VisitSelectionOptions,
      'namespace' | 'documentType' | 'selection' | 'model' | 'cluster' | 'bucketSpace' | 'fromTimestamp' | 'toTimestamp'
    >,
    ConnectionOptions {
  /** Base URL of the container, e.g. http://127.0.0.1:8080. A path prefix is kept. */
  endpoint: string;
  kind: BulkKind;
  /** update-where: the update operations, `{"<field>":{"assign":...}}` (sent as `{"fields":...}`). */
  fields?: Record<string, unknown>;
  /**
   * update-where: `fields` as JSON text, sent as it is (takes precedence over `fields`, which should then hold
   * the same operations parsed). Keeps `long` values beyond 2^53 exact, which a JavaScript object cannot.
   */
  fieldsText?: string;
  /** copy: the cluster the documents are copied to. */
  destinationCluster?: string;
  /** Server-side work per request (`timeChunk`, e.g. `60s`). */
  timeChunk?: string;
  /** The service's time budget for each request, e.g. `60s`: its `timeout` query parameter. */
  serviceTimeout?: string;
  tracelevel?: number;
  /** Start from this token (from an earlier run that failed). */
  continuation?: string;
  /**
   * Change nothing: the service has no dry run for bulk operations, so the selected documents are visited
   * (ids only) and counted instead.
   */
  dryRun?: boolean;
  retry?: Partial<VisitRetryPolicy>;
  signal?: AbortSignal;
  /** After each answer: documents changed so far. */
  onProgress?: (documents: number) => void;
  /** Informational messages: retries, server warnings. */
  onMessage?: (text: string) => void;
}

/** How a bulk operation ended. */
export interface BulkSummary {
  kind: BulkKind;
  ok: boolean;
  dryRun: boolean;
  /** Documents changed (or, in a dry run, that would be). */
  documentCount: number;
  requests: number;
  retries: number;
  seconds: number;
  /** When it failed or was stopped: the token to continue from with `continuation`. */
  continuation?: string;
  error?: string;
  /** The HTTP spoken: `h2` or `http1.1` (absent with a caller's transport, or when nothing answered). */
  protocol?: WireProtocol;
  /** The forward proxy gone through, without credentials (absent for a direct connection, or with a caller's transport). */
  proxy?: string;
}

const methodOf = { 'update-where': 'PUT', 'delete-where': 'DELETE', copy: 'POST' } as const;

/** Refuses locally what the interface forbids, before anything is sent. */
export function validateBulkOptions(options: BulkOptions): void {
  checkUrl(options, 'endpoint');
  checkOneOf(options, 'kind', Object.keys(methodOf));
  const selection = options.selection?.trim() ?? '';
  if (options.kind === 'update-where' && selection === '') {
    throw new VespaBulkError(
      'VB_USAGE',
      'update-where needs --selection: the interface refuses to update every document at once (use --selection true if you mean it)',
    );
  }
  if (options.kind === 'delete-where' && selection === '') {
    throw new VespaBulkError(
      'VB_USAGE',
      'delete-where needs --selection; to delete every document of the type, say so with --selection true',
    );
  }
  if (
    options.kind === 'copy' &&
    (selection === '' || options.destinationCluster === undefined || options.cluster === undefined)
  ) {
    throw new VespaBulkError('VB_USAGE', 'copy needs --selection, --cluster and --destination-cluster');
  }
  checkSelection(options.selection, options.model?.types);
  if (options.kind === 'update-where') {
    const f = options.fields;
    if (f === undefined || typeof f !== 'object' || Array.isArray(f) || Object.keys(f).length === 0) {
      throw new VespaBulkError(
        'VB_USAGE',
        'update-where needs the update operations, e.g. \'{"fields":{"title":{"assign":"x"}}}\' or --assign title=\'"x"\'',
      );
    }
  }
  for (const name of ['timeChunk', 'serviceTimeout'] as const) {
    const value = options[name];
    if (value !== undefined && !isServerDuration(value))
      throw new OptionError(name, 'a number with unit s or ms, e.g. 60s', value);
  }
  checkInteger(options, 'tracelevel', 0, 9);
  checkVisitRetry(options.retry);
  // The own connection's TLS settings would be silently ignored with a caller's transport.
  checkExclusive(options, 'transport', 'tls');
  checkProtocol(options);
  visitPath(options);
}

/** Whether sending a chunk again after a cut connection or a proxy's 502/503/504 leaves the same result. */
function safeToRepeat(options: BulkOptions): boolean {
  if (options.kind !== 'update-where') return true;
  return updatesRepeatSafely(options.fields ?? {});
}

export function bulkQuery(options: BulkOptions, continuation: string | undefined): string {
  const q = new URLSearchParams();
  if (options.selection !== undefined) q.set('selection', options.selection);
  if (options.cluster !== undefined) q.set('cluster', options.cluster);
  if (options.destinationCluster !== undefined && options.kind === 'copy')
    q.set('destinationCluster', options.destinationCluster);
  if (options.bucketSpace !== undefined) q.set('bucketSpace', options.bucketSpace);
  if (options.fromTimestamp !== undefined) q.set('fromTimestamp', String(options.fromTimestamp));
  if (options.toTimestamp !== undefined) q.set('toTimestamp', String(options.toTimestamp));
  if (options.timeChunk !== undefined) q.set('timeChunk', options.timeChunk);
  if (options.serviceTimeout !== undefined) q.set('timeout', options.serviceTimeout);
  if (options.tracelevel !== undefined && options.tracelevel > 0) q.set('tracelevel', String(options.tracelevel));
  if (continuation !== undefined) q.set('continuation', continuation);
  return q.toString();
}

/**
 * Runs update-where, delete-where or copy until the service says it is done; resolves with the summary. Without
 * `cluster`, the service's only content cluster is asked for first (several are a VB_USAGE error).
 * @example
 * ```ts
 * import { bulkOperation } from 'vespa-bulk';
 *
 * const summary = await bulkOperation({
 *   endpoint: 'http://127.0.0.1:8080', kind: 'update-where', cluster: 'content',
 *   namespace: 'mynamespace', documentType: 'music', selection: 'music.year < 1970',
 *   fields: { popularity: { assign: 0 } },
 * });
 * console.log(summary.ok, summary.documentCount);
 * ```
 */
export async function bulkOperation(options: BulkOptions): Promise<BulkSummary> {
  validateBulkOptions(options);
  if (options.dryRun) return dryRun(options);
  const started = performance.now();
  const url = new URL(options.endpoint);
  const prefix = url.pathname.replace(/\/+$/, '');
  const summary: BulkSummary = {
    kind: options.kind,
    ok: false,
    dryRun: false,
    documentCount: 0,
    requests: 0,
    retries: 0,
    seconds: 0,
  };
  const proxy = options.transport === undefined ? proxyShown(options.proxy, options.endpoint) : undefined;
  if (proxy !== undefined) summary.proxy = proxy;
  // One request at a time.
  const transport =
    options.transport ??
    createChainTransport(url.origin, 1, {
      protocol: options.protocol,
      tls: options.tls,
      proxy: options.proxy,
      proxyTls: options.proxyTls,
      onProtocol: (protocol, why) => {
        summary.protocol = protocol;
        options.onProtocol?.(protocol, why);
      },
    });
  const body =
    options.kind !== 'update-where'
      ? undefined
      : Buffer.from(
          options.fieldsText !== undefined
            ? `{"fields":${options.fieldsText}}`
            : JSON.stringify({ fields: options.fields }),
        );
  const reach = new Reachability(options.endpoint);
  const chain: Chain = { transport, reach, options, headers: requestHeaders(options, body !== undefined) };
  const loop: RetryLoopOptions = {
    policy: resolveVisitRetry(options.retry),
    safeToRepeat: safeToRepeat(options),
    signal: options.signal,
    // Nothing answering at all, or a server without the HTTP/2 asked for, is not retried: it would fail every request alike.
    failureOf: chunkFailureOf,
    onRetry: ({ error, delayMs }) => {
      summary.retries++;
      options.onMessage?.(`${problemOf(error)}; retrying in ${delayMs} ms`);
    },
  };
  let continuation = options.continuation;
  try {
    const cluster =
      options.cluster ??
      (await onlyCluster(
        { ...chain, headers: requestHeaders(options, false) },
        `${prefix}${clusterDiscoveryPath}`,
        loop,
      ));
    if (typeof cluster !== 'string') summary.error = cluster.error;
    const sent = { ...options, cluster: typeof cluster === 'string' ? cluster : undefined };
    while (summary.error === undefined) {
      const path = `${prefix}${visitPath(options)}${queryString(bulkQuery(sent, continuation))}`;
      const outcome = await retryLoop(() => {
        summary.requests++;
        return sendChunk(chain, path, body);
      }, loop);
      if (outcome.kind !== 'succeeded') {
        summary.error = outcome.kind === 'aborted' ? 'stopped' : problemOf(outcome.error, loop.safeToRepeat);
        break;
      }
      const answer = outcome.value;
      summary.documentCount += typeof answer.documentCount === 'number' ? answer.documentCount : 0;
      options.onProgress?.(summary.documentCount);
      continuation =
        typeof answer.continuation === 'string' && answer.continuation !== '' ? answer.continuation : undefined;
      if (continuation === undefined) {
        summary.ok = true;
        break;
      }
    }
  } finally {
    if (options.transport === undefined) await transport.destroy().catch(() => {});
  }
  if (!summary.ok && continuation !== undefined) summary.continuation = continuation;
  summary.seconds = (performance.now() - started) / 1000;
  return summary;
}

type BulkAnswer = { documentCount?: unknown; continuation?: unknown; message?: unknown };

/** A failed chunk by its answer; a transport failure by whether the request may have been applied; nothing else is retried. */
function chunkFailureOf(err: unknown): AttemptFailure | undefined {
  if (err instanceof ChunkFailure) return err;
  return err instanceof TransportError ? { maybeApplied: err.maybeApplied } : undefined;
}

/** As `chunkFailureOf`, but the cluster discovery's GET is repeated after any transport failure. */
function discoveryFailureOf(err: unknown): AttemptFailure | undefined {
  if (err instanceof ChunkFailure) return err;
  return err instanceof TransportError ? {} : undefined;
}

/**
 * A chunk the service did not do, or of which it is unknown what it did: its status (undefined when the answer said
 * nothing) and what it said; `maybeApplied` for an answer that cannot be read.
 */
class ChunkFailure extends Error {
  constructor(
    message: string,
    readonly status: number | undefined,
    readonly retryAfterMs?: number,
    readonly maybeApplied?: boolean,
  ) {
    super(message);
  }
}

/** What went wrong, and (given `safeToRepeat`) whether the chunk was left unrepeated because it may have applied. */
function problemOf(err: unknown, safeToRepeat = true): string {
  const failure = chunkFailureOf(err);
  const problem =
    err instanceof ChunkFailure ? err.message : `request failed: ${err instanceof Error ? err.message : String(err)}`;
  const notRepeated = failure === undefined ? undefined : notRepeatedReason({ ...failure, safeToRepeat });
  return notRepeated === undefined ? problem : `${problem}; ${notRepeated}`;
}

function queryString(query: string): string {
  return query === '' ? '' : `?${query}`;
}

/** One request of the chain: resolves with a 2xx answer, rejects with a ChunkFailure for any other status. */
async function sendChunk(chain: Chain, path: string, body: Buffer | undefined): Promise<BulkAnswer> {
  const res = await request(chain, methodOf[chain.options.kind], path, body);
  if (res.status >= 200 && res.status < 300) {
    // Not the service's JSON: cut where the protocol could not tell, or not the service. What it did is unknown.
    const whole = jsonObjectOf(Buffer.from(res.text));
    if (whole === undefined)
      throw new ChunkFailure(
        `HTTP ${res.status} with an answer that is not the service's JSON: outcome unknown`,
        undefined,
        undefined,
        true,
      );
    return whole;
  }
  throw failureOf(res, answerOf(res.text));
}

/**
 * The content cluster when the caller named none: the service requires one for the bulk operations even when it
 * has a single one, and names them all when asked for cluster '*' (as the official client finds them). Several
 * are a usage error; a service that cannot be asked ends the run, as a failed chunk does.
 */
async function onlyCluster(chain: Chain, path: string, loop: RetryLoopOptions): Promise<string | { error: string }> {
  const options = chain.options;
  const outcome = await retryLoop(
    async () => {
      const res = await request(chain, 'GET', path, undefined);
      // Overload and server errors are retried like a chunk's; any other answer names the clusters or says why not.
      if (res.status === 429 || res.status >= 500) throw failureOf(res, answerOf(res.text));
      return clustersFromAnswer(res.status, Buffer.from(res.text));
    },
    { ...loop, safeToRepeat: true, failureOf: discoveryFailureOf },
  );
  if (outcome.kind !== 'succeeded') return { error: outcome.kind === 'aborted' ? 'stopped' : problemOf(outcome.error) };
  const clusters = outcome.value;
  if (clusters.length > 1)
    throw new VespaBulkError(
      'VB_USAGE',
      `the service has several content clusters (${clusters.map((c) => `'${c}'`).join(', ')}): name one with cluster`,
    );
  options.onMessage?.(`content cluster '${clusters[0]}' (the service's only one)`);
  return clusters[0];
}

interface Answered {
  status: number;
  text: string;
  retryAfterMs: number | undefined;
}

/** What the requests of one bulk operation share. */
interface Chain {
  transport: Transport;
  reach: Reachability;
  options: BulkOptions;
  headers: readonly string[];
}

function requestHeaders(options: BulkOptions, withBody: boolean): string[] {
  return headerList({
    accept: 'application/json',
    ...(withBody && { 'content-type': 'application/json' }),
    ...options.headers,
  });
}

/** One request; rejects with the TransportError of a failure to retry, or the VespaBulkError of one that ends the run. */
async function request(
  chain: Chain,
  method: 'GET' | 'PUT' | 'POST' | 'DELETE',
  path: string,
  body: Buffer | undefined,
): Promise<Answered> {
  try {
    const res = await send(chain.transport, {
      method,
      path,
      headers: chain.headers,
      body,
      signal: chain.options.signal,
    });
    chain.reach.answer();
    return {
      status: res.status,
      text: res.body.toString('utf8'),
      retryAfterMs: parseRetryAfter(header(res.headers, 'retry-after')),
    };
  } catch (err) {
    throw err instanceof TransportError ? (chain.reach.verdict(err) ?? err) : err;
  }
}

function answerOf(text: string): BulkAnswer {
  try {
    return (JSON.parse(text) as BulkAnswer | null) ?? {};
  } catch {
    return { message: answerMessage(text) };
  }
}

function failureOf(res: Answered, answer: BulkAnswer): ChunkFailure {
  return new ChunkFailure(
    statusMessage(res.status, typeof answer.message === 'string' ? answer.message : undefined),
    res.status,
    res.retryAfterMs,
  );
}

async function dryRun(options: BulkOptions): Promise<BulkSummary> {
  const started = performance.now();
  const v = visit({
    endpoint: options.endpoint,
    headers: options.headers,
    transport: options.transport,
    tls: options.tls,
    proxy: options.proxy,
    proxyTls: options.proxyTls,
    protocol: options.protocol,
    onProtocol: options.onProtocol,
    namespace: options.namespace,
    documentType: options.documentType,
    selection: options.selection,
    cluster: options.cluster,
    // The bulk request at the root touches the default space only (unless told), so that is what is counted.
    bucketSpace: options.bucketSpace ?? (options.documentType === undefined ? 'default' : undefined),
    fromTimestamp: options.fromTimestamp,
    toTimestamp: options.toTimestamp,
    fieldSet: '[id]',
    retry: options.retry,
    signal: options.signal,
  });
  let n = 0;
  const summary: BulkSummary = {
    kind: options.kind,
    ok: true,
    dryRun: true,
    documentCount: 0,
    requests: 0,
    retries: 0,
    seconds: 0,
  };
  try {
    for await (const _ of v) {
      void _;
      if (++n % 10_000 === 0) options.onProgress?.(n);
    }
  } catch (err) {
    // Asked for HTTP/2 of a server without it: a usage error, as without the dry run.
    if (isVespaBulkError(err, 'VB_PROTOCOL')) throw err;
    summary.ok = false;
    summary.error = err instanceof Error ? err.message : String(err);
  }
  const report = await v.report.catch(() => undefined);
  summary.documentCount = n;
  if (report?.protocol !== undefined) summary.protocol = report.protocol;
  summary.requests = report?.slices.reduce((s, r) => s + r.requests, 0) ?? 0;
  summary.retries = report?.slices.reduce((s, r) => s + r.retries, 0) ?? 0;
  summary.seconds = (performance.now() - started) / 1000;
  options.onProgress?.(n);
  return summary;
}
