import type { BodyFrame, RequestControl, ResponseHandler } from '../transport.js';

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
  /** What goes before and after `body` (see `TransportRequest.bodyFrame`); the body is null or all three. */
  bodyFrame?: BodyFrame;
  /** ms to wait for the answer's headers; 0: no bound. */
  headersTimeout: number;
  /** ms any gap in the answer's body may last; 0: no bound. */
  bodyTimeout: number;
  handler: ResponseHandler;
  /** How often the server refused it unprocessed and it was sent again. */
  refusals: number;
}

/** What a stream asks of its connection when its handler aborts, pauses or resumes it. */
export interface StreamOwner {
  abortStream(s: Stream, reason: unknown): void;
  resumeStream(s: Stream): void;
}

/** One request on a connection: its windows, where its body and its answer are, and its handler's controls. */
export class Stream implements RequestControl {
  /** Bytes of the request body still to send, from `bodyAt`; -1 once END_STREAM is sent. */
  bodyAt = 0;
  /** The session's hand-overs to the socket when its HEADERS were queued: equal still, none of it left the process. */
  queuedAt = -1;
  status = 0;
  /** Bytes received and not yet returned to the server as WINDOW_UPDATE. */
  recvUnacked = 0;
  /** HEADERS is written: the server may know the stream (a reset before that would name one it never saw). */
  sent = false;
  /**
   * The whole answer was handed over and the stream lives on only to send the rest of the body (half-closed,
   * remote): its handler has heard all it will.
   */
  answered = false;
  /** The answer's content-length, -1 without one; the body's bytes so far. */
  contentLength = -1;
  received = 0;
  /** The reader has all it takes for now (its handler's onData said false): the windows stay closed to it. */
  paused = false;
  /** Bytes it received while paused, not yet returned to the connection's window: they are still unread. */
  held = 0;
  /** When the request was sent, then when its answer last showed progress (performance.now()). */
  activeAt: number;
  trailers: string[] | undefined;
  constructor(
    private readonly session: StreamOwner,
    readonly id: number,
    readonly req: H2Request,
    public sendWindow: number,
    /** What the server may still send on it before our next WINDOW_UPDATE. */
    public recvWindow: number,
    now: number,
  ) {
    this.activeAt = now;
  }

  abort(reason?: Error): void {
    this.session.abortStream(this, reason);
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.session.resumeStream(this);
  }
}

/** An answer with no body whatever its content-length says: to HEAD, 204, 304 (RFC 9110, 6.4.1). */
export function noBodyExpected(s: Stream): boolean {
  return s.status === 204 || s.status === 304 || s.req.pseudo[1] === 'HEAD';
}

/** Bytes of `req`'s body on the wire, its frame's included. */
export function bodyLength(req: H2Request): number {
  const body = req.body;
  if (body === null) return 0;
  const frame = req.bodyFrame;
  return frame === undefined ? body.length : frame[0].length + body.length + frame[1].length;
}

/**
 * Copies bytes `from` to `to` of `req`'s body on the wire (its frame's included) into `out` at `at`: the body is
 * never put together in a buffer of its own, its pieces go straight into the connection's.
 */
export function copyBody(req: H2Request, out: Buffer, at: number, from: number, to: number): void {
  const body = req.body!;
  const frame = req.bodyFrame;
  if (frame === undefined) {
    body.copy(out, at, from, to);
    return;
  }
  const before = frame[0];
  const afterStart = before.length + body.length;
  if (from < before.length) at += before.copy(out, at, from, Math.min(to, before.length));
  if (to > before.length && from < afterStart)
    at += body.copy(out, at, Math.max(from, before.length) - before.length, Math.min(to, afterStart) - before.length);
  if (to > afterStart) frame[1].copy(out, at, Math.max(from, afterStart) - afterStart, to - afterStart);
}
