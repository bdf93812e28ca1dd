import type { Socket } from 'node:net';
import { isPending, type PendingSocket } from '../proxy/pending-socket.js';
import type { TLSSocket } from 'node:tls';
import {
  ErrorCode,
  Setting,
  defaultWindow,
  errorName,
  goawayFrame,
  preface,
  rstStreamFrame,
  settingsFrame,
  windowUpdateFrame,
} from './frame.js';
import { H2Error, abortFailure, refusedError } from './errors.js';
import { type H2Request, Stream, bodyLength } from './stream.js';
import { FrameWriter } from './frame-writer.js';
import { Liveness, LivenessStep, defaultPingTimeoutMs, defaultReadIdleMs } from './liveness.js';
import { Receiver } from './receiver.js';
import { RequestWriter } from './request-writer.js';
import { type PeerSettings, peerDefaults } from './settings.js';
import { GoawayFate, goawayFate, goawayLastStream } from './goaway.js';
import { overdue, sweepEvery } from './timeouts.js';
import { toTransportError } from '../transport-error.js';
import { type SessionOptions, defaultCloseTimeoutMs, defaultMaxHeaderListSize } from './session-options.js';

/**
 * One HTTP/2 connection of the client (RFC 9113): the preface and settings, streams with their flow-control
 * windows, header compression, and the writes of one event-loop turn gathered into one. An I/O edge: the pool
 * (`pool.ts`) decides which requests come here; this class only carries them.
 *
 * Answers go to the transport's `ResponseHandler` (transport.ts), failures as `TransportError`s made from the
 * `H2Error`s here by `toTransportError`. An exception thrown by a handler fails its own request (onError gets it;
 * the stream is reset), and one thrown by onComplete goes to onError; one thrown by onError is dropped, the request
 * having failed already. None reaches the socket's listeners or another request.
 */

export type { H2Request } from './stream.js';
export type { SessionOptions } from './session-options.js';
export { defaultMaxHeaderListSize } from './session-options.js';

/**
 * TCP keepalive's first probe after this long idle (the system's default is two hours): for a connection with no
 * requests open, which the read-idle PING does not watch, a vanished peer is found before it is given work.
 */
const keepAliveMs = 30_000;

/** The PING this client sends to see whether the connection is alive; any answer will do. */
const ownPing = Buffer.from([0, 0, 8, 0x6, 0, 0, 0, 0, 0, 0x76, 0x62, 0x2d, 0x6c, 0x69, 0x76, 0x65, 0x21]);

/** What a session tells its pool. */
export interface SessionEvents {
  /** The server's settings arrived: requests may go. */
  ready(session: H2Session): void;
  /** A stream ended, or the server allows more: there may be room for another request. */
  room(session: H2Session): void;
  /** The server did not process `request` (refused stream, GOAWAY): it may go again on another connection. */
  refused(request: H2Request, err: H2Error): void;
  /** The connection is gone (or takes no new streams and has none left); `err` when it failed. */
  closed(session: H2Session, err: Error | undefined): void;
}

const enum State {
  /** Preface sent, waiting for the server's SETTINGS. */
  Opening,
  Ready,
  /** No new streams (GOAWAY received or sent, ids used up); closes when the last stream ends. */
  Draining,
  Closed,
}

/** Stream ids go up to 2^31-1; a connection near the end takes no more and a new one is opened. */
const lastUsableStreamId = 2 ** 31 - 1 - 2 * 1024;

