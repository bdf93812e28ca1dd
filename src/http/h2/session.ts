import type { Socket } from 'node:net';
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
import { HpackDecoder, HpackEncoder, HpackError, literalFieldSize, writeLiteralField } from './hpack.js';
import { H2Error, refusedError, resetError } from './errors.js';
import { OutBuffer } from './out-buffer.js';

/**
 * One HTTP/2 connection of the client (RFC 9113): the preface and settings, streams with their flow-control
 * windows, header compression, and the writes of one event-loop turn gathered into one. An I/O edge: the pool
 * (`pool.ts`) decides which requests come here; this class only carries them.
 *
 * Answers are handed to undici's legacy handler interface (onConnect, onHeaders, onData, onComplete, onError),
 * so anything written for undici's dispatchers (its `request()`, this project's `dispatchTo`) runs over it.
 */
export interface H2Handler {
  onConnect?(abort: (reason?: Error) => void): void;
  onHeaders?(status: number, rawHeaders: string[], resume: () => void, statusText: string): boolean | void;
  onData?(chunk: Buffer): boolean | void;
  onComplete?(trailers: string[]): void;
  onError?(err: Error): void;
}

/** A request as the pool hands it to a session. */
export interface H2Request {
  /**
   * `:method`, `:scheme` and `:authority` as pairs, then the headers (lower-case names); `:path` goes between.
   * The same arrays for the same kind of request let each connection encode them once.
   */
  pseudo: readonly string[];
  headers: readonly string[];
  path: string;
  body: Buffer | null;
  /** ms to wait for the answer's headers; 0: no bound. */
  headersTimeout: number;
  /** ms any gap in the answer's body may last; 0: no bound. */
  bodyTimeout: number;
  handler: H2Handler;
  /** How often the server refused it unprocessed and it was sent again. */
  refusals: number;
}

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

export interface SessionOptions {
  /** The receive window of each stream we advertise (SETTINGS_INITIAL_WINDOW_SIZE). */
  streamWindow: number;
  /** The receive window of the connection. */
  connectionWindow: number;
  /** At most this many streams at once on this connection, whatever the server allows. */
  maxStreams: number;
  /** ms from connecting to the server's first SETTINGS; past it, the server is taken not to speak HTTP/2. */
  settingsTimeoutMs: number;
  /**
   * ms a connection being closed waits for the server to take its last frames and close its side; then it is
   * destroyed. Default 1000 ({@link defaultCloseTimeoutMs}).
   */
  closeTimeoutMs?: number;
}

/**
 * How long a connection being closed waits for the server to take its last frames and close its side: the
 * GOAWAY and FIN are a courtesy once no stream needs the connection, and a server that has not read them in a
 * second is not reading.
 */
const defaultCloseTimeoutMs = 1000;

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

class Stream {
  /** Bytes of the request body still to send, from `bodyAt`; -1 once END_STREAM is sent. */
  bodyAt = 0;
  status = 0;
  /** Bytes received and not yet returned to the server as WINDOW_UPDATE. */
  recvUnacked = 0;
  /** The reader has all it takes for now (its handler's onData said false): the windows stay closed to it. */
  paused = false;
  /** Bytes it received while paused, not yet returned to the connection's window: they are still unread. */
  held = 0;
  /** When the request was sent, then when its answer last showed progress (performance.now()). */
  activeAt: number;
  trailers: string[] | undefined;
  constructor(
    readonly id: number,
    readonly req: H2Request,
    public sendWindow: number,
    now: number,
  ) {
    this.activeAt = now;
  }
}

