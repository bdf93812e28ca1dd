import type { Dispatcher as DispatcherType, buildConnector } from 'undici';
import { Client, Dispatcher } from './undici-parts.js';
import { FifoQueue } from '../structures/fifo-queue.js';
import { batchingConnector } from './batching-connector.js';

/**
 * HTTP/1.1 connections to one origin as an undici dispatcher, for servers (and proxies) that speak nothing
 * else. The container serves an HTTP/1.1 connection one request at a time, so concurrency is the number of
 * connections: this pool opens one whenever every open one has `pipelining` requests on it, up to
 * `connections`, and never more than `maxConnecting` at once, so a jump in demand does not become a burst of
 * connects that a listen backlog of 50 drops (a dropped SYN costs that connection a second). A request goes to
 * the connection with the fewest on it; one that must not be sent twice goes to an idle connection and has it
 * to itself, because undici resends the requests pipelined behind a broken one.
 */
export interface Http1PoolOptions {
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
  tls?: buildConnector.BuildOptions;
}

interface Connection {
  client: DispatcherType;
  /** Requests on it now. */
  running: number;
  connected: boolean;
  /** A request that must not be repeated is on it: nothing else goes there until it ends. */
  exclusive: boolean;
}

interface Waiting {
  opts: DispatcherType.DispatchOptions;
  handler: DispatcherType.DispatchHandler;
}

export class Http1Pool extends Dispatcher {
  readonly protocol = 'http1.1';
  private readonly origin: string;
  private readonly max: number;
  private readonly depth: number;
  private readonly maxConnecting: number;
  private readonly clientOptions: object;
  private readonly conns: Connection[] = [];
  private readonly waiting = new FifoQueue<Waiting>();
  private closed = false;

  constructor(origin: string | URL, options: Http1PoolOptions = {}) {
    super();
    this.origin = new URL(origin).origin;
    this.max = Math.max(1, options.connections ?? 128);
    const pipelining = options.pipelining ?? 1;
    this.depth = Math.max(1, pipelining);
    this.maxConnecting = Math.max(1, options.maxConnecting ?? 16);
    const timeout = options.timeoutMs ?? 300_000;
    const batch = options.batchWrites ?? pipelining > 1;
    this.clientOptions = {
      pipelining,
      headersTimeout: timeout,
      bodyTimeout: timeout,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 600_000,
      connect: batch ? batchingConnector(options.tls) : options.tls,
    };
  }

  /** Open connections and the requests on each, for tests. */
  get stats(): { connections: number; connected: number; running: number[]; waiting: number } {
    return { connections: this.conns.length, connected: this.conns.filter((c) => c.connected).length, running: this.conns.map((c) => c.running), waiting: this.waiting.length };
  }

  override dispatch(opts: DispatcherType.DispatchOptions, handler: DispatcherType.DispatchHandler): boolean {
    if (this.closed) {
      const err = Object.assign(new Error('The client is closed'), { code: 'UND_ERR_CLOSED' });
      queueMicrotask(() => (handler as { onError?: (e: Error) => void }).onError?.(err));
      return false;
    }
    if (this.waiting.length === 0 && this.place(opts, handler)) return true;
    this.waiting.push({ opts, handler });
    return false;
  }

  /** Sends the request on a connection with room, opening one if that is allowed; false when it must wait. */
  private place(opts: DispatcherType.DispatchOptions, handler: DispatcherType.DispatchHandler): boolean {
    const single = opts.idempotent === false;
    let best: Connection | undefined;
    let connecting = 0;
    for (const c of this.conns) {
      if (!c.connected) connecting++;
      if (c.exclusive || c.running >= this.depth || (single && c.running > 0)) continue;
      if (best === undefined || c.running < best.running || (c.connected && !best.connected && c.running === best.running)) best = c;
    }
    if (best === undefined || best.running > 0) {
      if (this.conns.length < this.max && connecting < this.maxConnecting) best = this.openConnection();
    }
    if (best === undefined) return false;
    best.running++;
    if (single) best.exclusive = true;
    best.client.dispatch(opts, new Counted(this, best, handler, single));
    return true;
  }

  private openConnection(): Connection {
    const c: Connection = { client: undefined as unknown as DispatcherType, running: 0, connected: false, exclusive: false };
    const client = new Client(this.origin, this.clientOptions);
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
    while (this.waiting.length > 0) {
      const next = this.waiting.peek()!;
      if (!this.place(next.opts, next.handler)) return;
      this.waiting.shift();
    }
  }

  override close(callback?: () => void): Promise<void> {
    this.closed = true;
    const done = (async () => {
      while (this.waiting.length > 0 || this.conns.some((c) => c.running > 0)) await new Promise((r) => setTimeout(r, 5));
      await Promise.all(this.conns.map((c) => c.client.close().catch(() => undefined)));
    })();
    if (callback !== undefined) {
      void done.then(callback);
      return undefined as unknown as Promise<void>;
    }
    return done;
  }

  override destroy(err?: Error | null | (() => void), callback?: () => void): Promise<void> {
    if (typeof err === 'function') {
      callback = err;
      err = undefined;
    }
    this.closed = true;
    const failure = err ?? Object.assign(new Error('The client is destroyed'), { code: 'UND_ERR_DESTROYED' });
    for (let w = this.waiting.shift(); w !== undefined; w = this.waiting.shift()) (w.handler as { onError?: (e: Error) => void }).onError?.(failure);
    const done = Promise.all(this.conns.map((c) => c.client.destroy(failure).catch(() => undefined))).then(() => undefined);
    if (callback !== undefined) {
      void done.then(callback);
      return undefined as unknown as Promise<void>;
    }
    return done;
  }
}

/** Passes every call on to the caller's handler, and tells the pool when the request has ended. */
class Counted implements DispatcherType.DispatchHandler {
  private ended = false;
  constructor(
    private readonly pool: Http1Pool,
    private readonly conn: Connection,
    private readonly inner: DispatcherType.DispatchHandler,
    private readonly single: boolean,
  ) {}
  onConnect(abort: (err?: Error) => void, context?: object): void {
    (this.inner as { onConnect?: (a: typeof abort, c?: object) => void }).onConnect?.(abort, context);
  }
  onHeaders(status: number, headers: Buffer[], resume: () => void, text: string): boolean {
    return (this.inner as { onHeaders?: (...a: unknown[]) => boolean }).onHeaders?.(status, headers, resume, text) ?? true;
  }
  onData(chunk: Buffer): boolean {
    return (this.inner as { onData?: (c: Buffer) => boolean }).onData?.(chunk) ?? true;
  }
  onComplete(trailers: string[] | null): void {
    this.end();
    (this.inner as { onComplete?: (t: string[] | null) => void }).onComplete?.(trailers);
  }
  /**
   * Told a microtask later. undici fails a connection's requests in a loop (a connect that failed fails every
   * request queued on it) and then asserts that its queue is empty; a request given to that connection from
   * here, the pool's next waiting one or the caller's retry, would break the assertion and throw out of the
   * socket's error event, ending the process.
   */
  onError(err: Error): void {
    queueMicrotask(() => {
      this.end();
      (this.inner as { onError?: (e: Error) => void }).onError?.(err);
    });
  }
  onUpgrade(status: number, headers: Buffer[], socket: unknown): void {
    (this.inner as { onUpgrade?: (...a: unknown[]) => void }).onUpgrade?.(status, headers, socket);
  }
  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.pool.release(this.conn, this.single);
  }
}