export class H2Session {
  private state = State.Opening;
  private readonly streams = new Map<number, Stream>();
  private nextId = 1;
  private readonly writer = new FrameWriter();
  /** What the server's SETTINGS allow us. */
  private readonly peer: PeerSettings = peerDefaults();
  /** HEADERS and bodies under the send windows. */
  private readonly requests: RequestWriter;
  private readonly liveness: Liveness | undefined;
  private livenessTimer: NodeJS.Timeout | undefined;
  /** The server's frames, read and handed to the streams. */
  private readonly receiver: Receiver;
  private readonly maxHeaderList: number;
  private sweeper: NodeJS.Timeout | undefined;
  private sweepMs = 1000;
  private closeError: Error | undefined;
  private wasReady = false;
  private settingsAcked = false;
  private settingsTimer: NodeJS.Timeout | undefined;
  private closeTimer: NodeJS.Timeout | undefined;
  /** The last stream id of the server's GOAWAY; -1 before one. */
  private goawayLast = -1;

  private socket!: Socket;
  /** The socket while it is still being made (a tunnel through a proxy): the session starts once it is there. */
  private pending: PendingSocket | undefined;

  constructor(
    socket: Socket | PendingSocket,
    private readonly options: SessionOptions,
    private readonly events: SessionEvents,
    /** For TLS: the protocol ALPN must agree on before anything is sent. */
    private readonly tls = false,
  ) {
    this.maxHeaderList = options.maxHeaderListSize ?? defaultMaxHeaderListSize;
    this.requests = new RequestWriter(this.writer, this.peer, {
      holds: (s) => this.streams.get(s.id) === s,
      refuse: (s, fault) => this.refuse(s, fault),
      bodySent: (s) => {
        this.forget(s);
        this.events.room(this);
      },
    });
    const readIdle = options.readIdleTimeoutMs ?? defaultReadIdleMs;
    if (readIdle > 0)
      this.liveness = new Liveness(readIdle, options.pingTimeoutMs ?? defaultPingTimeoutMs, performance.now());
    this.receiver = new Receiver(
      this.writer,
      this.peer,
      this.requests,
      this.streams,
      this.maxHeaderList,
      options.connectionWindow,
      options.streamWindow,
      {
        nextId: () => this.nextId,
        notHttp2: (message) =>
          this.destroy(new H2Error('H2_NOT_SUPPORTED', message, { bytesRead: this.receiver.bytesRead })),
        connectionError: (code, message, kind, cause) => this.connectionError(code, message, kind, cause),
        settingsAcked: () => {
          this.settingsAcked = true;
          if (this.state !== State.Opening) clearTimeout(this.settingsTimer);
        },
        settingsApplied: (grew) => this.onSettings(grew),
        goaway: (id, buf, start, end) => this.onGoaway(id, buf, start, end),
        headerBlockEnded: () => {
          if (this.state === State.Ready) this.events.room(this);
        },
        forget: (s) => this.forget(s),
        fail: (req, err) => this.fail(req, err),
        refused: (req, err) => this.events.refused(req, err),
        streamError: (s, code, err) => this.streamError(s, code, err),
        abortStream: (s, reason) => this.abortStream(s, reason),
        room: () => this.events.room(this),
      },
    );
    if (!isPending(socket)) {
      this.attach(socket, false);
      return;
    }
    this.pending = socket;
    socket.promise.then(
      (made) => {
        if (this.pending !== socket) {
          made.destroy();
          return;
        }
        this.pending = undefined;
        this.attach(made, true);
        // Handed over paused, with what came after the proxy's answer put back: it flows once our listeners are on.
        made.resume();
      },
      (err: unknown) => {
        if (this.pending !== socket) return;
        this.pending = undefined;
        this.close(err instanceof Error ? err : new Error(String(err)));
      },
    );
  }

