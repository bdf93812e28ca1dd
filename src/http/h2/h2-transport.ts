import net from 'node:net';
import tls from 'node:tls';
import { FifoQueue } from '../../structures/fifo-queue.js';
import type { ResponseHandler, Transport, TransportRequest, TransportStats } from '../transport.js';
import { toTransportError, TransportError } from '../transport-error.js';
import { withSignal } from '../request-signal.js';
import { chooseConnection, latencySample, nextTypical, observeLatency, retireAfterMs } from './connection-choice.js';
import { H2Error } from './errors.js';
import { unsentFailure } from './unsent.js';
import { H2Session, type H2Request } from './session.js';
import type { PendingSocket } from '../proxy/pending-socket.js';
import { openTunnel } from '../proxy/tunnel.js';
import { originConnection } from '../endpoint.js';

import { defaultStreamWindow, connectionWindowFor, type H2PoolOptions } from './pool-options.js';
import { answered, PooledConnection, PooledRequest, tell, type RequestOwner } from './pooled.js';
import { noHeaders, RequestFields } from './request-fields.js';

/** How often a request refused unprocessed is sent again before it fails. */
const maxRefusals = 5;

/**
 * Connections being opened at once at most, once one is ready: a few, since the container's listen backlog is 50
 * and other clients (and this one's workers) connect too; 16 connections are open within four round trips.
 */
const maxConnecting = 4;

/** A TCP connection's read buffer: what one read takes at most (net's default read size). */
const readBufferBytes = 64 * 1024;

/** The first wait after a connection failed before it was ready, doubled for each failure after it, at most `maxOpenBackoffMs`. */
const openBackoffMs = 100;
const maxOpenBackoffMs = 5_000;

/** How long a renewal waits, when its replacement failed to open, before it tries again. */
const renewRetryMs = 1_000;

/**
 * HTTP/2 connections to one origin, a `Transport`: cleartext with prior knowledge (h2c) for http://, ALPN h2 for
 * https://. The pool keeps `connections` of them open while it has work, because a layer-4 balancer in front of a
 * container cluster places each connection on one node for good: the connections are how the load reaches every
 * node. Which connection takes a request, and when one is renewed, is `connection-choice.ts`'s policy; this file
 * applies it:
 *
 * - Opening: one connection until one is ready (the server speaks HTTP/2, and an endpoint that is not there costs
 *   one connection attempt, not N), then up to `maxConnecting` at once until there are `connections`, so no burst
 *   of connects meets the container's listen backlog of 50. A connection that fails before it is ready delays the
 *   next attempt (while others carry the work), so a node refusing connections behind the balancer does not get a
 *   storm of them.
 * - Choice: power of two choices on `(streams + 1) × peak-EWMA latency`, among the ready connections with room;
 *   when none has room, requests wait here, in order. While the pool opens the connections it is short of, none
 *   takes more than its share of the work, so what waited for the first one is spread over those that follow.
 * - A connection that dies before it is ready sent nothing: what waited for it goes on another connection, or,
 *   when none can take it, fails as never sent (`unsent.ts`).
 * - Renewal: after its age (`maxConnectionAgeMs` less a random part) a connection stays in use while a replacement
 *   opens, and is drained once the replacement is ready: it takes no new streams and closes when its last one
 *   ends, so no request is lost, repeated or cut, a long visit stream included. A drain whose streams make no
 *   progress for a whole request timeout is ended, its streams failed as a closed connection (the caller's retry
 *   rules decide). A connection that said GOAWAY is out of the choice at once and replaced. One that fails with
 *   streams on it (its node gone; not a graceful GOAWAY, not an idle close) speeds renewals up for a while, so that
 *   the node gets connections again soon after it is back.
 * - A request the server refused unprocessed (REFUSED_STREAM, a GOAWAY below its id) is sent again on another
 *   connection; everything else that goes wrong is the caller's to retry.
 *
 * Why our own HTTP/2 and not node:http2 or undici's: measured against the container's Jetty, node:http2 spent
 * ~70 µs of CPU per request in this process and undici's HTTP/2 client kept two streams open per connection;
 * see the README's Benchmarks.
 */
