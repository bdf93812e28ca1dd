import {
  ErrorCode,
  Flag,
  FrameReader,
  FrameSizeError,
  FrameType,
  defaultMaxFrameSize,
  defaultWindow,
  frameHeaderLength,
  maxWindow,
  settingsFrame,
  windowUpdateFrame,
  writeFrameHeader,
} from './frame.js';
import { HeaderListTooLarge, HpackDecoder, HpackError } from './hpack.js';
import {
  ConnectionError,
  type H2Error,
  frameSizeError,
  protocolError,
  refusedError,
  resetError,
  streamFailure,
} from './errors.js';
import { type AnswerHead, readAnswerHead, trailersFault } from './fields.js';
import { type H2Request, type Stream, noBodyExpected } from './stream.js';
import { maxOutstandingAcks } from './flood-guard.js';
import type { FrameWriter } from './frame-writer.js';
import { HeaderBlock } from './header-block.js';
import type { RequestWriter } from './request-writer.js';
import { type PeerSettings, SettingEffect, applySetting, isSettingsAck } from './settings.js';
import { ConnectionInflow, windowUpdateDue } from './flow-control.js';

/** What the receiver asks of its connection. */
export interface ReceiverOwner {
  /** The id the connection's next stream will have: streams from it on are idle. */
  nextId(): number;
  /** The server's first bytes are not HTTP/2: the connection is closed (H2_NOT_SUPPORTED). */
  notHttp2(message: string): void;
  /** A connection error (RFC 9113, 5.4.1): GOAWAY, the connection closed, every stream failed. */
  connectionError(code: ErrorCode, message: string, kind?: string, cause?: unknown): void;
  /** The server acknowledged our SETTINGS. */
  settingsAcked(): void;
  /** The server's SETTINGS are applied (and acknowledged); `grew`: they allow more than before. */
  settingsApplied(grew: boolean): void;
  /** The server's GOAWAY. */
  goaway(id: number, buf: Buffer, start: number, end: number): void;
  /** A header block over CONTINUATION frames ended: the connection may take requests again. */
  headerBlockEnded(): void;
  /** Takes the stream out of the connection; its request's fate is the caller's to tell. */
  forget(s: Stream): void;
  /** Tells a request it failed. */
  fail(req: H2Request, err: unknown): void;
  /** The server did not process `req`: it may go again on another connection. */
  refused(req: H2Request, err: H2Error): void;
  /** Resets the stream with `code`, its request failed with `err` unless its answer was whole. */
  streamError(s: Stream, code: ErrorCode, err: H2Error): void;
  /** Ends a stream from this side (its handler's exception). */
  abortStream(s: Stream, reason: unknown): void;
  /** A stream ended: there may be room for another request. */
  room(): void;
}

/**
 * The receiving half of a connection (as x/net/http2's clientConnReadLoop): the server's bytes cut into frames,
 * each frame checked and handed to its stream (answers to their handlers, the receive windows returned as the
 * bytes are read) or to the connection (SETTINGS, GOAWAY, PING, WINDOW_UPDATE). Whatever breaks the protocol
 * is thrown inside `read` and ends as a connection error there; the connection's state stays the owner's.
 */
export class Receiver {
  /** Bytes read from the socket. */
  bytesRead = 0;
  /** The connection is closed: what the server still sends is read and dropped. */
  closed = false;
  /** A header block being gathered from HEADERS and CONTINUATION frames. */
  readonly headerBlock: HeaderBlock;
  private firstFrame = true;
  /** The chunk being read is the socket's read buffer (see `read`). */
  private shared = false;
  private readonly reader: FrameReader;
  private readonly decoder = new HpackDecoder();
  /** What `readAnswerHead` found in the last answer's header block (one object for the connection's life). */
  private readonly head: AnswerHead = { status: -1, contentLength: -1 };
  /** What we allow the server on the connection. */
  private readonly inflow: ConnectionInflow;