  /** Listens to `socket`; `made`: it is connected already (and its TLS handshake done), so the session starts now. */
  private attach(socket: Socket, made: boolean): void {
    this.socket = socket;
    this.writer.socket = socket;
    socket.setNoDelay(true);
    socket.setKeepAlive(true, keepAliveMs);
    socket.on('data', (chunk: Buffer) => this.receiver.read(chunk));
    socket.on('drain', () => this.onDrain());
    socket.on('error', (err: NodeJS.ErrnoException) => {
      // A TLS server that speaks no HTTP/2 answers an offer of h2 alone with this alert (RFC 7301).
      if (err.code === 'ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL')
        this.destroy(
          new H2Error('H2_NOT_SUPPORTED', 'the server agreed on no protocol when offered h2 (ALPN)', {
            bytesRead: 0,
            cause: err,
          }),
        );
      else this.destroy(err);
    });
    socket.on('close', () => {
      clearTimeout(this.closeTimer);
      this.destroy(this.closeError ?? this.socketClosedError());
    });
    if (this.tls) {
      if (made) this.onSecure();
      else (socket as TLSSocket).once('secureConnect', () => this.onSecure());
    } else {
      this.start();
      if (made) this.awaitSettings();
      else socket.once('connect', () => this.awaitSettings());
    }
  }

  /**
   * `n` bytes the socket read into its one read buffer (net's `onread`): valid only during the call, so the
   * receiver copies what it keeps.
   */
  readShared(buf: Buffer, n: number): void {
    this.receiver.read(buf.subarray(0, n), true);
  }

  /** The TLS handshake is done: HTTP/2 starts if ALPN agreed on it. */
  private onSecure(): void {
    const alpn = (this.socket as TLSSocket).alpnProtocol;
    if (alpn !== 'h2')
      this.destroy(
        new H2Error(
          'H2_NOT_SUPPORTED',
          `the server chose ${alpn === false || alpn === undefined ? 'no protocol' : alpn} instead of h2 (ALPN)`,
          { bytesRead: 0 },
        ),
      );
    else {
      this.start();
      this.awaitSettings();
    }
  }

  /**
   * A server that accepts the connection and never answers the preface with SETTINGS does not speak HTTP/2; one
   * that never acknowledges ours breaks the protocol (SETTINGS_TIMEOUT, RFC 9113 6.5.3).
   */
  private awaitSettings(): void {
    if (this.state !== State.Opening) return;
    this.settingsTimer = setTimeout(() => {
      const seconds = Math.round(this.options.settingsTimeoutMs / 100) / 10;
      if (this.state === State.Opening) {
        this.destroy(
          new H2Error(
            'H2_NOT_SUPPORTED',
            `the server does not speak HTTP/2: no SETTINGS within ${seconds} s of the HTTP/2 preface`,
            { bytesRead: this.receiver.bytesRead },
          ),
        );
      } else if (!this.settingsAcked) {
        this.connectionError(
          ErrorCode.SettingsTimeout,
          `the server did not acknowledge the client's SETTINGS within ${seconds} s`,
          'H2_SETTINGS_TIMEOUT',
        );
      }
    }, this.options.settingsTimeoutMs);
  }

  /** Streams open now. */
  get active(): number {
    return this.streams.size;
  }

  /**
   * How many more streams this connection takes now: 0 unless ready, while the socket holds all it should (a
   * server that does not read), and in the middle of a header block (nothing else can arrive before it ends).
   */
  get room(): number {
    if (this.state !== State.Ready || this.writer.full || this.receiver.headerBlock.open) return 0;
    return Math.min(this.peer.maxStreams, this.options.maxStreams) - this.streams.size;
  }

  get isReady(): boolean {
    return this.state === State.Ready;
  }

  /** Connecting, or waiting for the server's first SETTINGS. */
  get isOpening(): boolean {
    return this.state === State.Opening;
  }

  /** Whether the server's SETTINGS ever arrived (false: the connection failed before it could carry anything). */
  get everReady(): boolean {
    return this.wasReady;
  }

  get isOpen(): boolean {
    return this.state === State.Opening || this.state === State.Ready;
  }

  /** The most streams the server allows at once (SETTINGS_MAX_CONCURRENT_STREAMS). */
  get serverMaxStreams(): number {
    return this.peer.maxStreams;
  }