export class Http2Transport implements Transport, RequestOwner {
  readonly protocol = 'h2';
  private readonly url: URL;
  private readonly https: boolean;
  private readonly authority: string;
  private readonly target: number;
  private readonly maxStreams: number;
  private readonly maxAgeMs: number;
  private readonly options: H2PoolOptions;
  private readonly timeoutMs: number;
  /** Every connection: opening, taking requests, draining. */
  private readonly conns: PooledConnection[] = [];
  /** The connections requests may go to: ready and not drained. */
  private readonly ready: PooledConnection[] = [];
  private opening = 0;
  /** @internal Requests on a connection now. */
  inflight = 0;
  private readonly pending = new FifoQueue<PooledRequest>();
  /** The pool's typical latency (ms): where a new connection's estimate starts. */
  private typicalMs = 0;
  /** When a connection in use was last lost (performance.now() ms). */
  private lostAt = -Infinity;
  /** Connections failed before they were ready, since one last was; and when the next may open. */
  private openFailures = 0;
  private openAfter = 0;
  private openTimer: NodeJS.Timeout | undefined;
  /**
   * Ends the waits in the queue that outlast their request's headers bound, and when it fires. It is left armed when
   * the queue empties (a sweep of an empty queue costs nothing), so a feed whose requests wait a moment every turn
   * sets one timer per bound, not one per turn. It holds the process open only while requests wait (idle
   * connections do not hold it, so nothing else might).
   */
  private waitTimer: NodeJS.Timeout | undefined;
  private waitDeadline = Infinity;
  private readonly fields: RequestFields;
  private closing: Promise<void> | undefined;
  private closeWaiters: (() => void)[] = [];
  private connectWaiters: { resolve: () => void; reject: (err: Error) => void }[] = [];
  private destroyed = false;
  /** The connection this event-loop turn's requests go to. */
  private turnConn: PooledConnection | undefined;
  private readonly endTurn = (): void => {
    this.turnConn = undefined;
  };
  private readonly onRefused = (request: H2Request, err: H2Error): void => {
    const req = request as PooledRequest;
    const conn = req.conn;
    req.conn = undefined;
    this.inflight--;
    if (conn !== undefined && req.sentAt > 0) answered(conn, req);
    if (++req.refusals > maxRefusals || this.destroyed) tell(req.handler, toTransportError(err));
    else this.enqueue(req);
    // A GOAWAY: it takes no more, and what it refused may need a connection opened for it (its close may have
    // come first, with nothing waiting yet).
    if (conn !== undefined && conn.taking && !conn.session.isReady) this.takeOut(conn);
    else this.fill();
    this.drainPending();
  };

  constructor(origin: string | URL, options: H2PoolOptions = {}) {
    this.url = new URL(origin);
    this.https = this.url.protocol === 'https:';
    this.authority = this.url.host;
    this.target = Math.max(1, options.connections ?? 1);
    this.maxStreams = Math.max(1, options.maxStreams ?? 256);
    this.maxAgeMs = options.maxConnectionAgeMs ?? 0;
    this.timeoutMs = options.timeoutMs ?? 300_000;
    this.options = options;
    this.fields = new RequestFields(this.https, this.authority);
  }

  /** Open connections and the streams on each: for tests and the progress line. */
  get stats(): TransportStats {
    return {
      connections: this.conns.length,
      requests: this.conns.map((c) => c.session.active),
      waiting: this.pending.length,
    };
  }

  detect(): Promise<'h2'> {
    return Promise.resolve('h2');
  }

  dispatch(opts: TransportRequest, handler: ResponseHandler): void {
    if (this.destroyed || this.closing !== undefined) {
      const err = this.destroyed
        ? new H2Error('H2_DESTROYED', 'The client is destroyed')
        : new H2Error('H2_CLOSED', 'The client is closed');
      queueMicrotask(() => tell(handler, toTransportError(err)));
      return;
    }
    const headers = this.fields.headerFields(opts.headers ?? noHeaders);
    const timeout = opts.timeoutMs ?? this.timeoutMs;
    const req = new PooledRequest(
      this,
      this.fields.pseudoFields(opts.method, headers.host),
      headers,
      opts.path,
      opts.body ?? null,
      opts.bodyFrame,
      timeout,
      timeout,
      opts.signal === undefined ? handler : withSignal(opts.signal, handler),
    );
    if (this.ready.length + this.opening < this.target) this.fill(1);
    if (this.pending.length === 0) {
      const now = performance.now();
      const conn = this.pick(now);
      if (conn !== undefined) {
        // Callers never hear of their request inside their own call to dispatch.
        this.send(conn, req, now);
        return;
      }
    }
    // No room: a connection that went away without an event may be counted as ready, and no replacement open.
    this.dropGoneAway();
    this.enqueue(req);
    this.drainPending();
  }

