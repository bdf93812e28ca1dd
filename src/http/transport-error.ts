import { VespaBulkError } from '../core/errors.js';

/**
 * What went wrong with a request in transport, as the rest of the client branches on it. Every transport
 * (HTTP/2, HTTP/1.1, the choice between them) fails its requests with a `TransportError`, made here from whatever
 * the socket, the TLS layer, our HTTP/2 code or undici threw: this file is the one place those codes are read.
 *
 * - `connect`: the connection could not be made (refused, unknown host, network unreachable): never sent.
 * - `connect-timeout`: nothing accepted the connection in time: never sent.
 * - `tls`: the TLS handshake failed or was refused: never sent.
 * - `not-h2`: HTTP/2 was asked for and the server does not speak it: never sent.
 * - `refused`: the server declined it unprocessed (HTTP/2 REFUSED_STREAM, or above a GOAWAY's last stream): never applied.
 * - `reset`: the server reset the stream: it may have been applied.
 * - `closed`: the connection ended with the request on it, before its answer was whole: it may have been applied.
 * - `protocol`: the server broke the protocol (a malformed frame, header or status): it may have been applied.
 * - `headers-timeout`, `body-timeout`: no answer, or a gap in its body, longer than the request's bound.
 * - `invalid`: the request may not be sent as given (a header HTTP/2 cannot carry, a body that is not bytes): never sent.
 * - `aborted`: the caller aborted it (its signal, or `abort()`): never applied when aborted while it waited for room
 *   on a connection (`maybeApplied` false), else it may have been.
 * - `shut`: the transport was closed or destroyed by its owner with the request still open.
 */
export type TransportFailure =
  | 'connect'
  | 'connect-timeout'
  | 'tls'
  | 'not-h2'
  | 'refused'
  | 'reset'
  | 'closed'
  | 'protocol'
  | 'headers-timeout'
  | 'body-timeout'
  | 'invalid'
  | 'aborted'
  | 'shut';

/** Failures after which the request surely never reached the service. */
const neverSent = new Set<TransportFailure>(['connect', 'connect-timeout', 'tls', 'not-h2', 'refused', 'invalid']);

const timeouts = new Set<TransportFailure>(['headers-timeout', 'body-timeout', 'connect-timeout']);

/** The error code of a failure: an abort and a timeout have their own, any other is a transport failure. */
function codeOf(failure: TransportFailure): TransportError['code'] {
  if (failure === 'aborted') return 'VB_ABORTED';
  return timeouts.has(failure) ? 'VB_TIMEOUT' : 'VB_TRANSPORT';
}

/**
 * A request that failed in transport; `failure` says how, `maybeApplied` whether the service may have applied it.
 * @example
 * ```ts
 * import { DocumentClient, TransportError } from 'vespa-bulk';
 *
 * const client = new DocumentClient({ endpoint: 'http://127.0.0.1:8080' });
 * try {
 *   await client.put('id:mynamespace:music::song-1', { title: 'Song 1' });
 * } catch (err) {
 *   // A put cut off after it was sent may have been applied: read it back before sending it again.
 *   if (err instanceof TransportError && err.maybeApplied) console.error(err.failure, 'maybe applied');
 * } finally {
 *   await client.close();
 * }
 * ```
 */
export class TransportError extends VespaBulkError {
  declare readonly code: 'VB_TRANSPORT' | 'VB_TIMEOUT' | 'VB_ABORTED';
  readonly failure: TransportFailure;
  /** false when the request surely never reached the service (see `TransportFailure`). */
  readonly maybeApplied: boolean;
  /**
   * Set when this failure means that nothing answers at the endpoint, in words for a user ("connection refused
   * (ECONNREFUSED)"): the connection failed before the server sent a single byte. Whether that ends the work is
   * the caller's to decide (see `Reachability`): before any answer it does, afterwards it is an outage.
   */
  readonly unreachable: string | undefined;
  /** The lower layer's own code (an errno, an OpenSSL code, an HTTP/2 error name), for messages. */
  readonly detail: string | undefined;

  constructor(
    failure: TransportFailure,
    message: string,
    /** `neverSent`: none of its bytes left the process (an abort while it waited for room), whatever `failure` says. */
    options: { unreachable?: string; detail?: string; cause?: unknown; neverSent?: boolean } = {},
  ) {
    super(codeOf(failure), message, { cause: options.cause });
    this.name = 'TransportError';
    this.failure = failure;
    this.maybeApplied = options.neverSent !== true && !neverSent.has(failure);
    this.unreachable = options.unreachable;
    this.detail = options.detail;
  }
}

/** Connection-level codes (node's errno, undici's, OpenSSL's) and what they mean to a user. */
const connectCauses: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'unknown host',
  EAI_AGAIN: 'the host name could not be resolved',
  EAI_NONAME: 'unknown host',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EADDRNOTAVAIL: 'address not available',
};

const tlsCauses: Record<string, string> = {
  ERR_TLS_HANDSHAKE_TIMEOUT: 'TLS handshake timed out',
  ERR_TLS_CERT_ALTNAME_INVALID: "TLS handshake failed: the server's certificate is not for this host name",
  DEPTH_ZERO_SELF_SIGNED_CERT: "TLS handshake failed: the server's certificate is self-signed and not trusted (--ca)",
  SELF_SIGNED_CERT_IN_CHAIN: "TLS handshake failed: the server's certificate chain is not trusted (--ca)",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "TLS handshake failed: the server's certificate is not trusted (--ca)",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: "TLS handshake failed: the server's certificate is not trusted (--ca)",
  CERT_HAS_EXPIRED: "TLS handshake failed: the server's certificate has expired",
  CERT_NOT_YET_VALID: "TLS handshake failed: the server's certificate is not valid yet",
  EPROTO: 'TLS handshake failed',
};