  private start(): void {
    const settings = settingsFrame([
      [Setting.EnablePush, 0],
      [Setting.InitialWindowSize, this.options.streamWindow],
      [Setting.MaxHeaderListSize, this.maxHeaderList],
    ]);
    const grow = this.options.connectionWindow - defaultWindow;
    this.socket.write(
      grow > 0 ? Buffer.concat([preface, settings, windowUpdateFrame(0, grow)]) : Buffer.concat([preface, settings]),
    );
  }

  /** Sends `req` on a new stream. The pool calls it only while `room > 0`. */
  request(req: H2Request): void {
    const id = this.nextId;
    this.nextId += 2;
    const now = performance.now();
    const s = new Stream(this, id, req, this.peer.initialWindow, this.options.streamWindow, now);
    if (this.streams.size === 0) this.socket.ref();
    this.streams.set(id, s);
    if (id >= lastUsableStreamId) this.drain();
    if (req.headersTimeout > 0) this.watch(req.headersTimeout);
    if (req.bodyTimeout > 0) this.watch(req.bodyTimeout);
    try {
      req.handler.onStart?.(s);
    } catch (err) {
      this.abortStream(s, err);
    }
    if (this.streams.get(id) !== s) return; // Aborted in onStart.
    if (!this.requests.writeHeaders(s)) return;
    if (bodyLength(req) > 0) this.requests.sendBody(s);
    else s.bodyAt = -1;
  }

  /** Fails a request whose path or fields may not be sent, before anything of it is. */
  private refuse(s: Stream, fault: string): void {
    this.forget(s);
    // Told a turn later: the pool hands requests over inside its caller's dispatch(), which hears of none there.
    const err = new H2Error('H2_INVALID_REQUEST', `invalid request: ${fault}`);
    queueMicrotask(() => this.fail(s.req, err));
    this.events.room(this);
  }

  private queue(frame: Buffer): void {
    this.writer.queue(frame);
  }

  private onDrain(): void {
    if (this.writer.drained() && this.state === State.Ready) this.events.room(this);
  }

  /** @internal `RequestControl.resume` of a stream. */
  resumeStream(s: Stream): void {
    this.receiver.resume(s);
  }

  /** The server's SETTINGS are applied: the first make the connection ready, later ones may give room. */
  private onSettings(grew: boolean): void {
    if (this.state === State.Opening) {
      this.state = State.Ready;
      this.wasReady = true;
      // Still waiting for the ACK of ours, but that wait alone keeps no process alive.
      if (this.settingsAcked) clearTimeout(this.settingsTimer);
      else this.settingsTimer?.unref();
      this.socket.unref();
      this.watchLiveness();
      this.events.ready(this);
    } else if (grew) {
      this.requests.unblock();
      this.events.room(this);
    }
  }

  private onGoaway(id: number, buf: Buffer, start: number, end: number): void {
    const last = goawayLastStream(id, buf, start, end, this.goawayLast);
    const code = buf.readUInt32BE(start + 4);
    this.goawayLast = last;
    if (code !== ErrorCode.NoError)
      this.closeError = new H2Error(
        'H2_CONNECTION_CLOSED',
        `HTTP/2 connection closed by the server: GOAWAY ${errorName(code)}`,
        { h2Code: code, bytesRead: this.receiver.bytesRead },
      );
    if (this.state === State.Opening || this.state === State.Ready) this.state = State.Draining;
    for (const s of [...this.streams.values()]) {
      const fate = goawayFate(s, last);
      if (fate === GoawayFate.Stays) continue;
      this.forget(s);
      if (fate === GoawayFate.Failed)
        this.fail(
          s.req,
          new H2Error(
            'H2_PROTOCOL_ERROR',
            `HTTP/2 GOAWAY ${errorName(code)} names a stream the server had begun to answer as unprocessed`,
            { h2Code: code },
          ),
        );
      else if (fate === GoawayFate.Refused) this.events.refused(s.req, refusedError(`GOAWAY ${errorName(code)}`, code));
    }
    this.closeIfDone();
  }