  /**
   * Queues a request until a connection has room. Its wait counts against its headers bound: a server that takes no
   * streams (SETTINGS_MAX_CONCURRENT_STREAMS 0, or streams that never end) cannot hold it for ever. It fails as
   * refused, never sent, so the caller's retry rules may send it again.
   */
  private enqueue(req: PooledRequest): void {
    req.queuedAt = performance.now();
    this.pending.push(req);
    if (req.headersTimeout > 0) this.armWait(req.queuedAt + req.headersTimeout);
    // Closing, a request sent again waits for a connection opened for it, which holds the process while it can.
    if (this.closing === undefined) this.waitTimer?.ref();
    else this.waitTimer?.unref();
  }

  private armWait(deadline: number): void {
    if (deadline >= this.waitDeadline) return;
    clearTimeout(this.waitTimer);
    this.waitDeadline = deadline;
    this.waitTimer = setTimeout(this.expireWaiting, Math.max(0, deadline - performance.now()));
  }

  private stopWaitTimer(): void {
    clearTimeout(this.waitTimer);
    this.waitTimer = undefined;
    this.waitDeadline = Infinity;
  }

  private readonly expireWaiting = (): void => {
    this.stopWaitTimer();
    const now = performance.now();
    const expired: PooledRequest[] = [];
    let next = Infinity;
    for (let i = this.pending.length; i > 0; i--) {
      const r = this.pending.shift()!;
      const deadline = r.headersTimeout > 0 ? r.queuedAt + r.headersTimeout : Infinity;
      if (deadline <= now) expired.push(r);
      else {
        this.pending.push(r);
        next = Math.min(next, deadline);
      }
    }
    if (next < Infinity) this.armWait(next);
    for (const r of expired) {
      const waited = Math.round(now - r.queuedAt);
      tell(
        r.handler,
        new TransportError(
          'refused',
          `no HTTP/2 connection to ${this.authority} took the request within ${waited} ms (the server allows no more streams at once, or they do not end)`,
        ),
      );
    }
    if (this.closing !== undefined) this.checkClosed();
  };

  /**
   * The connection for the next request: the choice's, kept for the rest of this event-loop turn while it has room,
   * so that the requests of one turn leave in one write and the server reads them in one go, as they would on one
   * connection; the turns spread over the connections.
   */
  private pick(now: number): PooledConnection | undefined {
    // A connection's fair share of the work: while others are opening none takes more (the first one ready would
    // otherwise take a visit's every slice, for minutes), and a turn stays on one connection up to twice it: a turn's
    // requests in one write is what a request costs least in system calls (the regression benchmark measured 13 %
    // more CPU per document with the turn capped at the share), and twice still spreads a large refill.
    const share = Math.ceil((this.inflight + this.pending.length + 1) / (this.ready.length + this.opening));
    const turn = this.turnConn;
    if (turn !== undefined && turn.taking && turn.room > 0 && turn.active < (this.growing() ? share : 2 * share))
      return turn;
    const conn = chooseConnection(this.ready, now, Math.random);
    if (conn !== undefined && conn.active >= share && this.growing()) return undefined;
    if (turn === undefined && conn !== undefined) setImmediate(this.endTurn);
    this.turnConn = conn;
    return conn;
  }

  private send(conn: PooledConnection, req: PooledRequest, now: number): void {
    this.inflight++;
    req.conn = conn;
    req.sentAt = now;
    req.prevUnanswered = conn.lastUnanswered;
    req.nextUnanswered = undefined;
    if (conn.lastUnanswered === undefined) conn.firstUnanswered = req;
    else conn.lastUnanswered.nextUnanswered = req;
    conn.lastUnanswered = req;
    conn.session.request(req);
    // Its stream ids ran out, or the server said GOAWAY: it takes no more.
    if (!conn.session.isReady && conn.taking) this.takeOut(conn);
  }

  private drainPending(): void {
    if (this.pending.length > 0) {
      const now = performance.now();
      while (this.pending.length > 0) {
        const conn = this.pick(now);
        if (conn === undefined) break;
        this.send(conn, this.pending.shift()!, now);
      }
      if (this.pending.length === 0) this.waitTimer?.unref();
    }
    if (this.closing !== undefined) this.checkClosed();
  }