/** Our HTTP/2 code's error codes (`H2Error.code`, see h2/errors.ts) and undici's, by failure. */
const failureOfCode: Record<string, TransportFailure> = {
  H2_REFUSED_STREAM: 'refused',
  H2_NOT_SUPPORTED: 'not-h2',
  H2_STREAM_RESET: 'reset',
  H2_PROTOCOL_ERROR: 'protocol',
  H2_HEADERS_TOO_LARGE: 'protocol',
  H2_FLOOD: 'protocol',
  H2_SETTINGS_TIMEOUT: 'protocol',
  H2_CONNECTION_CLOSED: 'closed',
  H2_PING_TIMEOUT: 'closed',
  H2_CONNECT_TIMEOUT: 'connect-timeout',
  H2_HEADERS_TIMEOUT: 'headers-timeout',
  H2_BODY_TIMEOUT: 'body-timeout',
  H2_ABORTED: 'aborted',
  H2_DESTROYED: 'shut',
  H2_CLOSED: 'shut',
  H2_INVALID_REQUEST: 'invalid',
  UND_ERR_INVALID_ARG: 'invalid',
  UND_ERR_SOCKET: 'closed',
  UND_ERR_CONNECT_TIMEOUT: 'connect-timeout',
  UND_ERR_HEADERS_TIMEOUT: 'headers-timeout',
  UND_ERR_BODY_TIMEOUT: 'body-timeout',
  UND_ERR_ABORTED: 'aborted',
  UND_ERR_ABORT: 'aborted',
  ABORT_ERR: 'aborted',
  UND_ERR_DESTROYED: 'shut',
  UND_ERR_CLOSED: 'shut',
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH: 'protocol',
  UND_ERR_REQ_CONTENT_LENGTH_MISMATCH: 'protocol',
  HPE_INVALID_CONSTANT: 'protocol',
  ECONNRESET: 'closed',
  EPIPE: 'closed',
  ERR_SSL_WRONG_VERSION_NUMBER: 'tls',
};

/** ` (CODE)` for messages, or nothing: the codes of our HTTP/2 and of undici say nothing that `failure` and the message do not. */
function shown(code: string): string {
  return code.startsWith('H2_') || code.startsWith('UND_ERR_') ? '' : ` (${code})`;
}

interface ErrorLike {
  code?: unknown;
  name?: unknown;
  message?: unknown;
  cause?: unknown;
  /** Bytes read from the connection before it failed, where the lower layer tells (our HTTP/2, undici's socket errors). */
  socket?: { bytesRead?: unknown };
}

function chainOf(err: unknown): ErrorLike[] {
  const chain: ErrorLike[] = [];
  for (let e = err, depth = 0; typeof e === 'object' && e !== null && depth < 4; depth++) {
    chain.push(e);
    e = (e as ErrorLike).cause;
  }
  return chain;
}

/**
 * The `TransportError` for what a transport's lower layer threw. `tls`: the endpoint is https, where a connection
 * closed before a single byte of answer is how a TLS 1.3 server refuses the client's certificate (the client's side
 * of the handshake has already ended).
 */
export function toTransportError(err: unknown, tls = false): TransportError {
  if (err instanceof TransportError) return err;
  const chain = chainOf(err);
  const top = chain[0] ?? {};
  const message = typeof top.message === 'string' ? top.message : String(err);
  for (const e of chain) {
    const code = typeof e.code === 'string' ? e.code : undefined;
    if (e.name === 'AbortError' && code === undefined)
      return new TransportError('aborted', 'request aborted', { cause: err });
    if (code === undefined) continue;
    const connect = connectCauses[code];
    if (connect !== undefined)
      return new TransportError('connect', `${message} (${code})`, {
        unreachable: `${connect} (${code})`,
        detail: code,
        cause: err,
      });
    const tlsCause = tlsCauses[code];
    // OpenSSL's own codes: the peer speaks no TLS, refused ours, or sent an alert during the handshake.
    if (tlsCause !== undefined || code.startsWith('ERR_SSL_')) {
      const words =
        tlsCause ??
        `TLS handshake failed (${code})${code === 'ERR_SSL_WRONG_VERSION_NUMBER' ? ': is the server speaking plain HTTP? try http://' : ''}`;
      return new TransportError('tls', `${message} (${code})`, {
        unreachable: tlsCause !== undefined ? `${tlsCause} (${code})` : words,
        detail: code,
        cause: err,
      });
    }
    const failure = failureOfCode[code];
    if (failure === undefined) continue;
    const bytesRead = e.socket?.bytesRead;
    let unreachable: string | undefined;
    if (failure === 'connect-timeout') unreachable = `connect timed out${shown(code)}`;
    else if (failure === 'closed' && tls && bytesRead === 0) {
      unreachable = `TLS handshake refused: the server closed the connection without answering; does it need a client certificate (--cert, --key)?${shown(code)}`;
    }
    const words = failure === 'aborted' ? 'request aborted' : `${message}${shown(code)}`;
    return new TransportError(failure, words, { unreachable, detail: code, cause: err });
  }
  return new TransportError('closed', typeof top.code === 'string' ? `${message} (${top.code})` : message, {
    cause: err,
  });
}