  /** Takes the stream out of the connection; its request's fate is the caller's to tell. */
  private forget(s: Stream): void {
    this.streams.delete(s.id);
    // What it held unread no longer waits for more of its answer.
    if (s.held > 0) {
      this.receiver.returnToConnection(s.held);
      s.held = 0;
    }
    if (this.streams.size === 0) {
      if (this.state === State.Ready) this.socket.unref();
      this.closeIfDone();
    }
  }

  /** Ends a stream from this side (its handler's abort, or its exception), resetting it if the server saw it. */
  /** @internal `RequestControl.abort` of a stream. */
  abortStream(s: Stream, reason: unknown): void {
    // After the whole answer, nothing is left to abort but the rest of the body, which goes on.
    if (this.streams.get(s.id) !== s || s.answered) return;
    this.forget(s);
    if (s.sent) this.queue(rstStreamFrame(s.id, ErrorCode.Cancel));
    // The caller's reason, or its handler's exception, is what the request failed of: an abort, whatever it says.
    this.fail(s.req, abortFailure(reason));
    this.events.room(this);
  }

  private streamError(s: Stream, code: ErrorCode, err: H2Error): void {
    this.forget(s);
    this.queue(rstStreamFrame(s.id, code));
    if (!s.answered) this.fail(s.req, err);
    this.events.room(this);
  }

  /**
   * A connection error (RFC 9113, 5.4.1): GOAWAY naming the last stream this client processed from the server
   * (0: it takes none, push being off; 6.8), the connection closed, every stream failed with what went wrong.
   */
  private connectionError(code: ErrorCode, message: string, kind = 'H2_PROTOCOL_ERROR', cause?: unknown): void {
    if (this.state === State.Closed) return;
    // What was queued is moot.
    this.writer.takeAll();
    this.endSocket(goawayFrame(0, code));
    const what =
      kind === 'H2_PROTOCOL_ERROR'
        ? `HTTP/2 protocol error by the server: ${message}`
        : `HTTP/2 connection closed: ${message}`;
    this.close(
      new H2Error(kind, `${what} (GOAWAY ${errorName(code)})`, {
        h2Code: code,
        bytesRead: this.receiver.bytesRead,
        cause,
      }),
    );
  }

  private watch(timeoutMs: number): void {
    const every = sweepEvery(timeoutMs);
    if (this.sweeper !== undefined && every >= this.sweepMs) return;
    clearInterval(this.sweeper);
    this.sweepMs = every;
    this.sweeper = setInterval(() => this.sweep(), every);
    this.sweeper.unref();
  }

  /** Fails the streams whose answer is overdue (headers) or stalled (body), and gives up on bodies an answer left unsent. */
  private sweep(): void {
    const now = performance.now();
    for (const s of [...this.streams.values()]) {
      if (this.streams.get(s.id) !== s) continue;
      const err = overdue(s, now);
      if (err !== undefined) {
        this.streamError(s, ErrorCode.Cancel, err);
        if (this.receiver.headerBlock.open && this.receiver.headerBlock.streamId === s.id) {
          // Nothing else can come on this connection until the server ends that block, and it does not.
          this.connectionError(
            ErrorCode.NoError,
            'a header block the server did not finish within the headers timeout',
            'H2_CONNECTION_CLOSED',
          );
          return;
        }
      }
    }
  }

  private watchLiveness(): void {
    const liveness = this.liveness;
    if (liveness === undefined) return;
    this.livenessTimer = setInterval(() => {
      if (this.state === State.Closed) return;
      const step = liveness.check(performance.now(), this.receiver.bytesRead, this.streams.size > 0);
      if (step === LivenessStep.Ping) this.queue(ownPing);
      else if (step === LivenessStep.Dead) this.dead(liveness);
    }, liveness.checkEveryMs);
    this.livenessTimer.unref();
  }