  /** @internal A latency sample of `conn` from an answer (status 0: none came in time) to a request sent at `sentAt`. */
  sample(conn: PooledConnection, status: number, sentAt: number): void {
    const now = performance.now();
    const ms = latencySample(status, now - sentAt, this.typicalMs);
    observeLatency(conn, ms, now);
    this.typicalMs = nextTypical(this.typicalMs, ms);
  }

  /**
   * Opens connections, one per request in flight or waiting (`coming` more about to be) up to `connections`: one at
   * a time until one is ready, then a few at a time. A client with one request out at a time keeps one connection;
   * a feed opens them all at once.
   */
  private fill(coming = 0): void {
    // Closing, it opens only for what still waits (requests a GOAWAY refused): close() ends every request.
    if (this.destroyed || (this.closing !== undefined && this.pending.length === 0)) return;
    const wanted = Math.min(this.target, this.inflight + this.pending.length + coming);
    if (this.ready.length + this.opening >= wanted) return;
    const atOnce = this.ready.length > 0 ? maxConnecting : 1;
    if (this.openFailures > 0 && this.ready.length > 0) {
      // Others carry the work meanwhile; without them the caller's retries pace the attempts, as before any was ready.
      const wait = this.openAfter - performance.now();
      if (wait > 0) {
        this.openTimer ??= setTimeout(() => {
          this.openTimer = undefined;
          if (this.hasWork()) this.fill();
        }, wait).unref();
        return;
      }
    }
    while (this.ready.length + this.opening < wanted && this.opening < atOnce) this.open();
  }

  /**
   * Whether the pool is still opening the connections it is short of, none having failed: a connection's share is
   * then held for those to come. Not while a replacement opens (the pool is whole), nor once one failed to open
   * (a node refusing or silent would hold the work back for its connect timeout, every time).
   */
  private growing(): boolean {
    return this.opening > 0 && this.ready.length < this.target && this.openFailures === 0;
  }

  private hasWork(): boolean {
    return this.inflight + this.pending.length > 0;
  }

  private open(replaces?: PooledConnection): PooledConnection {
    const { host, port, tls: tlsOptions } = originConnection(this.url, this.options.tls, this.options.alpn ?? ['h2']);
    const connectTimeoutMs = this.options.connectTimeoutMs ?? 10_000;
    const proxy = this.options.proxy;
    let socket: net.Socket | PendingSocket;
    const conn = new PooledConnection();
    if (proxy !== undefined) {
      socket = openTunnel(proxy, host, port, { tls: tlsOptions, timeoutMs: connectTimeoutMs });
    } else {
      // Over TCP the socket reads into one buffer of the connection's (`onread`), which the session reads at once:
      // no buffer allocated and shrunk per read (one per frame the server writes apart, a WINDOW_UPDATE of 13
      // bytes as often as not), and none held by a dead answer until a full GC.
      const readBuffer = tlsOptions !== undefined ? undefined : Buffer.allocUnsafeSlow(readBufferBytes);
      const direct =
        readBuffer === undefined
          ? tls.connect({ host, port, ...tlsOptions })
          : net.connect({
              host,
              port,
              onread: {
                buffer: readBuffer,
                callback: (n) => {
                  conn.session.readShared(readBuffer, n);
                  return true;
                },
              },
            });
      const timeout = setTimeout(
        () => direct.destroy(new H2Error('H2_CONNECT_TIMEOUT', `Connect Timeout Error (${host}:${port})`)),
        connectTimeoutMs,
      );
      direct.once(this.https ? 'secureConnect' : 'connect', () => clearTimeout(timeout));
      direct.once('close', () => clearTimeout(timeout));
      socket = direct;
    }
    conn.replaces = replaces;
    conn.session = new H2Session(
      socket,
      {
        streamWindow: this.options.streamWindow ?? defaultStreamWindow,
        connectionWindow: this.options.connectionWindow ?? connectionWindowFor(this.target),
        maxStreams: this.maxStreams,
        settingsTimeoutMs: this.options.connectTimeoutMs ?? 10_000,
      },
      {
        ready: () => this.onReady(conn),
        room: () => this.onRoom(conn),
        refused: this.onRefused,
        closed: (_session, err) => this.onClosed(conn, err),
      },
      this.https,
    );
    this.conns.push(conn);
    this.opening++;
    return conn;
  }

  /** A stream ended, or the server allows more. */
  private onRoom(conn: PooledConnection): void {
    // The server said GOAWAY (its node shuts down, or it ends connections of its own accord): it takes no more.
    // Whether its node is lost is for its close to say (an error with streams cut), not for a GOAWAY.
    if (conn.taking && !conn.session.isReady) this.takeOut(conn);
    this.dropGoneAway();
    if (this.pending.length > 0) this.drainPending();
    else if (this.closing !== undefined) this.checkClosed();
  }

