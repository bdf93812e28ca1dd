import { createRequire } from 'node:module';
import type { buildConnector as BuildConnector, Client as UndiciClient, Dispatcher } from 'undici';
import { FifoQueue } from '../structures/fifo-queue.js';
import { batchingConnector, TurnBatch } from './batching-connector.js';
import {
  type ResponseHandler,
  type TlsOptions,
  type Transport,
  type TransportRequest,
  type TransportStats,
  wholeBody,
} from './transport.js';
import { TransportError, toTransportError } from './transport-error.js';
import { withSignal } from './request-signal.js';
import { Forwarded, proxyOrigin, tunnelConnector } from './proxy/http1-proxy.js';
import type { ProxyHop } from './proxy/tunnel.js';

/**
 * HTTP/1.1 connections to one origin, a `Transport`, for servers (and proxies) that speak nothing else: undici's
 * `Client`s, one per connection, through undici's public API only. undici is loaded when the first request needs
 * it, so a run that speaks HTTP/2 never loads it.
 *
 * The container serves an HTTP/1.1 connection one request at a time, so concurrency is the number of connections:
 * this transport opens one whenever every open one has `pipelining` requests on it, up to `connections`, and never
 * more than `maxConnecting` at once, so a jump in demand does not become a burst of connects that a listen backlog
 * of 50 drops (a dropped SYN costs that connection a second). A request goes to the connection with the fewest on
 * it; one that must not be sent twice goes to an idle connection and has it to itself, because undici resends the
 * requests pipelined behind a broken one.
 *
 * A request that waits for room waits as on HTTP/2 (`H2Pool`): its wait counts against its headers bound, past
 * which it fails as `refused` (never sent, so the caller's retry rules may send it again), and an abort while it
 * waits ends it at once, never sent.
 */
export interface Http1TransportOptions {
  /** Connections at most. Default 128. */
  connections?: number;
  /** Requests on one connection at once (1: no pipelining; 0: a connection per request, closed after it). Default 1. */
  pipelining?: number;
  /** Connections being opened at once at most. Default 16. */
  maxConnecting?: number;
  /** Bound on the wait for an answer's headers, and on any gap in its body, in ms. Default 300 s. */
  timeoutMs?: number;
  /** Gather the writes of one event-loop turn into one syscall (pays only with pipelining). Default: when pipelining > 1. */
  batchWrites?: boolean;
  /** TLS options for https (ca, cert, key...). */
  tls?: TlsOptions;
  /**
   * A forward proxy to go through: to an https:// origin each connection is a CONNECT tunnel of its own (see
   * `openTunnel`); to an http:// one the requests go to the proxy itself, their targets absolute URIs, as curl and
   * every browser send them (RFC 9112 §3.2.2), so that any HTTP proxy carries them.
   */
  proxy?: ProxyHop;
}

interface Connection {
  client: UndiciClient;
  /** Requests on it now. */
  running: number;
  connected: boolean;
  /** A request that must not be repeated is on it: nothing else goes there until it ends. */
  exclusive: boolean;
  /** With `batchWrites`: holds its socket corked for the rest of a turn that sends on it. */
  batch: TurnBatch | undefined;
}

interface Waiting {
  req: TransportRequest;
  /** The caller's handler, behind `withSignal` where the request has a signal. */
  handler: ResponseHandler;
  /** When it began to wait (performance.now() ms): its wait counts against its headers bound. */
  queuedAt: number;
  /** Aborted (it has heard so) or refused while it waited: it leaves the queue without taking a connection. */
  gone: boolean;
  /** Hears its signal's abort while it waits. */
  onAbort: (() => void) | undefined;
}

type Undici = typeof import('undici');
let undici: Undici | undefined;

/** undici's root, loaded the first time a transport speaks HTTP/1.1: a run on HTTP/2 never pays for it. */
function loadUndici(): Undici {
  return (undici ??= createRequire(import.meta.url)('undici') as Undici);
}

export class Http1Transport implements Transport {
  readonly protocol = 'http1.1';
  private readonly origin: string;
  private readonly https: boolean;
  private readonly url: URL;
  /** Requests go to the proxy as absolute URIs (an http:// origin through a proxy), with these headers added. */
  private readonly forward: string[] | undefined;
  private readonly max: number;
  private readonly depth: number;
  private readonly pipelining: number;
  private readonly maxConnecting: number;
  private readonly options: Http1TransportOptions;
  private readonly timeoutMs: number;
  private readonly conns: Connection[] = [];
  private readonly waiting = new FifoQueue<Waiting>();
  /** Ends the waits that outlast their request's headers bound; armed for the earliest, as the HTTP/2 pool's. */
  private waitTimer: NodeJS.Timeout | undefined;
  private waitDeadline = Infinity;
  /** Requests in `waiting` that still wait (not `gone`). */
  private waitingNow = 0;
  private clientOptions: UndiciClient.Options | undefined;
  /** With `batchWrites`: the connector each connection's batching connector wraps. */
  private batchedConnect: BuildConnector.connector | undefined;
  /** New requests are refused (`close` or `destroy` was called). */
  private closing = false;
  private destroyed = false;