  /**
   * The server answered nothing, our PING included: the connection is closed. Requests whose HEADERS are still
   * in the out buffer never left the process and go elsewhere; the others fail, maybe applied (the server may
   * have them), with `H2_PING_TIMEOUT`.
   */
  private dead(liveness: Liveness): void {
    const unsent: Stream[] = [];
    for (const s of this.streams.values()) if (s.queuedAt === this.writer.handovers) unsent.push(s);
    for (const s of unsent) this.streams.delete(s.id);
    this.destroy(
      new H2Error(
        'H2_PING_TIMEOUT',
        `HTTP/2 connection dead: nothing read for ${liveness.readIdleMs / 1000} s with requests open, and no answer to a PING within ${liveness.pingTimeoutMs / 1000} s`,
        { bytesRead: this.receiver.bytesRead },
      ),
    );
    // Told once the connection is closed, so that they are not given to it again.
    for (const s of unsent) this.events.refused(s.req, refusedError('the connection died before it was sent'));
  }

  /** Takes no new streams; closes once the open ones are done. */
  drain(): void {
    if (this.state === State.Opening || this.state === State.Ready) this.state = State.Draining;
    this.closeIfDone();
  }

  private closeIfDone(): void {
    if (this.state !== State.Draining || this.streams.size > 0) return;
    if (this.pending !== undefined) {
      this.destroy(undefined);
      return;
    }
    // What is queued goes before the GOAWAY, room in the socket or not: it is the last of it.
    for (const part of this.writer.takeAll()) this.socket.write(part);
    this.endSocket(goawayFrame(0, ErrorCode.NoError));
    this.close(undefined);
  }

  /** Closes the connection now; open streams fail with `err` (or as destroyed). */
  destroy(err: Error | undefined): void {
    if (this.state === State.Closed) return;
    if (this.pending !== undefined) {
      this.pending.cancel();
      this.pending = undefined;
    } else if (err !== undefined) this.socket.destroy();
    else this.endSocket(undefined);
    this.close(err);
  }

  /**
   * Ends our side of the socket with `last`, and bounds the wait for the server's: a server that neither reads
   * what is left nor closes must keep neither the connection nor the process (the socket is unreferenced, and
   * destroyed after `closeTimeoutMs` whatever is still unwritten).
   */
  private endSocket(last: Buffer | undefined): void {
    const socket = this.socket;
    if (socket.destroyed) return;
    if (!socket.writableEnded) {
      if (last !== undefined) socket.end(last);
      else socket.end();
    }
    socket.unref();
    if (this.closeTimer === undefined) {
      this.closeTimer = setTimeout(() => socket.destroy(), this.options.closeTimeoutMs ?? defaultCloseTimeoutMs);
      this.closeTimer.unref();
    }
  }

  /** The session is over: no more streams, every open one failed (but those whose answer was whole), the pool told. */
  private close(err: Error | undefined): void {
    if (this.state === State.Closed) return;
    this.state = State.Closed;
    this.writer.closed = true;
    this.receiver.closed = true;
    clearInterval(this.sweeper);
    clearInterval(this.livenessTimer);
    clearTimeout(this.settingsTimer);
    const failure = err ?? new H2Error('H2_DESTROYED', 'The client is destroyed');
    const open = [...this.streams.values()];
    this.streams.clear();
    this.requests.clear();
    this.receiver.headerBlock.clear();
    for (const s of open) if (!s.answered) this.fail(s.req, failure);
    this.events.closed(this, err);
  }

  /** Tells a request it failed. Its handler's own exception goes no further: the request has failed already. */
  private fail(req: H2Request, err: unknown): void {
    try {
      req.handler.onError(toTransportError(err instanceof Error ? err : new Error(String(err)), this.tls));
    } catch {
      // Nothing left to tell.
    }
  }

  private socketClosedError(): H2Error {
    return new H2Error('H2_CONNECTION_CLOSED', 'other side closed', { bytesRead: this.receiver.bytesRead });
  }
}