  /**
   * Takes out of the choice the connections that no longer take streams without having said so by an event (a
   * GOAWAY that refused nothing, while a long stream goes on), so that they are not counted as ready and a
   * replacement opens. A look at each ready connection, no allocation.
   */
  private dropGoneAway(): void {
    for (let i = this.ready.length - 1; i >= 0; i--) {
      const c = this.ready[i];
      if (!c.session.isReady) this.takeOut(c);
    }
  }

  private onReady(conn: PooledConnection): void {
    this.opening--;
    this.openFailures = 0;
    const now = performance.now();
    conn.cost = this.typicalMs;
    conn.sampledAt = now;
    const old = conn.replaces;
    conn.replaces = undefined;
    if (this.destroyed || (this.closing !== undefined && this.pending.length === 0)) {
      conn.retired = true;
      conn.session.drain();
    } else {
      conn.taking = true;
      this.ready.push(conn);
      this.scheduleRenewal(conn, retireAfterMs(this.maxAgeMs, now - this.lostAt, Math.random), now);
    }
    if (old !== undefined) {
      old.renewing = false;
      if (old.taking) this.retire(old);
    }
    const waiters = this.connectWaiters;
    this.connectWaiters = [];
    for (const w of waiters) w.resolve();
    // The others open first, so that what waits is shared with them and not all taken by this one.
    this.fill();
    this.drainPending();
  }

  private scheduleRenewal(conn: PooledConnection, afterMs: number, now: number): void {
    clearTimeout(conn.renewTimer);
    conn.renewTimer = undefined;
    conn.retireAt = now + afterMs;
    if (afterMs === Infinity) return;
    // Past 2^31-1 ms a timer fires at once; an age that long is no age.
    if (afterMs > 2 ** 31 - 1) return;
    conn.renewTimer = setTimeout(() => this.renew(conn), afterMs).unref();
  }

  /** Its age is up: a replacement opens while it carries on, and it drains once the replacement is ready. */
  private renew(conn: PooledConnection): void {
    conn.renewTimer = undefined;
    if (!conn.taking || conn.renewing || this.destroyed || this.closing !== undefined) return;
    if (!this.hasWork()) {
      // Nothing to carry: it closes, and the next request opens what it needs.
      this.retire(conn);
      return;
    }
    conn.renewing = true;
    this.open(conn);
  }

  /** Takes a connection out of the choice: its streams end where they are, then it closes. */
  private retire(conn: PooledConnection): void {
    conn.retired = true;
    this.takeOut(conn);
    conn.session.drain();
    // Closed at once when it has no streams; else watched until its last one ends.
    if (conn.session.active > 0) this.watchDrain(conn);
  }

  /**
   * A drain is bounded by progress, not by time: a long visit stream that goes on receiving is left to finish; a
   * drain none of whose streams moved for a whole request timeout is ended (each stream's own timeout would
   * usually have failed it first; this covers streams without one).
   */
  private watchDrain(conn: PooledConnection): void {
    if (conn.drainWatch !== undefined) return;
    const everyMs = this.timeoutMs > 0 ? this.timeoutMs : 300_000;
    let seen = conn.progress;
    conn.drainWatch = setInterval(() => {
      if (conn.progress !== seen) {
        seen = conn.progress;
        return;
      }
      conn.session.destroy(
        new H2Error(
          'H2_CONNECTION_CLOSED',
          `HTTP/2 connection closed: it was being replaced and its streams made no progress for ${Math.round(everyMs / 1000)} s`,
        ),
      );
    }, everyMs).unref();
  }

  /** Out of the choice: it takes no new streams; those on it end where they are. */
  private takeOut(conn: PooledConnection): void {
    if (!conn.taking) return;
    conn.taking = false;
    clearTimeout(conn.renewTimer);
    conn.renewTimer = undefined;
    const i = this.ready.indexOf(conn);
    if (i >= 0) this.ready.splice(i, 1);
    if (this.hasWork()) this.fill();
  }

