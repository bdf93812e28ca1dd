import type { Dispatcher, buildConnector } from 'undici';
import { VespaBulkError } from '../errors.js';
import { Http2Pool } from './h2/pool.js';
import { Http1Pool } from './http1-pool.js';
import { AutoPool, type WireProtocol } from './auto-pool.js';

export type { WireProtocol } from './auto-pool.js';

/** Which HTTP the client speaks: `auto` (HTTP/2 where the server speaks it, else HTTP/1.1), `h2` or `http1.1`. */
export type Protocol = 'auto' | WireProtocol;

/**
 * The client's HTTP edge: `createPool` makes every connection pool the client opens (feeder, document client,
 * visitor, bulk operations, cluster discovery, `--wait` probes), so connection settings live in one place.
 * The config-server client is not one of them: it sends a few requests, to URLs the server may redirect
 * anywhere, through an Agent (`createSecureDispatcher`) or undici's global dispatcher.
 * `send` and `dispatchTo` are built on `dispatch` with a plain handler rather than `request()`, which wraps
 * every body in a Readable: for millions of small responses that wrapper is most of the cost.
 */
export interface PoolOptions {
  /** Endpoint origin, e.g. http://127.0.0.1:8080. */
  origin: string;
  /**
   * `auto` (default): HTTP/2 where the server speaks it (h2c with prior knowledge on http://, ALPN on https://),
   * else HTTP/1.1. `h2`: HTTP/2 only; a server that does not speak it fails every request (H2_NOT_SUPPORTED).
   * `http1.1`: HTTP/1.1 only.
   */
  protocol?: Protocol;
  /**
   * Connections at most, opened as the requests at once need them (HTTP/2: another when the open ones are half
   * full). Default: from `concurrency`, else 4 for HTTP/2 and 128 for HTTP/1.1.
   */
  connections?: number;
  /**
   * Requests the caller keeps in flight at most (a feed's in-flight maximum, a visit's chains), when `connections`
   * is not given: HTTP/1.1 then opens up to one connection per request (per `pipelining`), HTTP/2 one connection per
   * `maxStreams`.
   */
  concurrency?: number;
  /** HTTP/2: streams at once per connection at most (the server's SETTINGS_MAX_CONCURRENT_STREAMS applies too). Default 256. */
  maxStreams?: number;
  /** HTTP/1.1: requests on one connection at once (1: none pipelined; 0: a connection per request). Default 1. */
  pipelining?: number;
  /** Bound on the wait for an answer's headers and on any gap in its body, per request unless it sets its own. Default 300 s. */
  timeoutMs?: number;
  /** HTTP/1.1: gather the writes of one event-loop turn into one syscall. Default: when pipelining. */
  batchWrites?: boolean;
  /** TLS options for https endpoints (ca, cert, key...), e.g. `connectOptions(security)`, exported by the package. */
  tls?: buildConnector.BuildOptions;
  /** Called once with the protocol `auto` chose (at once for `h2` and `http1.1`). */
  onProtocol?: (protocol: WireProtocol) => void;
}

/** A pool of `createPool`: a dispatcher that knows the protocol it speaks (undefined until `auto` has asked). */
export type ProtocolPool = Dispatcher & { readonly protocol: WireProtocol | undefined; detect?: () => Promise<WireProtocol> };

export function createPool(options: PoolOptions): ProtocolPool {
  const protocol = options.protocol ?? 'auto';
  const tls = options.origin.startsWith('https:');
  const c = options.concurrency;
  const h2Connections = options.connections ?? (c !== undefined ? Math.ceil(c / (options.maxStreams ?? 256)) : 4);
  const h1Connections = options.connections ?? (c !== undefined ? Math.ceil(c / Math.max(1, options.pipelining ?? 1)) : 128);
  const h2 = (alpn?: string[]) =>
    new Http2Pool(options.origin, { connections: h2Connections, maxStreams: options.maxStreams, timeoutMs: options.timeoutMs, tls: options.tls as object, alpn });
  const h1 = () =>
    new Http1Pool(options.origin, { connections: h1Connections, pipelining: options.pipelining, timeoutMs: options.timeoutMs, batchWrites: options.batchWrites, tls: options.tls });
  if (protocol === 'h2' || protocol === 'http1.1') {
    const pool = protocol === 'h2' ? h2() : h1();
    if (options.onProtocol !== undefined) queueMicrotask(() => options.onProtocol!(protocol));
    return pool;
  }
  return new AutoPool(() => h2(tls ? ['h2', 'http/1.1'] : undefined), h1, tls, options.onProtocol);
}