  constructor(origin: string | URL, options: Http1TransportOptions = {}) {
    const url = new URL(origin);
    this.url = url;
    this.origin = url.origin;
    this.https = url.protocol === 'https:';
    const auth = options.proxy?.route.authorization;
    this.forward =
      options.proxy !== undefined && !this.https
        ? ['host', url.host, ...(auth !== undefined ? ['proxy-authorization', auth] : [])]
        : undefined;
    this.max = Math.max(1, options.connections ?? 128);
    this.pipelining = options.pipelining ?? 1;
    this.depth = Math.max(1, this.pipelining);
    this.maxConnecting = Math.max(1, options.maxConnecting ?? 16);
    this.timeoutMs = options.timeoutMs ?? 300_000;
    this.options = options;
  }

  get stats(): TransportStats {
    return { connections: this.conns.length, requests: this.conns.map((c) => c.running), waiting: this.waitingNow };
  }

  detect(): Promise<'http1.1'> {
    return Promise.resolve('http1.1');
  }

  dispatch(req: TransportRequest, handler: ResponseHandler): void {
    if (this.closing) {
      const err = new TransportError('shut', this.destroyed ? 'the transport is destroyed' : 'the transport is closed');
      queueMicrotask(() => handler.onError(err));
      return;
    }
    const inner = req.signal === undefined ? handler : withSignal(req.signal, handler);
    if (this.waiting.length === 0 && this.place(req, inner)) return;
    this.enqueue(req, inner);
  }

  private enqueue(req: TransportRequest, handler: ResponseHandler): void {
    const w: Waiting = { req, handler, queuedAt: performance.now(), gone: false, onAbort: undefined };
    this.waiting.push(w);
    this.waitingNow++;
    if (req.signal !== undefined) {
      // `withSignal` tells the handler; here the request leaves the queue, without a connection.
      w.onAbort = () => this.leave(w);
      req.signal.addEventListener('abort', w.onAbort, { once: true });
    }
    const timeout = req.timeoutMs ?? this.timeoutMs;
    if (timeout > 0) this.armWait(w.queuedAt + timeout);
  }

  /** `w` stops waiting: placed, aborted or refused. */
  private leave(w: Waiting): void {
    if (w.gone) return;
    w.gone = true;
    if (w.onAbort !== undefined) w.req.signal!.removeEventListener('abort', w.onAbort);
    // Nothing waits: no timer holds the process open for requests that are gone.
    if (--this.waitingNow === 0) this.stopWaitTimer();
  }

  private armWait(deadline: number): void {
    if (deadline >= this.waitDeadline) return;
    clearTimeout(this.waitTimer);
    this.waitDeadline = deadline;
    this.waitTimer = setTimeout(this.expireWaiting, Math.max(0, deadline - performance.now()));
  }

  private readonly expireWaiting = (): void => {
    this.waitTimer = undefined;
    this.waitDeadline = Infinity;
    const now = performance.now();
    const expired: Waiting[] = [];
    let next = Infinity;
    for (let i = this.waiting.length; i > 0; i--) {
      const w = this.waiting.shift()!;
      if (w.gone) continue;
      const timeout = w.req.timeoutMs ?? this.timeoutMs;
      const deadline = timeout > 0 ? w.queuedAt + timeout : Infinity;
      if (deadline <= now) expired.push(w);
      else {
        this.waiting.push(w);
        next = Math.min(next, deadline);
      }
    }
    if (next < Infinity) this.armWait(next);
    for (const w of expired) {
      this.leave(w);
      const waited = Math.round(now - w.queuedAt);
      w.handler.onError(
        new TransportError(
          'refused',
          `no HTTP/1.1 connection to ${this.url.host} took the request within ${waited} ms (every connection allowed is busy with requests that do not end)`,
        ),
      );
    }
  };

  /** undici's options for each connection's `Client`, made when the first connection is. */
  private clientOptionsOf(): UndiciClient.Options {
    if (this.clientOptions !== undefined) return this.clientOptions;
    const { buildConnector } = loadUndici();
    const batch = this.options.batchWrites ?? this.pipelining > 1;
    const hop = this.options.proxy;
    let connect: BuildConnector.connector | BuildConnector.BuildOptions | undefined = this.options.tls;
    if (hop !== undefined)
      connect = this.forward !== undefined ? hop.tls : tunnelConnector(hop, this.url, this.options.tls);
    if (batch)
      connect = this.batchedConnect =
        typeof connect === 'function' ? connect : buildConnector({ noDelay: true, ...connect });
    return (this.clientOptions = {
      pipelining: this.pipelining,
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 600_000,
      connect,
    });
  }

