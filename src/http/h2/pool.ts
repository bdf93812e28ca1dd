import net from 'node:net';
import tls from 'node:tls';
import { FifoQueue } from '../../structures/fifo-queue.js';
import type { ResponseHandler, TlsOptions, Transport, TransportRequest, TransportStats } from '../transport.js';
import { toTransportError } from '../transport-error.js';
import { withSignal } from '../request-signal.js';
import { H2Error } from './errors.js';
import { H2Session, type H2Request, type SessionEvents } from './session.js';

/**
 * HTTP/2 connections to one origin, a `Transport`: cleartext with prior knowledge (h2c) for http://,
 * ALPN h2 for https://. Requests go to the connection with the fewest streams open, within the server's
 * SETTINGS_MAX_CONCURRENT_STREAMS and our own cap; when every connection is full they wait here, in order.
 * Connections are opened one at a time, and only while the open ones are busy, so no burst of connects meets
 * a listen backlog. A request the server refused unprocessed (REFUSED_STREAM, a GOAWAY below its id) is sent
 * again on another connection; everything else that goes wrong is the caller's to retry.
 *
 * Why our own HTTP/2 and not node:http2 or undici's: measured against the container's Jetty, node:http2 spent
 * ~70 µs of CPU per request in this process and undici's HTTP/2 client kept two streams open per connection;
 * see the README's Benchmarks.
 */
export interface H2PoolOptions {
  /** Connections at most. Default 4. */
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
   * share is returned when it reads on). Default 64 MiB.
   */
  connectionWindow?: number;
  /** ALPN protocols offered on https. Default ['h2']; the auto pool offers http/1.1 too. */
  alpn?: string[];
  /** See `TransportOptions.maxConnectionAgeMs`. */
  maxConnectionAgeMs?: number;
}

/**
 * The receive window of a stream unless told otherwise (SETTINGS_INITIAL_WINDOW_SIZE): what the server may send on
 * it before our WINDOW_UPDATE comes back, so a stream's rate is at most about this much per round trip. 16 MiB: an
 * export of 4 slices over a 20 ms round trip ran at 3.0 times the documents/s of 1 MiB (4.1 times at 50 ms), as fast
 * as HTTP/1.1 through the same delaying relay (benchmarks/visit/protocols.ts windows). What the streams together hold
 * unread is bounded by the connection's window, not by this times the streams.
 */
export const defaultStreamWindow = 16 << 20;

/** How often a request refused unprocessed is sent again before it fails. */
const maxRefusals = 5;

/** Headers HTTP/2 forbids (RFC 9113, 8.2.2) and what HTTP/1.1 framing needs; `host` becomes `:authority`. */
const connectionHeaders = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'host', 'content-length']);

const noHeaders: readonly string[] = [];

export class Http2Transport implements Transport {
  readonly protocol = 'h2';
  private readonly url: URL;
  private readonly https: boolean;
  private readonly authority: string;
  private readonly connections: number;
  private readonly maxStreams: number;
  private readonly options: H2PoolOptions;
  private readonly timeoutMs: number;
  private readonly sessions: H2Session[] = [];
  private readonly pending = new FifoQueue<H2Request>();
  /** The pseudo-header lists by method, and header lists by the caller's header array: the same kind of request reuses one. */
  private readonly pseudoCache = new Map<string, string[]>();
  private readonly headerCache = new WeakMap<readonly string[], HeaderFields>();
  private closing: Promise<void> | undefined;
  private closeWaiters: (() => void)[] = [];
  private connectWaiters: { resolve: () => void; reject: (err: Error) => void }[] = [];
  private destroyed = false;
  private readonly events: SessionEvents;

  constructor(origin: string | URL, options: H2PoolOptions = {}) {
    this.url = new URL(origin);
    this.https = this.url.protocol === 'https:';
    this.authority = this.url.host;
    this.connections = Math.max(1, options.connections ?? 4);
    this.maxStreams = Math.max(1, options.maxStreams ?? 256);
    this.timeoutMs = options.timeoutMs ?? 300_000;
    this.options = options;
    this.events = {
      ready: () => {
        const waiters = this.connectWaiters;
        this.connectWaiters = [];
        for (const w of waiters) w.resolve();
        this.drainPending();
      },
      room: () => {
        if (this.pending.length > 0) this.drainPending();
        else if (this.closing !== undefined) this.checkClosed();
      },
      refused: (req, err) => {
        if (++req.refusals > maxRefusals || this.destroyed) req.handler.onError(toTransportError(err));
        else this.pending.push(req);
        this.drainPending();
      },
      closed: (session, err) => this.onClosed(session, err),
    };
  }