  constructor(
    private readonly writer: FrameWriter,
    private readonly peer: PeerSettings,
    private readonly requests: RequestWriter,
    private readonly streams: ReadonlyMap<number, Stream>,
    private readonly maxHeaderList: number,
    connectionWindow: number,
    private readonly streamWindow: number,
    private readonly owner: ReceiverOwner,
  ) {
    this.headerBlock = new HeaderBlock(maxHeaderList);
    this.inflow = new ConnectionInflow(connectionWindow, Math.max(connectionWindow, defaultWindow));
    this.reader = new FrameReader(
      (type, flags, id, buf, start, end) => this.onFrame(type, flags, id, buf, start, end),
      defaultMaxFrameSize,
    );
  }

  /**
   * A chunk from the socket; `shared`: its bytes are the socket's read buffer, written over by the next read, so
   * what outlives the call (an answer's body, a frame's first part) is copied.
   */
  read(chunk: Buffer, shared = false): void {
    this.shared = shared;
    // A connection being closed reads on only so that the server's last frames do not reset it.
    if (this.closed) return;
    if (this.firstFrame && this.bytesRead === 0 && chunk.length >= 5 && chunk.toString('latin1', 0, 5) === 'HTTP/') {
      this.bytesRead += chunk.length;
      this.owner.notHttp2(
        `the server does not speak HTTP/2: it answered the HTTP/2 preface with '${chunk.toString('latin1', 0, Math.min(chunk.length, 40)).split('\r')[0]}'`,
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
    if (this.closed) return;
    const owner = this.owner;
    if (this.firstFrame)
      owner.notHttp2('the server does not speak HTTP/2: its answer to the HTTP/2 preface is not an HTTP/2 frame');
    else if (err instanceof ConnectionError) owner.connectionError(err.h2Code, err.message, err.kind);
    else if (err instanceof FrameSizeError) owner.connectionError(ErrorCode.FrameSizeError, err.message);
    else if (err instanceof HeaderListTooLarge)
      owner.connectionError(ErrorCode.EnhanceYourCalm, `the server sent ${err.message}`, 'H2_HEADERS_TOO_LARGE');
    else if (err instanceof HpackError)
      owner.connectionError(ErrorCode.CompressionError, `header compression: ${err.message}`);
    else
      owner.connectionError(
        ErrorCode.InternalError,
        `internal error: ${err instanceof Error ? err.message : String(err)}`,
        'H2_CONNECTION_CLOSED',
        err,
      );
  }

  private onFrame(type: number, flags: number, id: number, buf: Buffer, start: number, end: number): void {
    if (this.closed) return;
    if (this.firstFrame) {
      this.firstFrame = false;
      if (type !== FrameType.Settings || (flags & Flag.Ack) !== 0) {
        this.owner.notHttp2('the server does not speak HTTP/2: its answer to the HTTP/2 preface is not SETTINGS');
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
        this.owner.goaway(id, buf, start, end);
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
    return (id & 1) === 0 || id >= this.owner.nextId();
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
        this.owner.streamError(
          s,
          ErrorCode.FlowControlError,
          streamFailure(ErrorCode.FlowControlError, "DATA beyond the stream's flow-control window"),
        );
      else if (s.answered)
        this.owner.streamError(
          s,
          ErrorCode.StreamClosed,
          streamFailure(ErrorCode.StreamClosed, 'DATA after the end of the answer'),
        );
      else
        this.owner.streamError(
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
        s.req.handler.onData(this.shared ? copyOf(buf, start, end) : buf.subarray(start, end));
      } catch (err) {
        this.owner.abortStream(s, err);
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
    if (!s.paused && windowUpdateDue(s.recvUnacked, this.streamWindow)) this.ackStream(s);
  }

  private ackStream(s: Stream): void {
    if (s.recvUnacked === 0) return;
    this.writer.queue(windowUpdateFrame(s.id, s.recvUnacked));
    s.recvWindow += s.recvUnacked;
    s.recvUnacked = 0;
  }

  /** `n` bytes received on the connection are read (or never will be): the server may send that much more, once half the window is. */
  returnToConnection(n: number): void {
    const increment = this.inflow.returned(n);
    if (increment > 0) this.writer.queue(windowUpdateFrame(0, increment));
  }

  /** A paused stream's reader resumed: what it held goes back to the windows. */
  resume(s: Stream): void {
    if (!s.paused) return;
    s.paused = false;
    if (this.streams.get(s.id) === s) {
      this.returnToConnection(s.held);
      s.held = 0;
      this.ackStream(s);
      this.writer.schedule();
    }
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
    this.owner.headerBlockEnded();
  }

  private onHeaderBlock(id: number, flags: number, buf: Buffer, start: number, end: number): void {
    // Decoded whatever the stream's state: the table must follow every block.
    const fields = this.decoder.decode(buf, start, end, this.maxHeaderList);
    const s = this.streams.get(id);
    if (s === undefined) return;
    if (s.answered) {
      this.owner.streamError(
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
      this.owner.abortStream(s, err);
    }
    if (this.streams.get(id) !== s) return;
    if (endStream) this.complete(s);
  }

  /** A malformed answer (RFC 9113, 8.1.1): a stream error PROTOCOL_ERROR; the connection goes on. */
  private malformed(s: Stream, why: string): void {
    this.owner.streamError(
      s,
      ErrorCode.ProtocolError,
      streamFailure(ErrorCode.ProtocolError, `malformed answer: ${why}`),
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
    this.owner.forget(s);
    this.finish(s);
    this.owner.room();
  }

  private finish(s: Stream): void {
    try {
      s.req.handler.onComplete();
    } catch (err) {
      // As undici's requests do: the handler's own failure is its request's error.
      this.owner.fail(s.req, err);
    }
  }

  private onRstStream(id: number, buf: Buffer, start: number, end: number): void {
    if (id === 0) throw protocolError('RST_STREAM on stream 0');
    if (end - start !== 4) throw frameSizeError(`RST_STREAM of ${end - start} bytes`);
    if (this.isIdle(id)) throw protocolError(`RST_STREAM on stream ${id}, which the client did not open`);
    const s = this.streams.get(id);
    if (s === undefined) return;
    const code = buf.readUInt32BE(start);
    this.owner.forget(s);
    // An answered stream's handler has its whole answer: the server wants no more of the body (RFC 9113, 8.1).
    // REFUSED_STREAM says the request was not processed; after the answer's headers that is untrue (the handler
    // has begun to hear an answer, and sent again the request would have two): it fails, maybe applied.
    if (!s.answered) {
      if (code === ErrorCode.RefusedStream && s.status === 0)
        this.owner.refused(s.req, refusedError('REFUSED_STREAM', code));
      else this.owner.fail(s.req, resetError(code));
    }
    this.owner.room();
  }

  private onSettings(flags: number, id: number, buf: Buffer, start: number, end: number): void {
    if (isSettingsAck(flags, id, end - start)) {
      this.owner.settingsAcked();
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
    this.owner.settingsApplied(grew);
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

  /** Queues an acknowledgement the server asked for (PING, SETTINGS); too many unread ones are a flood. */
  private queueAck(frame: Buffer): void {
    if (!this.writer.queueAck(frame))
      throw new ConnectionError(
        ErrorCode.EnhanceYourCalm,
        `the server sent more than ${maxOutstandingAcks} PING and SETTINGS frames without reading the answers`,
        'H2_FLOOD',
      );
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
        this.owner.streamError(
          s,
          ErrorCode.ProtocolError,
          streamFailure(ErrorCode.ProtocolError, 'WINDOW_UPDATE of 0'),
        );
        return;
      }
      s.sendWindow += increment;
      if (s.sendWindow > maxWindow) {
        this.owner.streamError(
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
      this.owner.streamError(
        s,
        ErrorCode.FrameSizeError,
        streamFailure(ErrorCode.FrameSizeError, `PRIORITY of ${end - start} bytes`),
      );
  }
}

/** `buf[start, end)` in a buffer of its own (small ones from Node's pool). */
function copyOf(buf: Buffer, start: number, end: number): Buffer {
  const out = Buffer.allocUnsafe(end - start);
  buf.copy(out, 0, start, end);
  return out;
}
