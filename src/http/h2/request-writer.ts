import { Flag, FrameType, defaultWindow, frameHeaderLength, writeFrameHeader } from './frame.js';
import { HpackEncoder, literalFieldSize, writeLiteralField } from './hpack.js';
import { pathFault, pathFieldSize, requestFieldsFault, writePath } from './fields.js';
import type { FrameWriter } from './frame-writer.js';
import type { OutBuffer } from './out-buffer.js';
import type { PeerSettings } from './settings.js';
import { type Stream, bodyLength, copyBody } from './stream.js';

/** What the request writer asks of its connection. */
export interface RequestWriterOwner {
  /** Whether `s` is still one of the connection's streams. */
  holds(s: Stream): boolean;
  /** `s` may not be sent (its path or fields): it fails before anything of it left. */
  refuse(s: Stream, fault: string): void;
  /** The rest of an answered stream's body is sent: the stream is closed. */
  bodySent(s: Stream): void;
}

/**
 * The sending half of a connection (as x/net/http2's writeHeaders and writeRequestBody): a request's HEADERS
 * (with CONTINUATION when the block outgrows the server's frame size) and its body as DATA under the
 * connection's and the stream's send windows; a body the windows stop waits in `blocked`, in order.
 */
export class RequestWriter {
  readonly encoder = new HpackEncoder();
  /** What the server lets us send on the connection before its next WINDOW_UPDATE. */
  sendWindow = defaultWindow;
  /** Streams that wait for flow-control window to send the rest of their body, in order. */
  private blocked: Stream[] = [];
  private readonly out: OutBuffer;

  constructor(
    private readonly writer: FrameWriter,
    private readonly peer: PeerSettings,
    private readonly owner: RequestWriterOwner,
  ) {
    this.out = writer.out;
  }

  /** Writes the stream's HEADERS; false (and the request failed) when its path or fields may not be sent. */
  writeHeaders(s: Stream): boolean {
    const req = s.req;
    let pseudo = this.encoder.kept(req.pseudo);
    let headers = pseudo === undefined ? undefined : this.encoder.kept(req.headers);
    if (pseudo === undefined || headers === undefined) {
      // Fields this connection has not sent as they are now: checked before any of them enters the table.
      const fault =
        pathFault(req.path) ?? requestFieldsFault(req.pseudo, true) ?? requestFieldsFault(req.headers, false);
      if (fault !== undefined) {
        this.owner.refuse(s, fault);
        return false;
      }
      pseudo = this.encoder.fixed(req.pseudo);
      headers = this.encoder.fixed(req.headers);
    }
    const body = req.body;
    const sending = bodyLength(req);
    const length = body === null ? '' : String(sending);
    let size = pseudo.length + headers.length + pathFieldSize(req.path);
    if (body !== null) size += literalFieldSize('content-length', length);
    // The DATA frame of a small body goes in the same reservation.
    const inline = sending > 0 && this.canSendWhole(s, sending);
    const out = this.out.reserve(frameHeaderLength + size + (inline ? frameHeaderLength + sending : 0));
    const start = this.out.used;
    let at = start + frameHeaderLength;
    at += pseudo.copy(out, at);
    at = writePath(out, at, req.path);
    if (at < 0) {
      // Only with kept blocks (others were checked above): nothing was encoded anew, nothing is committed.
      this.owner.refuse(s, pathFault(req.path)!);
      return false;
    }
    at += headers.copy(out, at);
    if (body !== null) at = writeLiteralField(out, at, 'content-length', length);
    const blockLength = at - start - frameHeaderLength;
    const endStream = sending === 0 ? Flag.EndStream : 0;
    s.sent = true;
    s.queuedAt = this.writer.handovers;
    if (blockLength > this.peer.maxFrame) {
      // Too long for one frame: HEADERS and CONTINUATION frames, from a copy of the block.
      const block = Buffer.from(out.subarray(start + frameHeaderLength, at));
      this.out.commit(start);
      this.writeLongHeaders(s.id, block, endStream);
    } else {
      writeFrameHeader(out, start, blockLength, FrameType.Headers, Flag.EndHeaders | endStream, s.id);
      if (inline) {
        writeFrameHeader(out, at, sending, FrameType.Data, Flag.EndStream, s.id);
        copyBody(req, out, at + frameHeaderLength, 0, sending);
        at += frameHeaderLength + sending;
        this.sendWindow -= sending;
        s.sendWindow -= sending;
        s.bodyAt = -1;
      }
      this.out.commit(at);
    }
    this.writer.schedule();
    return true;
  }

  private writeLongHeaders(id: number, block: Buffer, endStream: number): void {
    const maxFrame = this.peer.maxFrame;
    for (let at = 0; at < block.length; ) {
      const n = Math.min(maxFrame, block.length - at);
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
    return n <= this.peer.maxFrame && n <= this.sendWindow && n <= s.sendWindow;
  }

  /** Sends as much of the stream's body as the windows allow; the rest waits in `blocked`. */
  sendBody(s: Stream): boolean {
    const req = s.req;
    const length = bodyLength(req);
    while (s.bodyAt >= 0) {
      const left = length - s.bodyAt;
      const n = Math.min(left, this.peer.maxFrame, this.sendWindow, s.sendWindow);
      if (n <= 0 && left > 0) {
        if (!this.blocked.includes(s)) this.blocked.push(s);
        // What was written before the window closed must still leave.
        this.writer.schedule();
        return false;
      }
      const last = n === left;
      const out = this.out.reserve(frameHeaderLength + n);
      const start = this.out.used;
      writeFrameHeader(out, start, n, FrameType.Data, last ? Flag.EndStream : 0, s.id);
      copyBody(req, out, start + frameHeaderLength, s.bodyAt, s.bodyAt + n);
      this.out.commit(start + frameHeaderLength + n);
      this.sendWindow -= n;
      s.sendWindow -= n;
      s.bodyAt = last ? -1 : s.bodyAt + n;
    }
    this.writer.schedule();
    // The body of an answered request is all sent: the stream is closed.
    if (s.answered) this.owner.bodySent(s);
    return true;
  }

  /** A window grew: the blocked bodies go on, in order, as far as it lets them. */
  unblock(): void {
    if (this.blocked.length === 0) return;
    const waiting = this.blocked;
    this.blocked = [];
    for (let i = 0; i < waiting.length; i++) {
      const s = waiting[i];
      if (!this.owner.holds(s)) continue;
      if (s.answered) s.activeAt = performance.now();
      if (!this.sendBody(s)) {
        // Still blocked: it and everything after it wait, in order.
        for (let j = i + 1; j < waiting.length; j++)
          if (!this.blocked.includes(waiting[j])) this.blocked.push(waiting[j]);
        return;
      }
    }
  }

  /** The connection is closed: nothing waits any more. */
  clear(): void {
    this.blocked = [];
  }
}