  /** Sends the request on a connection with room, opening one if that is allowed; false when it must wait. */
  private place(req: TransportRequest, handler: ResponseHandler): boolean {
    const single = req.idempotent === false;
    let best: Connection | undefined;
    let connecting = 0;
    for (const c of this.conns) {
      if (!c.connected) connecting++;
      if (c.exclusive || c.running >= this.depth || (single && c.running > 0)) continue;
      if (
        best === undefined ||
        c.running < best.running ||
        (c.connected && !best.connected && c.running === best.running)
      )
        best = c;
    }
    if (best === undefined || best.running > 0) {
      if (this.conns.length < this.max && connecting < this.maxConnecting) best = this.openConnection();
    }
    if (best === undefined) return false;
    best.running++;
    if (single) best.exclusive = true;
    const timeout = req.timeoutMs ?? this.timeoutMs;
    const forward = this.forward;
    let inner = handler;
    if (forward !== undefined) inner = new Forwarded(this.options.proxy!.route, inner);
    // undici writes the request inside `dispatch` (a body in bytes, a connected socket): into this turn's batch.
    best.batch?.hold();
    best.client.dispatch(
      {
        origin: this.origin,
        method: req.method,
        path: forward === undefined ? req.path : `${this.origin}${req.path}`,
        headers: forward === undefined ? (req.headers as string[] | undefined) : [...(req.headers ?? []), ...forward],
        body: wholeBody(req),
        idempotent: !single,
        blocking: single,
        headersTimeout: timeout,
        bodyTimeout: timeout,
      },
      new Counted(this, best, inner, single, this.https),
    );
    return true;
  }

  private openConnection(): Connection {
    const c: Connection = {
      client: undefined as unknown as UndiciClient,
      running: 0,
      connected: false,
      exclusive: false,
      batch: undefined,
    };
    const target = this.forward !== undefined ? proxyOrigin(this.options.proxy!.route) : this.origin;
    let options = this.clientOptionsOf();
    if (this.batchedConnect !== undefined) {
      c.batch = new TurnBatch();
      options = { ...options, connect: batchingConnector(this.batchedConnect, c.batch) };
    }
    const client = new (loadUndici().Client)(target, options);
    client.on('connect', () => {
      c.connected = true;
      this.drain();
    });
    client.on('disconnect', () => {
      c.connected = false;
    });
    client.on('connectionError', () => {
      c.connected = false;
    });
    c.client = client;
    this.conns.push(c);
    return c;
  }

  /** @internal A request on `c` ended. */
  release(c: Connection, single: boolean): void {
    c.running--;
    if (single) c.exclusive = false;
    this.drain();
  }

  private drain(): void {
    while (this.waiting.length > 0 && !this.destroyed) {
      const next = this.waiting.peek()!;
      if (!next.gone && !this.place(next.req, next.handler)) return;
      this.leave(next);
      this.waiting.shift();
    }
  }

  private stopWaitTimer(): void {
    clearTimeout(this.waitTimer);
    this.waitTimer = undefined;
    this.waitDeadline = Infinity;
  }

  /** Requests already given are still sent and answered; new ones are refused. */
  async close(): Promise<void> {
    this.closing = true;
    while (!this.destroyed && (this.waitingNow > 0 || this.conns.some((c) => c.running > 0)))
      await new Promise((r) => setTimeout(r, 5));
    await Promise.all(this.conns.map((c) => c.client.close().catch(() => undefined)));
  }

  async destroy(err?: Error): Promise<void> {
    this.closing = true;
    this.destroyed = true;
    const failure = err ?? new TransportError('shut', 'the transport is destroyed');
    for (let w = this.waiting.shift(); w !== undefined; w = this.waiting.shift()) {
      if (w.gone) continue;
      this.leave(w);
      w.handler.onError(toTransportError(failure, this.https));
    }
    await Promise.all(this.conns.map((c) => c.client.destroy(failure).catch(() => undefined)));
  }
}

/** Passes undici's calls on to the caller's handler in our terms, and tells the transport when the request has ended. */
class Counted implements Dispatcher.DispatchHandler {
  private ended = false;
  constructor(
    private readonly transport: Http1Transport,
    private readonly conn: Connection,
    private readonly inner: ResponseHandler,
    private readonly single: boolean,
    private readonly tls: boolean,
  ) {}
  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.inner.onStart?.(controller);
  }
  onResponseStart(
    _controller: Dispatcher.DispatchController,
    status: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    const flat: string[] = [];
    for (const name in headers) {
      const value = headers[name];
      if (value === undefined) continue;
      if (typeof value === 'string') flat.push(name, value);
      else for (const v of value) flat.push(name, v);
    }
    this.inner.onHeaders(status, flat);
  }
  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.inner.onData(chunk);
  }
  onResponseEnd(): void {
    this.end();
    this.inner.onComplete();
  }
  /**
   * Told a microtask later. undici fails a connection's requests in a loop (a connect that failed fails every
   * request queued on it) and then asserts that its queue is empty; a request given to that connection from
   * here, the transport's next waiting one or the caller's retry, would break the assertion and throw out of the
   * socket's error event, ending the process.
   */
  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    queueMicrotask(() => {
      this.end();
      this.inner.onError(toTransportError(err, this.tls));
    });
  }
  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.transport.release(this.conn, this.single);
  }
}