/**
 * The pool of `concurrency` chains of requests, each with one request out at a time (a visit's slices, a bulk
 * operation, cluster discovery): HTTP/2 streams on a connection per 256 chains, HTTP/1.1 a connection per chain,
 * since the container serves a connection one request at a time. Nothing to pipeline, no writes to batch.
 */
export function createChainPool(origin: string, concurrency: number, options: Pick<PoolOptions, 'protocol' | 'tls' | 'timeoutMs' | 'onProtocol'>): ProtocolPool {
  return createPool({ ...options, origin, concurrency, pipelining: 1, batchWrites: false });
}

export interface SendRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Path and query, already encoded. */
  path: string;
  /** Flat list of header names and values, or an object. */
  headers?: string[] | Record<string, string>;
  body?: Buffer | string | null;
  signal?: AbortSignal;
  /**
   * Whether the request may be sent twice. Default true, which lets undici pipeline it. False for operations
   * that must not apply twice: undici then sends it alone on its connection, because after a broken
   * connection undici silently resends every pipelined request behind the first.
   */
  idempotent?: boolean;
}

export interface RawResponse {
  status: number;
  /** Raw header names and values as undici hands them: [name, value, name, value, ...]. */
  rawHeaders: Buffer[];
  body: Buffer;
}

/** A transport error carries whether the request may have reached the service. */
export class TransportError extends VespaBulkError {
  /** false when the request surely never left (refused connection, connect timeout). */
  readonly maybeApplied: boolean;
  readonly undiciCode: string | undefined;
  constructor(code: 'VB_TRANSPORT' | 'VB_TIMEOUT' | 'VB_ABORTED', message: string, maybeApplied: boolean, cause: unknown) {
    super(code, message, { cause });
    this.maybeApplied = maybeApplied;
    this.undiciCode = (cause as { code?: string } | undefined)?.code;
  }
}