  /**
   * A connection in use was lost: its node is likely gone for now. Its replacement opens at once (on the nodes
   * still there) and every connection is renewed sooner for a while, so that one reaches the node soon after it
   * is back.
   */
  private onLoss(): void {
    const now = performance.now();
    this.lostAt = now;
    for (const c of this.ready) {
      if (c.renewing) continue;
      const after = retireAfterMs(this.maxAgeMs, 0, Math.random);
      if (now + after < c.retireAt) this.scheduleRenewal(c, after, now);
    }
  }

  /**
   * @internal `AutoTransport`'s probe (callers learn the protocol from `detect()`): opens a connection, if none is
   * open or opening, and resolves once the server's SETTINGS arrive: the server speaks HTTP/2. Rejects with what the
   * connection failed of (H2_NOT_SUPPORTED: it does not).
   */
  whenReady(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (this.ready.length > 0) {
        resolve();
        return;
      }
      this.connectWaiters.push({ resolve, reject });
      if (this.opening === 0) this.open();
    });
  }

  private onClosed(conn: PooledConnection, err: Error | undefined): void {
    const i = this.conns.indexOf(conn);
    if (i >= 0) this.conns.splice(i, 1);
    clearInterval(conn.drainWatch);
    const everReady = conn.session.everReady;
    if (!everReady) {
      this.opening--;
      if (err !== undefined) {
        this.openFailures++;
        this.openAfter = performance.now() + Math.min(maxOpenBackoffMs, openBackoffMs * 2 ** (this.openFailures - 1));
      }
      const old = conn.replaces;
      if (old !== undefined) {
        // The replacement failed: the old one carries on and tries again later.
        old.renewing = false;
        const now = performance.now();
        if (old.taking) this.scheduleRenewal(old, Math.max(renewRetryMs, this.openAfter - now), now);
      }
    }
    // A node is lost when its connection fails with streams on it; a graceful GOAWAY or an idle close is no loss.
    const lost =
      everReady && conn.cut > 0 && err !== undefined && !conn.retired && this.closing === undefined && !this.destroyed;
    this.takeOut(conn);
    if (lost) this.onLoss();
    if (!everReady && this.connectWaiters.length > 0 && this.ready.length === 0 && this.opening === 0) {
      const waiters = this.connectWaiters;
      this.connectWaiters = [];
      for (const w of waiters)
        w.reject(err ?? new H2Error('H2_CONNECTION_CLOSED', 'other side closed', { bytesRead: 0 }));
    }
    if (this.pending.length > 0 && !this.destroyed) {
      if (!everReady && err !== undefined && this.ready.length === 0 && this.opening === 0) {
        // The connection failed before it could carry anything and none other can: the waiting requests fail
        // with what it died of (refused, unknown host, TLS), as the caller's first sign of an unreachable endpoint.
        const waiting: PooledRequest[] = [];
        for (let r = this.pending.shift(); r !== undefined; r = this.pending.shift()) waiting.push(r);
        this.waitTimer?.unref();
        for (const r of waiting) tell(r.handler, unsentFailure(err, this.https));
      } else {
        this.drainPending();
        this.fill();
      }
    }
    if (this.closing !== undefined) this.checkClosed();
  }

  /** Resolves once every request has ended and the connections are closed; new requests are refused. */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      this.closeWaiters.push(resolve);
    });
    clearTimeout(this.openTimer);
    this.checkClosed();
    return this.closing;
  }

  private checkClosed(): void {
    if (this.pending.length > 0) return;
    for (const c of this.conns) if (c.session.active > 0) return;
    for (const c of [...this.conns]) {
      c.retired = true;
      this.takeOut(c);
      c.session.drain();
    }
    if (this.conns.length > 0) return;
    const waiters = this.closeWaiters;
    this.closeWaiters = [];
    for (const w of waiters) w();
  }

  /** Ends every request now (they fail with `err`, or as destroyed) and closes the connections. */
  destroy(err?: Error): Promise<void> {
    this.destroyed = true;
    clearTimeout(this.openTimer);
    this.stopWaitTimer();
    const failure = err ?? new H2Error('H2_DESTROYED', 'The client is destroyed');
    const waiting: PooledRequest[] = [];
    for (let r = this.pending.shift(); r !== undefined; r = this.pending.shift()) waiting.push(r);
    for (const r of waiting) tell(r.handler, toTransportError(failure));
    for (const c of [...this.conns]) {
      c.retired = true;
      this.takeOut(c);
      c.session.destroy(failure);
    }
    this.closing ??= Promise.resolve();
    const waiters = this.closeWaiters;
    this.closeWaiters = [];
    for (const w of waiters) w();
    return Promise.resolve();
  }
}
