import type { Socket } from 'node:net';
import { isPending, type PendingSocket } from '../proxy/pending-socket.js';
import type { TLSSocket } from 'node:tls';
import {
  ErrorCode,
  Flag,
  FrameReader,
  FrameSizeError,
  FrameType,
  Setting,
  defaultMaxFrameSize,
  defaultWindow,
  errorName,
  frameHeaderLength,
  goawayFrame,
  maxWindow,
  preface,
  rstStreamFrame,
  settingsFrame,
  windowUpdateFrame,
  writeFrameHeader,
} from './frame.js';
import { HeaderListTooLarge, HpackDecoder, HpackError } from './hpack.js';
import {
  ConnectionError,
  H2Error,
  abortFailure,
  frameSizeError,
  protocolError,
  refusedError,
  resetError,
  streamFailure,
} from './errors.js';
import { type AnswerHead, readAnswerHead, trailersFault } from './fields.js';
import { type H2Request, Stream, noBodyExpected } from './stream.js';
import { maxOutstandingAcks } from './flood-guard.js';
import { FrameWriter } from './frame-writer.js';
import { HeaderBlock } from './header-block.js';
import { Liveness, LivenessStep, defaultPingTimeoutMs, defaultReadIdleMs } from './liveness.js';
import { RequestWriter } from './request-writer.js';
import { type PeerSettings, SettingEffect, applySetting, isSettingsAck, peerDefaults } from './settings.js';
import { ConnectionInflow, windowUpdateDue } from './flow-control.js';
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
  private readonly decoder = new HpackDecoder();
  private readonly reader: FrameReader;
  private readonly writer = new FrameWriter();
  /** What the server's SETTINGS allow us. */
  private readonly peer: PeerSettings = peerDefaults();
  /** HEADERS and bodies under the send windows. */
  private readonly requests: RequestWriter;
  private readonly liveness: Liveness | undefined;
  private livenessTimer: NodeJS.Timeout | undefined;
  /** What we allow the server on the connection. */
  private readonly inflow: ConnectionInflow;
  private readonly maxHeaderList: number;
  /** A header block being gathered from HEADERS and CONTINUATION frames. */
  private readonly headerBlock: HeaderBlock;
  /** What `readAnswerHead` found in the last answer's header block (one object for the connection's life). */
  private readonly head: AnswerHead = { status: -1, contentLength: -1 };
  private sweeper: NodeJS.Timeout | undefined;
  private sweepMs = 1000;
  private closeError: Error | undefined;
  private bytesRead = 0;
  private firstFrame = true;
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
    this.headerBlock = new HeaderBlock(this.maxHeaderList);
    this.inflow = new ConnectionInflow(options.connectionWindow, Math.max(options.connectionWindow, defaultWindow));
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
    this.reader = new FrameReader(
      (type, flags, id, buf, start, end) => this.onFrame(type, flags, id, buf, start, end),
      defaultMaxFrameSize,
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
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
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
            { bytesRead: this.bytesRead },
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
    if (this.state !== State.Ready || this.writer.full || this.headerBlock.open) return 0;
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
    if (req.body !== null && req.body.length > 0) this.requests.sendBody(s);
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

  /** Queues an acknowledgement the server asked for (PING, SETTINGS); too many unread ones are a flood. */
  private queueAck(frame: Buffer): void {
    if (!this.writer.queueAck(frame))
      throw new ConnectionError(
        ErrorCode.EnhanceYourCalm,
        `the server sent more than ${maxOutstandingAcks} PING and SETTINGS frames without reading the answers`,
        'H2_FLOOD',
      );
  }

  private onDrain(): void {
    if (this.writer.drained() && this.state === State.Ready) this.events.room(this);
  }

  private onData(chunk: Buffer): void {
    // A connection being closed reads on only so that the server's last frames do not reset it.
    if (this.state === State.Closed) return;
    if (this.firstFrame && this.bytesRead === 0 && chunk.length >= 5 && chunk.toString('latin1', 0, 5) === 'HTTP/') {
      this.bytesRead += chunk.length;
      this.destroy(
        new H2Error(
          'H2_NOT_SUPPORTED',
          `the server does not speak HTTP/2: it answered the HTTP/2 preface with '${chunk.toString('latin1', 0, Math.min(chunk.length, 40)).split('\r')[0]}'`,
          { bytesRead: this.bytesRead },
        ),
      );
      return;
    }
    this.bytesRead += chunk.length;
    try {
      this.reader.push(chunk);
    } catch (err) {
      this.onReadError(err);
    }
  }

  /** What reading threw: the server broke the protocol (or this client did, INTERNAL_ERROR). Never rethrown into the socket's listener. */
  private onReadError(err: unknown): void {
    if (this.state === State.Closed) return;
    if (this.firstFrame)
      this.destroy(
        new H2Error(
          'H2_NOT_SUPPORTED',
          'the server does not speak HTTP/2: its answer to the HTTP/2 preface is not an HTTP/2 frame',
          { bytesRead: this.bytesRead },
        ),
      );
    else if (err instanceof ConnectionError) this.connectionError(err.h2Code, err.message, err.kind);
    else if (err instanceof FrameSizeError) this.connectionError(ErrorCode.FrameSizeError, err.message);
    else if (err instanceof HeaderListTooLarge)
      this.connectionError(ErrorCode.EnhanceYourCalm, `the server sent ${err.message}`, 'H2_HEADERS_TOO_LARGE');
    else if (err instanceof HpackError)
      this.connectionError(ErrorCode.CompressionError, `header compression: ${err.message}`);
    else
      this.connectionError(
        ErrorCode.InternalError,
        `internal error: ${err instanceof Error ? err.message : String(err)}`,
        'H2_CONNECTION_CLOSED',
        err,
      );
  }

  private onFrame(type: number, flags: number, id: number, buf: Buffer, start: number, end: number): void {
    if (this.state === State.Closed) return;
    if (this.firstFrame) {
      this.firstFrame = false;
      if (type !== FrameType.Settings || (flags & Flag.Ack) !== 0) {
        this.destroy(
          new H2Error(
            'H2_NOT_SUPPORTED',
            'the server does not speak HTTP/2: its answer to the HTTP/2 preface is not SETTINGS',
            { bytesRead: this.bytesRead },
          ),
        );
        return;
      }
    }
    if (this.headerBlock.open && type !== FrameType.Continuation)
      throw protocolError('a header block interrupted by another frame');
    switch (type) {
      case FrameType.Data:
        this.onDataFrame(flags, id, buf, start, end);
        return;
      case FrameType.Headers:
        this.onHeadersFrame(flags, id, buf, start, end);
        return;
      case FrameType.Continuation:
        this.onContinuation(flags, id, buf, start, end);
        return;
      case FrameType.RstStream:
        this.onRstStream(id, buf, start, end);
        return;
      case FrameType.Settings:
        this.onSettings(flags, id, buf, start, end);
        return;
      case FrameType.Ping:
        this.onPing(flags, id, buf, start, end);
        return;
      case FrameType.Goaway:
        this.onGoaway(id, buf, start, end);
        return;
      case FrameType.WindowUpdate:
        this.onWindowUpdate(id, buf, start, end);
        return;
      case FrameType.Priority:
        this.onPriority(id, start, end);
        return;
      case FrameType.PushPromise:
        throw protocolError('PUSH_PROMISE although push is disabled');
      default:
        // Unknown frame types are ignored (RFC 9113, 4.1).
        return;
    }
  }

  /**
   * A stream the server cannot have: an even id (push is off, so the server opens none), or one the client has
   * not opened yet (RFC 9113, 5.1 idle). Frames on it, but PRIORITY, are connection errors.
   */
  private isIdle(id: number): boolean {
    return (id & 1) === 0 || id >= this.nextId;
  }

  /**
   * The connection's window is returned as the bytes are read, not as they arrive: a stream whose reader is paused
   * holds its share until it resumes, so the connection's window bounds what all the streams together hold unread
   * (and each stream's window may be large enough for a long round trip without multiplying that bound). Both
   * windows are enforced: what the server sends past them is refused (FLOW_CONTROL_ERROR, RFC 9113 6.9.1).
   */
  private onDataFrame(flags: number, id: number, buf: Buffer, start: number, end: number): void {
    if (id === 0) throw protocolError('DATA on stream 0');
    // Flow control counts the whole payload, padding included.
    const length = end - start;
    if ((flags & Flag.Padded) !== 0) {
      if (length === 0) throw frameSizeError('a padded DATA frame without its pad length');
      const pad = buf[start];
      start += 1;
      if (pad >= length) throw protocolError('DATA padding as long as the frame');
      end -= pad;
    }
    if (this.isIdle(id)) throw protocolError(`DATA on stream ${id}, which the client did not open`);
    this.inflow.receive(length);
    const s = this.streams.get(id);
    if (s === undefined) {
      // A stream we reset or gave up: its data is only counted.
      this.returnToConnection(length);
      return;
    }
    s.recvWindow -= length;
    if (s.recvWindow < 0 || s.answered || s.status === 0) {
      this.returnToConnection(length);
      if (s.recvWindow < 0)
        this.streamError(
          s,
          ErrorCode.FlowControlError,
          streamFailure(ErrorCode.FlowControlError, "DATA beyond the stream's flow-control window"),
        );
      else if (s.answered)
        this.streamError(
          s,
          ErrorCode.StreamClosed,
          streamFailure(ErrorCode.StreamClosed, 'DATA after the end of the answer'),
        );
      else
        this.streamError(
          s,
          ErrorCode.ProtocolError,
          streamFailure(ErrorCode.ProtocolError, 'DATA before the response headers'),
        );
      return;
    }
    // Only bytes of the body are progress: empty frames (or padding alone) would keep a stalled answer open
    // past its body timeout for as long as the server sends them.
    if (end > start) s.activeAt = performance.now();
    s.received += end - start;
    const endStream = (flags & Flag.EndStream) !== 0;
    if (end > start) {
      try {
        s.req.handler.onData(buf.subarray(start, end));
      } catch (err) {
        this.abortStream(s, err);
      }
      if (this.streams.get(id) !== s) {
        // The handler aborted it.
        this.returnToConnection(length);
        return;
      }
    }
    if (s.paused) s.held += length;
    else this.returnToConnection(length);
    if (endStream) {
      this.complete(s);
      return;
    }
    s.recvUnacked += length;
    if (!s.paused && windowUpdateDue(s.recvUnacked, this.options.streamWindow)) this.ackStream(s);
  }

  private ackStream(s: Stream): void {
    if (s.recvUnacked === 0) return;
    this.queue(windowUpdateFrame(s.id, s.recvUnacked));
    s.recvWindow += s.recvUnacked;
    s.recvUnacked = 0;
  }

  /** `n` bytes received on the connection are read (or never will be): the server may send that much more, once half the window is. */
  private returnToConnection(n: number): void {
    const increment = this.inflow.returned(n);
    if (increment > 0) this.queue(windowUpdateFrame(0, increment));
  }

  private onHeadersFrame(flags: number, id: number, buf: Buffer, start: number, end: number): void {
    if (id === 0) throw protocolError('HEADERS on stream 0');
    let pad = 0;
    if ((flags & Flag.Padded) !== 0) {
      if (end - start < 1) throw frameSizeError('a padded HEADERS frame without its pad length');
      pad = buf[start];
      start += 1;
    }
    if ((flags & Flag.Priority) !== 0) {
      if (end - start < 5) throw frameSizeError('HEADERS without room for its priority');
      start += 5;
    }
    if (pad > end - start) throw protocolError('HEADERS padding longer than the frame');
    end -= pad;
    if (this.isIdle(id)) throw protocolError(`HEADERS on stream ${id}, which the client did not open`);
    if ((flags & Flag.EndHeaders) !== 0) this.onHeaderBlock(id, flags, buf, start, end);
    else this.headerBlock.begin(id, flags, buf, start, end);
  }

  private onContinuation(flags: number, id: number, buf: Buffer, start: number, end: number): void {
    const blockFlags = this.headerBlock.flags;
    const whole = this.headerBlock.add(id, (flags & Flag.EndHeaders) !== 0, buf, start, end);
    if (whole === undefined) return;
    this.onHeaderBlock(id, blockFlags, whole, 0, whole.length);
    // The connection took no requests while the block was open.
    if (this.state === State.Ready) this.events.room(this);
  }

  private onHeaderBlock(id: number, flags: number, buf: Buffer, start: number, end: number): void {
    // Decoded whatever the stream's state: the table must follow every block.
    const fields = this.decoder.decode(buf, start, end, this.maxHeaderList);
    const s = this.streams.get(id);
    if (s === undefined) return;
    if (s.answered) {
      this.streamError(
        s,
        ErrorCode.StreamClosed,
        streamFailure(ErrorCode.StreamClosed, 'HEADERS after the end of the answer'),
      );
      return;
    }
    const endStream = (flags & Flag.EndStream) !== 0;
    const fault = this.decoder.malformed;
    if (s.status !== 0) {
      // Trailers.
      const trailerFault = fault ?? (endStream ? trailersFault(fields) : 'trailers without END_STREAM');
      if (trailerFault !== undefined) {
        this.malformed(s, trailerFault);
        return;
      }
      s.trailers = fields;
      this.complete(s);
      return;
    }
    if (fault !== undefined) {
      this.malformed(s, fault);
      return;
    }
    const head = this.head;
    const headFault = readAnswerHead(fields, head);
    if (headFault !== undefined) return this.malformed(s, headFault);
    const status = head.status;
    if (status < 200) {
      // 1xx: the real answer follows, on HEADERS that do not end the stream.
      if (endStream) this.malformed(s, `an interim answer (${status}) that ends the stream`);
      return;
    }
    // The answer's headers, not an interim one: repeated 1xx would keep it waiting past its headers timeout.
    s.activeAt = performance.now();
    s.status = status;
    s.contentLength = head.contentLength;
    try {
      s.req.handler.onHeaders(status, fields);
    } catch (err) {
      this.abortStream(s, err);
    }
    if (this.streams.get(id) !== s) return;
    if (endStream) this.complete(s);
  }

  /** A malformed answer (RFC 9113, 8.1.1): a stream error PROTOCOL_ERROR; the connection goes on. */
  private malformed(s: Stream, why: string): void {
    this.streamError(s, ErrorCode.ProtocolError, streamFailure(ErrorCode.ProtocolError, `malformed answer: ${why}`));
  }

  /** @internal `RequestControl.resume` of a stream. */
  resumeStream(s: Stream): void {
    if (!s.paused) return;
    s.paused = false;
    if (this.streams.get(s.id) === s) {
      this.returnToConnection(s.held);
      s.held = 0;
      this.ackStream(s);
      this.writer.schedule();
    }
  }

  private onRstStream(id: number, buf: Buffer, start: number, end: number): void {
    if (id === 0) throw protocolError('RST_STREAM on stream 0');
    if (end - start !== 4) throw frameSizeError(`RST_STREAM of ${end - start} bytes`);
    if (this.isIdle(id)) throw protocolError(`RST_STREAM on stream ${id}, which the client did not open`);
    const s = this.streams.get(id);
    if (s === undefined) return;
    const code = buf.readUInt32BE(start);
    this.forget(s);
    // An answered stream's handler has its whole answer: the server wants no more of the body (RFC 9113, 8.1).
    // REFUSED_STREAM says the request was not processed; after the answer's headers that is untrue (the handler
    // has begun to hear an answer, and sent again the request would have two): it fails, maybe applied.
    if (!s.answered) {
      if (code === ErrorCode.RefusedStream && s.status === 0)
        this.events.refused(s.req, refusedError('REFUSED_STREAM', code));
      else this.fail(s.req, resetError(code));
    }
    this.events.room(this);
  }

  private onSettings(flags: number, id: number, buf: Buffer, start: number, end: number): void {
    if (isSettingsAck(flags, id, end - start)) {
      this.settingsAcked = true;
      if (this.state !== State.Opening) clearTimeout(this.settingsTimer);
      return;
    }
    let grew = false;
    for (let at = start; at < end; at += 6) {
      const value = buf.readUInt32BE(at + 2);
      const effect = applySetting(this.peer, buf.readUInt16BE(at), value);
      if (effect === SettingEffect.None) continue;
      if ((effect & SettingEffect.TableSize) !== 0) this.requests.encoder.setMaxTableSize(value);
      if ((effect & SettingEffect.StreamWindows) !== 0) this.moveStreamWindows(value);
      grew ||= (effect & SettingEffect.Grew) !== 0;
    }
    this.queueAck(settingsFrame([], true));
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

  /** SETTINGS_INITIAL_WINDOW_SIZE changed to `value`: every open stream's send window moves with it (RFC 9113 6.9.2). */
  private moveStreamWindows(value: number): void {
    const delta = this.peer.windowDelta;
    for (const s of this.streams.values()) {
      s.sendWindow += delta;
      if (s.sendWindow > maxWindow)
        throw new ConnectionError(
          ErrorCode.FlowControlError,
          `SETTINGS_INITIAL_WINDOW_SIZE ${value} takes stream ${s.id}'s window above 2^31-1`,
        );
    }
  }

  private onPing(flags: number, id: number, buf: Buffer, start: number, end: number): void {
    if (id !== 0) throw protocolError('PING on a stream');
    if (end - start !== 8) throw frameSizeError(`PING of ${end - start} bytes`);
    if ((flags & Flag.Ack) !== 0) return;
    const pong = Buffer.allocUnsafe(frameHeaderLength + 8);
    writeFrameHeader(pong, 0, 8, FrameType.Ping, Flag.Ack, 0);
    buf.copy(pong, frameHeaderLength, start, end);
    this.queueAck(pong);
  }

  private onGoaway(id: number, buf: Buffer, start: number, end: number): void {
    const last = goawayLastStream(id, buf, start, end, this.goawayLast);
    const code = buf.readUInt32BE(start + 4);
    this.goawayLast = last;
    if (code !== ErrorCode.NoError)
      this.closeError = new H2Error(
        'H2_CONNECTION_CLOSED',
        `HTTP/2 connection closed by the server: GOAWAY ${errorName(code)}`,
        { h2Code: code, bytesRead: this.bytesRead },
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

  private onWindowUpdate(id: number, buf: Buffer, start: number, end: number): void {
    if (end - start !== 4) throw frameSizeError(`WINDOW_UPDATE of ${end - start} bytes`);
    const increment = buf.readUInt32BE(start) & 0x7fffffff;
    if (id === 0) {
      if (increment === 0) throw protocolError('WINDOW_UPDATE of 0 on the connection');
      this.requests.sendWindow += increment;
      if (this.requests.sendWindow > maxWindow)
        throw new ConnectionError(
          ErrorCode.FlowControlError,
          "WINDOW_UPDATE takes the connection's window above 2^31-1",
        );
    } else {
      if (this.isIdle(id)) throw protocolError(`WINDOW_UPDATE on stream ${id}, which the client did not open`);
      const s = this.streams.get(id);
      if (s === undefined) return;
      if (increment === 0) {
        this.streamError(s, ErrorCode.ProtocolError, streamFailure(ErrorCode.ProtocolError, 'WINDOW_UPDATE of 0'));
        return;
      }
      s.sendWindow += increment;
      if (s.sendWindow > maxWindow) {
        this.streamError(
          s,
          ErrorCode.FlowControlError,
          streamFailure(ErrorCode.FlowControlError, "WINDOW_UPDATE takes the stream's window above 2^31-1"),
        );
        return;
      }
    }
    this.requests.unblock();
  }

  /** PRIORITY says nothing this client acts on (RFC 9113, 5.3.2), but its shape is still checked. */
  private onPriority(id: number, start: number, end: number): void {
    if (id === 0) throw protocolError('PRIORITY on stream 0');
    if (end - start === 5) return;
    const s = this.streams.get(id);
    if (s !== undefined)
      this.streamError(
        s,
        ErrorCode.FrameSizeError,
        streamFailure(ErrorCode.FrameSizeError, `PRIORITY of ${end - start} bytes`),
      );
  }

  /** The answer is whole (END_STREAM seen). */
  private complete(s: Stream): void {
    if (s.contentLength !== -1 && s.received !== s.contentLength && !noBodyExpected(s)) {
      this.malformed(s, `${s.received} bytes of body for a content-length of ${s.contentLength}`);
      return;
    }
    if (s.bodyAt !== -1) {
      // Answered before the whole body was sent. The rest still goes (RFC 9113, 8.1): a server that wants no more
      // says so with RST_STREAM(NO_ERROR), and a reset of ours, one per such answer, is what servers' rapid-reset
      // defences count (nghttp2 answered a thousand with GOAWAY). The body is small and already ours to send.
      s.answered = true;
      s.activeAt = performance.now();
      this.finish(s);
      return;
    }
    this.forget(s);
    this.finish(s);
    this.events.room(this);
  }

  private finish(s: Stream): void {
    try {
      s.req.handler.onComplete();
    } catch (err) {
      // As undici's requests do: the handler's own failure is its request's error.
      this.fail(s.req, err);
    }
  }

  /** Takes the stream out of the connection; its request's fate is the caller's to tell. */
  private forget(s: Stream): void {
    this.streams.delete(s.id);
    // What it held unread no longer waits for more of its answer.
    if (s.held > 0) {
      this.returnToConnection(s.held);
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
      new H2Error(kind, `${what} (GOAWAY ${errorName(code)})`, { h2Code: code, bytesRead: this.bytesRead, cause }),
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
        if (this.headerBlock.open && this.headerBlock.streamId === s.id) {
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
      const step = liveness.check(performance.now(), this.bytesRead, this.streams.size > 0);
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
        { bytesRead: this.bytesRead },
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
    clearInterval(this.sweeper);
    clearInterval(this.livenessTimer);
    clearTimeout(this.settingsTimer);
    const failure = err ?? new H2Error('H2_DESTROYED', 'The client is destroyed');
    const open = [...this.streams.values()];
    this.streams.clear();
    this.requests.clear();
    this.headerBlock.clear();
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
    return new H2Error('H2_CONNECTION_CLOSED', 'other side closed', { bytesRead: this.bytesRead });
  }
}
