import { ErrorCode, errorName } from './frame.js';
import { TransportError } from '../transport-error.js';

/**
 * Why an HTTP/2 request or connection failed, inside h2/: `toTransportError` (transport-error.ts) reads `code` once
 * and makes the `TransportError` the rest of the client branches on.
 *
 * - `H2_CONNECTION_CLOSED`: the connection ended with the request on it; it may have been applied.
 * - `H2_REFUSED_STREAM`: the server said it did not process the request (RST_STREAM REFUSED_STREAM, or a
 *   GOAWAY whose last stream id is below it): it was surely not applied.
 * - `H2_STREAM_RESET`: the server reset the stream with another code: it may have been applied.
 * - `H2_PROTOCOL_ERROR`: the server broke the protocol (RFC 9113); `h2Code` is the error code the client answered
 *   with. On one stream (a malformed answer, DATA past the stream's window...) that stream is reset and the
 *   connection goes on; on the connection (a bad frame, DATA past its window...) the connection is closed with
 *   GOAWAY and every request on it fails with this. It may have been applied.
 * - `H2_HEADERS_TOO_LARGE`: an answer's header block went past the client's SETTINGS_MAX_HEADER_LIST_SIZE (a
 *   CONTINUATION flood among them): the connection is closed (GOAWAY ENHANCE_YOUR_CALM) and its requests fail
 *   with this. They may have been applied.
 * - `H2_FLOOD`: the server sent more frames that need an answer (PING, SETTINGS) than it read answers to, or
 *   a header block of more CONTINUATION frames than any server needs (flood-guard.ts): the connection is closed
 *   (GOAWAY ENHANCE_YOUR_CALM). Its requests may have been applied.
 * - `H2_PING_TIMEOUT`: the connection read nothing for a while with requests open, and nothing in answer to
 *   the PING it then sent (liveness.ts): it is closed as dead. Its requests may have been applied (those whose
 *   HEADERS never left the process are refused instead, and go elsewhere).
 * - `H2_SETTINGS_TIMEOUT`: the server did not acknowledge the client's SETTINGS in time: the connection is
 *   closed (GOAWAY SETTINGS_TIMEOUT). Its requests may have been applied.
 * - `H2_NOT_SUPPORTED`: the server does not speak HTTP/2 (no SETTINGS in answer to the preface, or ALPN chose
 *   another protocol).
 * - `H2_INVALID_REQUEST`: the request was refused before anything of it was sent: a header or path HTTP/2 may
 *   not carry as given (CR, LF, NUL, whitespace at a value's ends, characters beyond latin1...), or a body that
 *   is not bytes: never sent.
 * - `H2_HEADERS_TIMEOUT`, `H2_BODY_TIMEOUT`: no answer, or a gap in its body, longer than the request's bound.
 * - `H2_CONNECT_TIMEOUT`: the connection (and its TLS handshake) did not complete in time: never sent.
 * - `H2_ABORTED`: the caller aborted the request. `H2_DESTROYED`, `H2_CLOSED`: the transport was destroyed or
 *   closed by its owner with the request still open.
 *
 * A handler's own exception is handed to its onError as it was thrown, not wrapped.
 */
export class H2Error extends Error {
  readonly code: string;
  /** The HTTP/2 error code of a reset or GOAWAY. */
  readonly h2Code: number | undefined;
  /** Bytes read from the connection before it failed (0: nothing ever answered). */
  readonly socket: { bytesRead: number } | undefined;

  constructor(code: string, message: string, options: { h2Code?: number; bytesRead?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'H2Error';
    this.code = code;
    this.h2Code = options.h2Code;
    this.socket = options.bytesRead === undefined ? undefined : { bytesRead: options.bytesRead };
  }
}

export function refusedError(how: string, h2Code?: number): H2Error {
  return new H2Error('H2_REFUSED_STREAM', `HTTP/2 request not processed by the server (${how})`, { h2Code });
}

export function resetError(h2Code: number): H2Error {
  return new H2Error('H2_STREAM_RESET', `HTTP/2 stream reset by the server: ${errorName(h2Code)}`, { h2Code });
}

/** A connection error found while reading: GOAWAY with `h2Code`, and every stream fails with an H2Error of `kind`. */
export class ConnectionError extends Error {
  constructor(
    readonly h2Code: ErrorCode,
    message: string,
    readonly kind = 'H2_PROTOCOL_ERROR',
  ) {
    super(message);
  }
}

export function protocolError(message: string): ConnectionError {
  return new ConnectionError(ErrorCode.ProtocolError, message);
}

export function frameSizeError(message: string): ConnectionError {
  return new ConnectionError(ErrorCode.FrameSizeError, message);
}

export function headersTooLarge(limit: number): ConnectionError {
  return new ConnectionError(
    ErrorCode.EnhanceYourCalm,
    `the server sent a header block of more than ${limit} bytes (SETTINGS_MAX_HEADER_LIST_SIZE)`,
    'H2_HEADERS_TOO_LARGE',
  );
}

/** What a stream error tells its request: the server broke the protocol on this stream; the connection goes on. */
export function streamFailure(code: ErrorCode, message: string): H2Error {
  return new H2Error(
    'H2_PROTOCOL_ERROR',
    `HTTP/2 protocol error by the server: ${message} (RST_STREAM ${errorName(code)})`,
    { h2Code: code },
  );
}

/** What an aborted stream's request fails with: no reason is a plain abort; a TransportError stands as it is. */
export function abortFailure(reason: unknown): Error {
  if (reason === undefined) return new H2Error('H2_ABORTED', 'Request aborted');
  return reason instanceof TransportError ? reason : abortedBy(reason);
}

/** The failure of a request ended by its caller, or by its handler's exception: `aborted`, saying why, the reason its cause. */
function abortedBy(reason: unknown): TransportError {
  return new TransportError('aborted', reason instanceof Error ? reason.message : String(reason), { cause: reason });
}