// H2_REFUSED_STREAM: the server said it did not process the request (RST_STREAM REFUSED_STREAM, or beyond a GOAWAY).
const neverSentCodes = new Set(['H2_REFUSED_STREAM', 'H2_NOT_SUPPORTED', 'ECONNREFUSED', 'UND_ERR_CONNECT_TIMEOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
const timeoutCodes = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

export function toTransportError(err: unknown): TransportError {
  if (err instanceof TransportError) return err;
  const e = err as { code?: string; message?: string; name?: string; cause?: { code?: string } };
  const code = e?.code ?? e?.cause?.code;
  if (e?.name === 'AbortError' || code === 'UND_ERR_ABORTED' || code === 'ABORT_ERR') {
    return new TransportError('VB_ABORTED', 'request aborted', true, err);
  }
  const message = `${code ?? 'transport error'}: ${e?.message ?? String(err)}`;
  if (code !== undefined && timeoutCodes.has(code)) return new TransportError('VB_TIMEOUT', message, code !== 'UND_ERR_CONNECT_TIMEOUT', err);
  return new TransportError('VB_TRANSPORT', message, !(code !== undefined && neverSentCodes.has(code)), err);
}

/**
 * Where `dispatchTo` delivers an answer. The feeder implements it directly, so its hot path makes no promise,
 * closure or microtask per request; `ctx` is handed back untouched to say which request it was.
 */
export interface ResponseReceiver<C> {
  onRawResponse(ctx: C, res: RawResponse): void;
  onRawError(ctx: C, err: TransportError): void;
}

/** Legacy undici handler (onConnect/onHeaders/onData/onComplete/onError): the cheapest path through dispatch. */
class CollectingHandler<C> implements Dispatcher.DispatchHandler {
  private status = 0;
  private rawHeaders: Buffer[] = [];
  private chunks: Buffer[] = [];
  private length = 0;
  /** True while `dispatch()` runs: an answer given then (undici fails some requests synchronously) is deferred. */
  inDispatch = true;
  constructor(
    private readonly receiver: ResponseReceiver<C>,
    private readonly ctx: C,
  ) {}
  onConnect(): void {}
  onHeaders(statusCode: number, headers: Buffer[]): boolean {
    this.status = statusCode;
    this.rawHeaders = headers;
    return true;
  }
  onData(chunk: Buffer): boolean {
    this.chunks.push(chunk);
    this.length += chunk.length;
    return true;
  }
  onComplete(): void {
    const body = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.length);
    const res: RawResponse = { status: this.status, rawHeaders: this.rawHeaders, body };
    if (this.inDispatch) queueMicrotask(() => this.receiver.onRawResponse(this.ctx, res));
    else this.receiver.onRawResponse(this.ctx, res);
  }
  onError(err: Error): void {
    this.fail(toTransportError(err));
  }
  /** Callers never see an answer inside their own call to `dispatchTo`, so they need not be re-entrant. */
  fail(err: TransportError): void {
    if (this.inDispatch) queueMicrotask(() => this.receiver.onRawError(this.ctx, err));
    else this.receiver.onRawError(this.ctx, err);
  }
}

/**
 * Sends one request and reports to `receiver`: every status as a response, only transport failures as errors.
 * POST and PUT are marked idempotent and non-blocking unless told otherwise, or undici would not pipeline them.
 */
export function dispatchTo<C>(dispatcher: Dispatcher, req: SendRequest, receiver: ResponseReceiver<C>, ctx: C): void {
  const handler = new CollectingHandler(receiver, ctx);
  try {
    dispatcher.dispatch(
      {
        origin: undefined,
        method: req.method,
        path: req.path,
        headers: req.headers as Dispatcher.DispatchOptions['headers'],
        body: req.body ?? null,
        idempotent: req.idempotent ?? true,
        blocking: req.idempotent === false,
        signal: req.signal,
      } as Dispatcher.DispatchOptions,
      handler,
    );
  } catch (err) {
    handler.fail(toTransportError(err));
  }
  handler.inDispatch = false;
}

type Settle = { resolve: (r: RawResponse) => void; reject: (e: unknown) => void };
const settleReceiver: ResponseReceiver<Settle> = {
  onRawResponse: (ctx, res) => ctx.resolve(res),
  onRawError: (ctx, err) => ctx.reject(err),
};

/** `dispatchTo` as a promise: every status resolves; only transport failures reject (TransportError). */
export function send(dispatcher: Dispatcher, req: SendRequest): Promise<RawResponse> {
  return new Promise<RawResponse>((resolve, reject) => dispatchTo(dispatcher, req, settleReceiver, { resolve, reject }));
}

/** Header value by lower-case name from undici's raw header list. */
export function rawHeader(rawHeaders: Buffer[], name: string): string | undefined {
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i].length === name.length && rawHeaders[i].toString('latin1').toLowerCase() === name) return rawHeaders[i + 1].toString('latin1');
  }
  return undefined;
}

export function headersToObject(rawHeaders: Buffer[]): Record<string, string | string[] | undefined> {
  const out: Record<string, string | string[] | undefined> = {};
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const k = rawHeaders[i].toString('latin1').toLowerCase();
    const v = rawHeaders[i + 1].toString('utf8');
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

/** Parsed JSON body, or `{message: text}` when the body is not JSON (proxies answer HTML). */
export function parseBody(body: Buffer): unknown {
  if (body.length === 0) return {};
  const text = body.toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    return { message: text };
  }
}

/** Splits an endpoint URL into the origin undici connects to and a path prefix (no trailing slash). */
export function splitEndpoint(endpoint: string): { origin: string; prefix: string } {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new VespaBulkError('VB_USAGE', `invalid endpoint URL '${endpoint}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new VespaBulkError('VB_USAGE', `endpoint '${endpoint}' must be http:// or https://`);
  return { origin: url.origin, prefix: url.pathname.replace(/\/+$/, '') };
}

export function isLoopback(origin: string): boolean {
  const host = new URL(origin).hostname;
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\./.test(host);
}