  /** Open connections and the streams on each: for tests and the progress line. */
  get stats(): TransportStats {
    return { connections: this.sessions.length, requests: this.sessions.map((s) => s.active), waiting: this.pending.length };
  }

  detect(): Promise<'h2'> {
    return Promise.resolve('h2');
  }

  dispatch(opts: TransportRequest, handler: ResponseHandler): void {
    if (this.destroyed || this.closing !== undefined) {
      const err = this.destroyed ? new H2Error('H2_DESTROYED', 'The client is destroyed') : new H2Error('H2_CLOSED', 'The client is closed');
      queueMicrotask(() => handler.onError(toTransportError(err)));
      return;
    }
    const headers = this.headerFields(opts.headers ?? noHeaders);
    const timeout = opts.timeoutMs ?? this.timeoutMs;
    const req: H2Request = {
      pseudo: this.pseudoFields(opts.method, headers.host),
      headers,
      path: opts.path,
      body: opts.body ?? null,
      headersTimeout: timeout,
      bodyTimeout: timeout,
      handler: opts.signal === undefined ? handler : withSignal(opts.signal, handler),
      refusals: 0,
    };
    const session = this.pick();
    if (session !== undefined && this.pending.length === 0) {
      // Callers never hear of their request inside their own call to dispatch.
      session.request(req);
      return;
    }
    this.pending.push(req);
    this.drainPending();
  }

  /** The ready connection with the most room, opening another when all are busy and there may be more. */
  private pick(): H2Session | undefined {
    let best: H2Session | undefined;
    let bestRoom = 0;
    let open = 0;
    let opening = false;
    for (const s of this.sessions) {
      if (!s.isOpen) continue;
      open++;
      opening ||= s.isOpening;
      const room = s.room;
      if (room > bestRoom) {
        best = s;
        bestRoom = room;
      }
    }
    // A new connection when the best one is past half its streams (spreading the server's work) or full.
    const busy = best === undefined || best.active >= Math.min(this.maxStreams, best.serverMaxStreams) / 2;
    if (busy && open < this.connections && !opening) this.open();
    return best;
  }

  private drainPending(): void {
    while (this.pending.length > 0) {
      const session = this.pick();
      if (session === undefined) return;
      session.request(this.pending.shift()!);
    }
    if (this.closing !== undefined) this.checkClosed();
  }

  private open(): H2Session {
    const host = this.url.hostname.replace(/^\[|\]$/g, '');
    const port = Number(this.url.port) || (this.https ? 443 : 80);
    let socket: net.Socket;
    if (this.https) {
      const tlsOptions = this.options.tls ?? {};
      socket = tls.connect({
        host,
        port,
        ...(net.isIP(host) === 0 && { servername: host }),
        ...tlsOptions,
        ALPNProtocols: this.options.alpn ?? ['h2'],
      });
    } else socket = net.connect({ host, port });
    const timeout = setTimeout(() => socket.destroy(new H2Error('H2_CONNECT_TIMEOUT', `Connect Timeout Error (${host}:${port})`)), this.options.connectTimeoutMs ?? 10_000);
    socket.once(this.https ? 'secureConnect' : 'connect', () => clearTimeout(timeout));
    socket.once('close', () => clearTimeout(timeout));
    const session = new H2Session(
      socket,
      {
        streamWindow: this.options.streamWindow ?? defaultStreamWindow,
        connectionWindow: this.options.connectionWindow ?? 64 << 20,
        maxStreams: this.maxStreams,
        settingsTimeoutMs: this.options.connectTimeoutMs ?? 10_000,
      },
      this.events,
      this.https,
    );
    this.sessions.push(session);
    return session;
  }