export class H2Session {
  private state = State.Opening;
  private readonly streams = new Map<number, Stream>();
  private nextId = 1;
  /** Streams that wait for flow-control window to send the rest of their body, in order. */
  private blocked: Stream[] = [];
  private readonly encoder = new HpackEncoder();
  private readonly decoder = new HpackDecoder();
  private readonly reader: FrameReader;
  private readonly out = new OutBuffer();
  private flushScheduled = false;
  private readonly flushNow = (): void => this.flush();
  // What the server allows us.
  private peerMaxStreams = 100;
  private peerInitialWindow = defaultWindow;
  private peerMaxFrame = defaultMaxFrameSize;
  private sendWindow = defaultWindow;
  // What we allow the server.
  private connUnacked = 0;
  /** A header block being gathered from HEADERS and CONTINUATION frames. */
  private headerBlock: { streamId: number; flags: number; parts: Buffer[] } | undefined;
  private sweeper: NodeJS.Timeout | undefined;
  private sweepMs = 1000;
  private closeError: Error | undefined;
  private bytesRead = 0;
  private firstFrame = true;
  private wasReady = false;
  private settingsTimer: NodeJS.Timeout | undefined;
  private closeTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly socket: Socket,
    private readonly options: SessionOptions,
    private readonly events: SessionEvents,
    /** For TLS: the protocol ALPN must agree on before anything is sent. */
    tls = false,
  ) {
    this.reader = new FrameReader((type, flags, id, buf, start, end) => this.onFrame(type, flags, id, buf, start, end), defaultMaxFrameSize);
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      // A TLS server that speaks no HTTP/2 answers an offer of h2 alone with this alert (RFC 7301).
      if (err.code === 'ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL') this.destroy(new H2Error('H2_NOT_SUPPORTED', 'the server agreed on no protocol when offered h2 (ALPN)', { bytesRead: 0, cause: err }));
      else this.destroy(err);
    });
    socket.on('close', () => {
      clearTimeout(this.closeTimer);
      this.destroy(this.closeError ?? this.socketClosedError());
    });
    if (tls) {
      (socket as TLSSocket).once('secureConnect', () => {
        const alpn = (socket as TLSSocket).alpnProtocol;
        if (alpn !== 'h2') this.destroy(new H2Error('H2_NOT_SUPPORTED', `the server chose ${alpn === false || alpn === undefined ? 'no protocol' : alpn} instead of h2 (ALPN)`, { bytesRead: 0 }));
        else {
          this.start();
          this.awaitSettings();
        }
      });
    } else {
      this.start();
      socket.once('connect', () => this.awaitSettings());
    }
  }

  /** A server that accepts the connection and never answers the preface with SETTINGS does not speak HTTP/2. */
  private awaitSettings(): void {
    if (this.state !== State.Opening) return;
    this.settingsTimer = setTimeout(() => {
      const seconds = Math.round(this.options.settingsTimeoutMs / 100) / 10;
      this.destroy(new H2Error('H2_NOT_SUPPORTED', `the server does not speak HTTP/2: no SETTINGS within ${seconds} s of the HTTP/2 preface`, { bytesRead: this.bytesRead }));
    }, this.options.settingsTimeoutMs);
  }

  /** Streams open now. */
  get active(): number {
    return this.streams.size;
  }

  /** How many more streams this connection takes now (0 unless ready). */
  get room(): number {
    if (this.state !== State.Ready) return 0;
    return Math.min(this.peerMaxStreams, this.options.maxStreams) - this.streams.size;
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
    return this.peerMaxStreams;
  }

  private start(): void {
    const settings = settingsFrame([
      [Setting.EnablePush, 0],
      [Setting.InitialWindowSize, this.options.streamWindow],
    ]);
    const grow = this.options.connectionWindow - defaultWindow;
    this.socket.write(grow > 0 ? Buffer.concat([preface, settings, windowUpdateFrame(0, grow)]) : Buffer.concat([preface, settings]));
  }

  /** Sends `req` on a new stream. The pool calls it only while `room > 0`. */
  request(req: H2Request): void {
    const id = this.nextId;
    this.nextId += 2;
    const now = performance.now();
    const s = new Stream(id, req, this.peerInitialWindow, now);
    if (this.streams.size === 0) this.socket.ref();
    this.streams.set(id, s);
    if (id >= lastUsableStreamId) this.drain();
    if (req.headersTimeout > 0) this.watch(req.headersTimeout);
    if (req.bodyTimeout > 0) this.watch(req.bodyTimeout);
    req.handler.onConnect?.((reason) => this.abort(s, reason));
    if (this.streams.get(id) !== s) return; // Aborted in onConnect.
    this.writeHeaders(s);
    if (req.body !== null && req.body.length > 0) this.sendBody(s);
    else s.bodyAt = -1;
  }

  private writeHeaders(s: Stream): void {
    const req = s.req;
    const pseudo = this.encoder.fixed(req.pseudo);
    const headers = this.encoder.fixed(req.headers);
    const body = req.body;
    const length = body === null ? '' : String(body.length);
    let size = pseudo.length + headers.length + literalFieldSize(':path', req.path);
    if (body !== null) size += literalFieldSize('content-length', length);
    // The DATA frame of a small body goes in the same reservation.
    const bodyLength = body?.length ?? 0;
    const inline = bodyLength > 0 && this.canSendWhole(s, bodyLength);
    const out = this.out.reserve(frameHeaderLength + size + (inline ? frameHeaderLength + bodyLength : 0));
    const start = this.out.used;
    let at = start + frameHeaderLength;
    at += pseudo.copy(out, at);
    at = writeLiteralField(out, at, ':path', req.path);
    at += headers.copy(out, at);
    if (body !== null) at = writeLiteralField(out, at, 'content-length', length);
    const blockLength = at - start - frameHeaderLength;
    const endStream = bodyLength === 0 ? Flag.EndStream : 0;
    if (blockLength > this.peerMaxFrame) {
      // Too long for one frame: HEADERS and CONTINUATION frames, from a copy of the block.
      const block = Buffer.from(out.subarray(start + frameHeaderLength, at));
      this.out.commit(start);
      this.writeLongHeaders(s.id, block, endStream);
    } else {
      writeFrameHeader(out, start, blockLength, FrameType.Headers, Flag.EndHeaders | endStream, s.id);
      if (inline) {
        writeFrameHeader(out, at, bodyLength, FrameType.Data, Flag.EndStream, s.id);
        body!.copy(out, at + frameHeaderLength);
        at += frameHeaderLength + bodyLength;
        this.sendWindow -= bodyLength;
        s.sendWindow -= bodyLength;
        s.bodyAt = -1;
      }
      this.out.commit(at);
    }
    this.scheduleFlush();
  }

  private writeLongHeaders(id: number, block: Buffer, endStream: number): void {
    for (let at = 0; at < block.length; ) {
      const n = Math.min(this.peerMaxFrame, block.length - at);
      const last = at + n === block.length;
      const type = at === 0 ? FrameType.Headers : FrameType.Continuation;
      const flags = (last ? Flag.EndHeaders : 0) | (at === 0 ? endStream : 0);
      const out = this.out.reserve(frameHeaderLength + n);
      const start = this.out.used;
      writeFrameHeader(out, start, n, type, flags, id);
      block.copy(out, start + frameHeaderLength, at, at + n);
      this.out.commit(start + frameHeaderLength + n);
      at += n;
    }
  }

  private canSendWhole(s: Stream, n: number): boolean {
    return n <= this.peerMaxFrame && n <= this.sendWindow && n <= s.sendWindow;
  }

  /** Sends as much of the stream's body as the windows allow; the rest waits in `blocked`. */
  private sendBody(s: Stream): boolean {
    const body = s.req.body!;
    while (s.bodyAt >= 0) {
      const left = body.length - s.bodyAt;
      const n = Math.min(left, this.peerMaxFrame, this.sendWindow, s.sendWindow);
      if (n <= 0 && left > 0) {
        if (!this.blocked.includes(s)) this.blocked.push(s);
        // What was written before the window closed must still leave.
        this.scheduleFlush();
        return false;
      }
      const last = n === left;
      const out = this.out.reserve(frameHeaderLength + n);
      const start = this.out.used;
      writeFrameHeader(out, start, n, FrameType.Data, last ? Flag.EndStream : 0, s.id);
      body.copy(out, start + frameHeaderLength, s.bodyAt, s.bodyAt + n);
      this.out.commit(start + frameHeaderLength + n);
      this.sendWindow -= n;
      s.sendWindow -= n;
      s.bodyAt = last ? -1 : s.bodyAt + n;
    }
    this.scheduleFlush();
    return true;
  }

  private unblock(): void {
    if (this.blocked.length === 0) return;
    const waiting = this.blocked;
    this.blocked = [];
    for (let i = 0; i < waiting.length; i++) {
      const s = waiting[i];
      if (this.streams.get(s.id) !== s) continue;
      if (!this.sendBody(s)) {
        // Still blocked: it and everything after it wait, in order.
        for (let j = i + 1; j < waiting.length; j++) if (!this.blocked.includes(waiting[j])) this.blocked.push(waiting[j]);
        return;
      }
    }
  }

  private queue(frame: Buffer): void {
    const out = this.out.reserve(frame.length);
    frame.copy(out, this.out.used);
    this.out.commit(this.out.used + frame.length);
    this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(this.flushNow);
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.state === State.Closed) return;
    const parts = this.out.take();
    if (parts.length === 1) this.socket.write(parts[0]);
    else if (parts.length > 1) {
      this.socket.cork();
      for (const part of parts) this.socket.write(part);
      this.socket.uncork();
    }
  }

  private onData(chunk: Buffer): void {
    // A connection being closed reads on only so that the server's last frames do not reset it.
    if (this.state === State.Closed) return;
    if (this.firstFrame && this.bytesRead === 0 && chunk.length >= 5 && chunk.toString('latin1', 0, 5) === 'HTTP/') {
      this.bytesRead += chunk.length;
      this.destroy(new H2Error('H2_NOT_SUPPORTED', `the server does not speak HTTP/2: it answered the HTTP/2 preface with '${chunk.toString('latin1', 0, Math.min(chunk.length, 40)).split('\r')[0]}'`, { bytesRead: this.bytesRead }));
      return;
    }
    this.bytesRead += chunk.length;
    try {
      this.reader.push(chunk);
    } catch (err) {
      if (this.firstFrame) this.destroy(new H2Error('H2_NOT_SUPPORTED', 'the server does not speak HTTP/2: its answer to the HTTP/2 preface is not an HTTP/2 frame', { bytesRead: this.bytesRead }));
      else if (err instanceof FrameSizeError) this.connectionError(ErrorCode.FrameSizeError, err.message);
      else if (err instanceof HpackError) this.connectionError(ErrorCode.CompressionError, `header compression: ${err.message}`);
      else if (err instanceof ProtocolError) this.connectionError(ErrorCode.ProtocolError, err.message);
      else throw err;
    }
  }

  private onFrame(type: number, flags: number, id: number, buf: Buffer, start: number, end: number): void {
    if (this.firstFrame) {
      this.firstFrame = false;
      if (type !== FrameType.Settings || (flags & Flag.Ack) !== 0) {
        this.destroy(new H2Error('H2_NOT_SUPPORTED', 'the server does not speak HTTP/2: its answer to the HTTP/2 preface is not SETTINGS', { bytesRead: this.bytesRead }));
        return;
      }
    }
    if (this.headerBlock !== undefined && type !== FrameType.Continuation) throw new ProtocolError('a header block interrupted by another frame');
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
        if (id !== 0 || end - start !== 8) throw new ProtocolError('malformed PING');
        if ((flags & Flag.Ack) === 0) {
          const pong = Buffer.allocUnsafe(frameHeaderLength + 8);
          writeFrameHeader(pong, 0, 8, FrameType.Ping, Flag.Ack, 0);
          buf.copy(pong, frameHeaderLength, start, end);
          this.queue(pong);
        }
        return;
      case FrameType.Goaway:
        this.onGoaway(buf, start, end);
        return;
      case FrameType.WindowUpdate:
        this.onWindowUpdate(id, buf, start, end);
        return;
      case FrameType.PushPromise:
        throw new ProtocolError('PUSH_PROMISE although push is disabled');
      default:
        // PRIORITY and unknown frame types are ignored (RFC 9113, 4.1, 5.3.2).
        return;
    }
  }

  /**
   * The connection's window is returned as the bytes are read, not as they arrive: a stream whose reader is paused
   * holds its share until it resumes, so the connection's window bounds what all the streams together hold unread
   * (and each stream's window may be large enough for a long round trip without multiplying that bound).
   */
  private onDataFrame(flags: number, id: number, buf: Buffer, start: number, end: number): void {
    if (id === 0) throw new ProtocolError('DATA on stream 0');
    const length = end - start;
    if ((flags & Flag.Padded) !== 0) {
      const pad = buf[start];
      start += 1;
      end -= pad;
      if (end < start) throw new ProtocolError('padding longer than the frame');
    }
    const s = this.streams.get(id);
    if (s === undefined) {
      // A stream we reset or gave up: its data is only counted.
      this.returnToConnection(length);
      return;
    }
    if (s.status === 0) {
      this.returnToConnection(length);
      this.streamError(s, ErrorCode.ProtocolError, new H2Error('H2_PROTOCOL_ERROR', 'HTTP/2 DATA before the response headers'));
      return;
    }
    s.activeAt = performance.now();
    const endStream = (flags & Flag.EndStream) !== 0;
    if (end > start) {
      const more = s.req.handler.onData?.(buf.subarray(start, end));
      if (this.streams.get(id) !== s) {
        // The handler aborted it.
        this.returnToConnection(length);
        return;
      }
      if (more === false) s.paused = true;
    }
    if (s.paused) s.held += length;
    else this.returnToConnection(length);
    if (endStream) {
      this.complete(s);
      return;
    }
    s.recvUnacked += length;
    if (!s.paused && s.recvUnacked >= this.options.streamWindow / 2) this.ackStream(s);
  }

  private ackStream(s: Stream): void {
    if (s.recvUnacked === 0) return;
    this.queue(windowUpdateFrame(s.id, s.recvUnacked));
    s.recvUnacked = 0;
  }

  /** `n` bytes received on the connection are read (or never will be): the server may send that much more, once half the window is. */
  private returnToConnection(n: number): void {
    this.connUnacked += n;
    if (this.connUnacked >= this.options.connectionWindow / 2) {
      this.queue(windowUpdateFrame(0, this.connUnacked));
      this.connUnacked = 0;
    }
  }

  private onHeadersFrame(flags: number, id: number, buf: Buffer, start: number, end: number): void {
    if (id === 0) throw new ProtocolError('HEADERS on stream 0');
    if ((flags & Flag.Padded) !== 0) {
      const pad = buf[start];
      start += 1;
      end -= pad;
    }
    if ((flags & Flag.Priority) !== 0) start += 5;
    if (end < start) throw new ProtocolError('malformed HEADERS');
    if ((flags & Flag.EndHeaders) !== 0) this.onHeaderBlock(id, flags, buf, start, end);
    else this.headerBlock = { streamId: id, flags, parts: [Buffer.from(buf.subarray(start, end))] };
  }

  private onContinuation(flags: number, id: number, buf: Buffer, start: number, end: number): void {
    const block = this.headerBlock;
    if (block === undefined || block.streamId !== id) throw new ProtocolError('CONTINUATION without HEADERS');
    block.parts.push(Buffer.from(buf.subarray(start, end)));
    if ((flags & Flag.EndHeaders) === 0) return;
    this.headerBlock = undefined;
    const whole = Buffer.concat(block.parts);
    this.onHeaderBlock(id, block.flags, whole, 0, whole.length);
  }

  private onHeaderBlock(id: number, flags: number, buf: Buffer, start: number, end: number): void {
    // Decoded whatever the stream's state: the table must follow every block.
    const fields = this.decoder.decode(buf, start, end);
    const s = this.streams.get(id);
    if (s === undefined) return;
    s.activeAt = performance.now();
    const endStream = (flags & Flag.EndStream) !== 0;
    if (s.status !== 0) {
      // Trailers.
      if (!endStream) {
        this.streamError(s, ErrorCode.ProtocolError, new H2Error('H2_PROTOCOL_ERROR', 'HTTP/2 trailers without END_STREAM'));
        return;
      }
      s.trailers = fields;
      this.complete(s);
      return;
    }
    let status = 0;
    const raw: string[] = [];
    for (let i = 0; i < fields.length; i += 2) {
      const name = fields[i];
      if (name === ':status') status = Number(fields[i + 1]);
      else if (name.charCodeAt(0) !== 0x3a) raw.push(name, fields[i + 1]);
    }
    if (!(status >= 100 && status <= 999)) {
      this.streamError(s, ErrorCode.ProtocolError, new H2Error('H2_PROTOCOL_ERROR', 'HTTP/2 response without a valid :status'));
      return;
    }
    if (status < 200) return; // 1xx: the real answer follows.
    s.status = status;
    const more = s.req.handler.onHeaders?.(status, raw, () => this.resume(s), '');
    if (this.streams.get(id) !== s) return;
    if (more === false) s.paused = true;
    if (endStream) this.complete(s);
  }

  private resume(s: Stream): void {
    if (!s.paused) return;
    s.paused = false;
    if (this.streams.get(s.id) === s) {
      this.returnToConnection(s.held);
      s.held = 0;
      this.ackStream(s);
      this.scheduleFlush();
    }
  }

  private onRstStream(id: number, buf: Buffer, start: number, end: number): void {
    if (id === 0 || end - start !== 4) throw new ProtocolError('malformed RST_STREAM');
    const s = this.streams.get(id);
    if (s === undefined) return;
    const code = buf.readUInt32BE(start);
    this.forget(s);
    if (code === ErrorCode.RefusedStream) this.events.refused(s.req, refusedError('REFUSED_STREAM', code));
    else if (code === ErrorCode.NoError && s.status !== 0 && s.bodyAt === -1) {
      // The server has answered and needs no more of the body (RFC 9113, 8.1): the answer is complete as given.
      this.finish(s);
    } else fail(s.req, resetError(code));
    this.events.room(this);
  }

  private onSettings(flags: number, id: number, buf: Buffer, start: number, end: number): void {
    if (id !== 0) throw new ProtocolError('SETTINGS on a stream');
    if ((flags & Flag.Ack) !== 0) return;
    if ((end - start) % 6 !== 0) throw new ProtocolError('malformed SETTINGS');
    let grew = false;
    for (let at = start; at < end; at += 6) {
      const key = buf.readUInt16BE(at);
      const value = buf.readUInt32BE(at + 2);
      switch (key) {
        case Setting.HeaderTableSize:
          this.encoder.setMaxTableSize(value);
          break;
        case Setting.MaxConcurrentStreams:
          grew ||= value > this.peerMaxStreams;
          this.peerMaxStreams = value;
          break;
        case Setting.InitialWindowSize: {
          if (value > maxWindow) throw new ProtocolError('SETTINGS_INITIAL_WINDOW_SIZE above 2^31-1');
          const delta = value - this.peerInitialWindow;
          this.peerInitialWindow = value;
          for (const s of this.streams.values()) s.sendWindow += delta;
          grew ||= delta > 0;
          break;
        }
        case Setting.MaxFrameSize:
          if (value < defaultMaxFrameSize || value > 16_777_215) throw new ProtocolError('SETTINGS_MAX_FRAME_SIZE out of range');
          this.peerMaxFrame = value;
          break;
        default:
          break;
      }
    }
    this.queue(settingsFrame([], true));
    if (this.state === State.Opening) {
      clearTimeout(this.settingsTimer);
      this.state = State.Ready;
      this.wasReady = true;
      this.socket.unref();
      this.events.ready(this);
    } else if (grew) {
      this.unblock();
      this.events.room(this);
    }
  }

  private onGoaway(buf: Buffer, start: number, end: number): void {
    if (end - start < 8) throw new ProtocolError('malformed GOAWAY');
    const last = buf.readUInt32BE(start) & 0x7fffffff;
    const code = buf.readUInt32BE(start + 4);
    if (code !== ErrorCode.NoError) this.closeError = new H2Error('UND_ERR_SOCKET', `HTTP/2 connection closed by the server: GOAWAY ${errorName(code)}`, { h2Code: code, bytesRead: this.bytesRead });
    if (this.state === State.Opening || this.state === State.Ready) this.state = State.Draining;
    // Streams above the last one the server processed were never seen by it: they go again elsewhere.
    for (const s of [...this.streams.values()]) {
      if (s.id > last) {
        this.forget(s);
        this.events.refused(s.req, refusedError(`GOAWAY ${errorName(code)}`, code));
      }
    }
    this.closeIfDone();
  }

  private onWindowUpdate(id: number, buf: Buffer, start: number, end: number): void {
    if (end - start !== 4) throw new ProtocolError('malformed WINDOW_UPDATE');
    const increment = buf.readUInt32BE(start) & 0x7fffffff;
    if (id === 0) {
      if (increment === 0) throw new ProtocolError('WINDOW_UPDATE of 0');
      this.sendWindow += increment;
      if (this.sendWindow > maxWindow) {
        this.connectionError(ErrorCode.FlowControlError, 'connection window above 2^31-1');
        return;
      }
    } else {
      const s = this.streams.get(id);
      if (s === undefined) return;
      if (increment === 0) {
        this.streamError(s, ErrorCode.ProtocolError, new H2Error('H2_PROTOCOL_ERROR', 'HTTP/2 WINDOW_UPDATE of 0'));
        return;
      }
      s.sendWindow += increment;
    }
    this.unblock();
  }

  /** The answer is whole. */
  private complete(s: Stream): void {
    this.forget(s);
    if (s.bodyAt !== -1) {
      // Answered before the whole body was sent: tell the server no more comes (RFC 9113, 8.1).
      this.queue(rstStreamFrame(s.id, ErrorCode.NoError));
    }
    this.finish(s);
    this.events.room(this);
  }

  private finish(s: Stream): void {
    s.req.handler.onComplete?.(s.trailers ?? []);
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

  private abort(s: Stream, reason: Error | undefined): void {
    if (this.streams.get(s.id) !== s) return;
    this.forget(s);
    this.queue(rstStreamFrame(s.id, ErrorCode.Cancel));
    fail(s.req, reason ?? new H2Error('UND_ERR_ABORTED', 'Request aborted'));
    this.events.room(this);
  }

  private streamError(s: Stream, code: ErrorCode, err: H2Error): void {
    this.forget(s);
    this.queue(rstStreamFrame(s.id, code));
    fail(s.req, err);
    this.events.room(this);
  }

  /** A protocol violation by the server: GOAWAY, close, fail every stream. */
  private connectionError(code: ErrorCode, message: string): void {
    if (this.state === State.Closed) return;
    const lastSeen = this.nextId - 2 > 0 ? this.nextId - 2 : 0;
    // What was queued is moot.
    this.out.take();
    this.endSocket(goawayFrame(lastSeen, code));
    this.close(new H2Error(code === ErrorCode.ProtocolError ? 'H2_PROTOCOL_ERROR' : 'UND_ERR_SOCKET', `HTTP/2 protocol error by the server: ${message}`, { h2Code: code, bytesRead: this.bytesRead }));
  }

  private watch(timeoutMs: number): void {
    const every = Math.max(10, Math.min(1000, timeoutMs / 4));
    if (this.sweeper !== undefined && every >= this.sweepMs) return;
    clearInterval(this.sweeper);
    this.sweepMs = every;
    this.sweeper = setInterval(() => this.sweep(), every);
    this.sweeper.unref();
  }

  /** Fails the streams whose answer is overdue (headers) or stalled (body). */
  private sweep(): void {
    const now = performance.now();
    for (const s of [...this.streams.values()]) {
      const waiting = s.status === 0;
      const limit = waiting ? s.req.headersTimeout : s.req.bodyTimeout;
      if (limit > 0 && now - s.activeAt > limit) {
        this.streamError(
          s,
          ErrorCode.Cancel,
          waiting ? new H2Error('UND_ERR_HEADERS_TIMEOUT', 'Headers Timeout Error') : new H2Error('UND_ERR_BODY_TIMEOUT', 'Body Timeout Error'),
        );
      }
    }
  }

  /** Takes no new streams; closes once the open ones are done. */
  drain(): void {
    if (this.state === State.Opening || this.state === State.Ready) this.state = State.Draining;
    this.closeIfDone();
  }

  private closeIfDone(): void {
    if (this.state !== State.Draining || this.streams.size > 0) return;
    // What is queued goes before the GOAWAY: it is the last of it.
    for (const part of this.out.take()) this.socket.write(part);
    this.endSocket(goawayFrame(0, ErrorCode.NoError));
    this.close(undefined);
  }

  /** Closes the connection now; open streams fail with `err` (or as destroyed). */
  destroy(err: Error | undefined): void {
    if (this.state === State.Closed) return;
    if (err !== undefined) this.socket.destroy();
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

  /** The session is over: no more streams, every open one failed, the pool told. */
  private close(err: Error | undefined): void {
    if (this.state === State.Closed) return;
    this.state = State.Closed;
    clearInterval(this.sweeper);
    clearTimeout(this.settingsTimer);
    const failure = err ?? new H2Error('UND_ERR_DESTROYED', 'The client is destroyed');
    const open = [...this.streams.values()];
    this.streams.clear();
    this.blocked = [];
    for (const s of open) fail(s.req, failure);
    this.events.closed(this, err);
  }

  private socketClosedError(): H2Error {
    return new H2Error('UND_ERR_SOCKET', 'other side closed', { bytesRead: this.bytesRead });
  }
}

class ProtocolError extends Error {}

function fail(req: H2Request, err: Error): void {
  req.handler.onError?.(err);
}