  /**
   * Opens a connection, if none is open or opening, and resolves once the server's SETTINGS arrive: the server
   * speaks HTTP/2. Rejects with what the connection failed of (H2_NOT_SUPPORTED: it does not).
   */
  whenReady(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (this.sessions.some((s) => s.isReady)) {
        resolve();
        return;
      }
      this.connectWaiters.push({ resolve, reject });
      if (!this.sessions.some((s) => s.isOpening)) this.open();
    });
  }

  private onClosed(session: H2Session, err: Error | undefined): void {
    const i = this.sessions.indexOf(session);
    if (i >= 0) this.sessions.splice(i, 1);
    if (!session.everReady && this.connectWaiters.length > 0 && !this.sessions.some((s) => s.isOpen)) {
      const waiters = this.connectWaiters;
      this.connectWaiters = [];
      for (const w of waiters) w.reject(err ?? new H2Error('H2_CONNECTION_CLOSED', 'other side closed', { bytesRead: 0 }));
    }
    if (this.pending.length > 0 && !this.destroyed) {
      if (!session.everReady && err !== undefined && !this.sessions.some((s) => s.isReady)) {
        // The connection failed before it could carry anything and none other can: the waiting requests fail
        // with what it died of (refused, unknown host, TLS), as the caller's first sign of an unreachable endpoint.
        const waiting: H2Request[] = [];
        for (let r = this.pending.shift(); r !== undefined; r = this.pending.shift()) waiting.push(r);
        for (const r of waiting) r.handler.onError(toTransportError(err, this.https));
      } else this.drainPending();
    }
    if (this.closing !== undefined) this.checkClosed();
  }

  private pseudoFields(method: string, host: string | undefined): string[] {
    if (host !== undefined) return [':method', method, ':scheme', this.https ? 'https' : 'http', ':authority', host];
    let pseudo = this.pseudoCache.get(method);
    if (pseudo === undefined) {
      pseudo = [':method', method, ':scheme', this.https ? 'https' : 'http', ':authority', this.authority];
      if (this.pseudoCache.size < 16) this.pseudoCache.set(method, pseudo);
    }
    return pseudo;
  }

  /** The caller's headers as HTTP/2 sends them: none of HTTP/1.1's connection headers; `host` apart. */
  private headerFields(headers: readonly string[]): HeaderFields {
    let fields = this.headerCache.get(headers);
    // The caller may have changed its array in place since (a token renewed): kept only while it holds the same.
    if (fields === undefined || !sameHeaders(headers, fields.given)) {
      fields = Object.assign([], { given: headers.slice() });
      for (let i = 0; i + 1 < headers.length; i += 2) {
        const name = headers[i].toLowerCase();
        if (name === 'host') fields.host = headers[i + 1];
        else if (!connectionHeaders.has(name) && !(name === 'te' && headers[i + 1] !== 'trailers')) fields.push(name, headers[i + 1]);
      }
      this.headerCache.set(headers, fields);
    }
    return fields;
  }

  /** Resolves once every request has ended and the connections are closed; new requests are refused. */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      this.closeWaiters.push(resolve);
    });
    this.checkClosed();
    return this.closing;
  }

  private checkClosed(): void {
    if (this.pending.length > 0) return;
    for (const s of this.sessions) if (s.active > 0) return;
    for (const s of [...this.sessions]) s.drain();
    if (this.sessions.length > 0) return;
    const waiters = this.closeWaiters;
    this.closeWaiters = [];
    for (const w of waiters) w();
  }

  /** Ends every request now (they fail with `err`, or as destroyed) and closes the connections. */
  destroy(err?: Error): Promise<void> {
    this.destroyed = true;
    const failure = err ?? new H2Error('H2_DESTROYED', 'The client is destroyed');
    const waiting: H2Request[] = [];
    for (let r = this.pending.shift(); r !== undefined; r = this.pending.shift()) waiting.push(r);
    for (const r of waiting) r.handler.onError(toTransportError(failure));
    for (const s of [...this.sessions]) s.destroy(failure);
    this.closing ??= Promise.resolve();
    const waiters = this.closeWaiters;
    this.closeWaiters = [];
    for (const w of waiters) w();
    return Promise.resolve();
  }
}

/** The fields HTTP/2 sends for a caller's header array, and a copy of that array as it was. */
type HeaderFields = string[] & { host?: string; given: readonly string[] };

/** Whether the caller's array still holds what it did (`given`), found without allocating. */
function sameHeaders(headers: readonly string[], given: readonly string[]): boolean {
  if (headers.length !== given.length) return false;
  for (let i = 0; i < given.length; i++) if (headers[i] !== given[i]) return false;
  return true;
}
