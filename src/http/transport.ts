import type { ConnectionOptions } from 'node:tls';
import type { TransportError } from './transport-error.js';
import type { ProxySetting } from './proxy/proxy-route.js';

/** The protocol a transport speaks, once known. */
export type WireProtocol = 'h2' | 'http1.1';

/** Which HTTP the client speaks: `auto` (HTTP/2 where the server speaks it, else HTTP/1.1), `h2` or `http1.1`. */
export type Protocol = 'auto' | WireProtocol;

/** TLS material and checks for https endpoints: node:tls options, e.g. from `connectOptions(security)`, exported by the package. */
export type TlsOptions = Pick<
  ConnectionOptions,
  | 'ca'
  | 'cert'
  | 'key'
  | 'passphrase'
  | 'pfx'
  | 'rejectUnauthorized'
  | 'servername'
  | 'checkServerIdentity'
  | 'minVersion'
  | 'maxVersion'
  | 'ciphers'
>;

/**
 * The client's HTTP: every request vespa-bulk makes (feed, visit, bulk operations, single documents, cluster
 * discovery, `--wait` probes, the config server, URL inputs) goes through a `Transport` made by
 * `createTransport` (create-transport.ts), so connection settings, failure codes and the line between HTTP/2 and HTTP/1.1 live in one
 * place. Requests are callbacks, not promises: the feeder sends millions, and a promise, closure or stream per
 * request is most of the cost at that rate; `send` and `exchange` (exchange.ts) are the promise forms.
 */
export interface Transport {
  /** What `detect()` resolved with, read without waiting; undefined until `auto` has asked the server. */
  readonly protocol: WireProtocol | undefined;
  /**
   * The one way to learn the protocol: resolves with it once the server has told (opening a connection to ask, if
   * none is open). `TransportOptions.onProtocol` is told the same, once, for callers that only print it.
   */
  detect(): Promise<WireProtocol>;
  /**
   * Sends `req`; `handler` hears of it once it is on a connection (`onStart`), then either the answer (`onHeaders`,
   * `onData`..., `onComplete`) or one `onError`. No callback runs inside this call.
   */
  dispatch(req: TransportRequest, handler: ResponseHandler): void;
  /** Resolves once every request has ended and the connections are closed; later requests fail (`shut`). */
  close(): Promise<void>;
  /** Ends every request now (they fail with `err`, or as `shut`) and closes the connections. */
  destroy(err?: Error): Promise<void>;
  /** Connections open and requests on each, for tests and the progress line. */
  readonly stats: TransportStats;
}

/** What a transport has open now. */
export interface TransportStats {
  connections: number;
  /** Requests open on each connection. */
  requests: number[];
  /** Requests waiting for room on a connection. */
  waiting: number;
}

/** What goes before and after a request body (`TransportRequest.bodyFrame`). */
export type BodyFrame = readonly [before: Buffer, after: Buffer];

/** The body `req` sends, as one buffer (`bodyFrame` joined around `body`): for transports that take it whole. */
export function wholeBody(req: Pick<TransportRequest, 'body' | 'bodyFrame'>): Buffer | null {
  const body = req.body ?? null;
  const frame = req.bodyFrame;
  if (body === null || frame === undefined) return body;
  return Buffer.concat([frame[0], body, frame[1]], frame[0].length + body.length + frame[1].length);
}

/** One request, as a transport sends it. */
export interface TransportRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Path and query, already encoded. */
  path: string;
  /**
   * Header names (lower-case) and values, flat: `[name, value, name, value, ...]`. Not `host` or HTTP/1.1's
   * connection headers; `content-length` is the transport's. A transport may keep what it derived from an array
   * for as long as the array is the same object: an array given once must not change afterwards.
   */
  headers?: readonly string[];
  body?: Buffer | null;
  /**
   * Bytes that go before and after `body` on the wire (a document's `{"fields":` and `}` around the fields as they
   * lie in the input): HTTP/2 frames the three straight into its connection's buffer, with no body put together
   * first; HTTP/1.1 joins them. The content-length counts all three. Ignored without a body.
   */
  bodyFrame?: BodyFrame;
  /**
   * Whether the transport may send the request again on its own, without the caller knowing: one meaning on both
   * protocols. Default true. It matters only where a transport could resend: HTTP/1.1 with pipelining, where undici
   * sends again the requests pipelined behind one whose connection broke; false there sends the request alone on
   * its connection, never behind another. HTTP/2 never pipelines and resends only what the server refused
   * unprocessed (REFUSED_STREAM, above a GOAWAY's last stream), which was never applied, so false changes nothing
   * there. Either way the caller's own retries are the caller's (`maybeApplied` on the failure tells).
   */
  idempotent?: boolean;
  /** Bound on the wait for the answer's headers and on any gap in its body, in ms; 0: none. Default: the transport's. */
  timeoutMs?: number;
  /** Aborts the request (it fails as `aborted`). */
  signal?: AbortSignal;
}

/** What a handler may do with its request once it is on a connection. */
export interface RequestControl {
  /** Ends the request now; its handler hears `onError` with `reason` (or an `aborted` failure). */
  abort(reason?: Error): void;
  /** Holds the answer's body back (the transport stops reading it from the server as its windows or buffers fill). */
  pause(): void;
  /** Goes on reading after `pause`. */
  resume(): void;
}

/** Hears how one request goes: `onStart`, then the answer or one `onError`. */
export interface ResponseHandler {
  /** The request is on a connection; `control` may abort it, or pause and resume the reading of its answer. */
  onStart?(control: RequestControl): void;
  /** The answer's status and headers (lower-case names, flat, as `TransportRequest.headers`). Interim (1xx) answers are not passed on. */
  onHeaders(status: number, headers: readonly string[]): void;
  /** A piece of the body; it stays valid after the call. */
  onData(chunk: Buffer): void;
  /** The answer is whole: its end was seen as the protocol marks it (END_STREAM, Content-Length, the last chunk). */
  onComplete(): void;
  /** The request failed; after headers, too: a body that did not end as the protocol marks its end is never complete. */
  onError(err: TransportError): void;
}

/** How `createTransport` connects to one origin. */
export interface TransportOptions {
  /** Endpoint origin, e.g. http://127.0.0.1:8080. */
  origin: string;
  /**
   * `auto` (default): HTTP/2 where the server speaks it (h2c with prior knowledge on http://, ALPN on https://),
   * else HTTP/1.1. `h2`: HTTP/2 only; a server that does not speak it fails every request (`not-h2`).
   * `http1.1`: HTTP/1.1 only.
   */
  protocol?: Protocol;
  /**
   * Connections. HTTP/2: this many, opened as the requests in flight need them (one per request in flight, four
   * connecting at once) and kept open, the requests spread over them, so that a layer-4 balancer places them on as
   * many container nodes (default `defaultH2Connections`, 16, or `concurrency` where smaller; see
   * `http/h2/connection-choice.ts`); HTTP/1.1: at most this many, opened as the requests need them (default one per
   * request `concurrency` allows, else 128).
   */
  connections?: number;
  /**
   * Requests the caller keeps in flight at most (a feed's in-flight maximum, a visit's chains): HTTP/1.1 opens up to
   * one connection per `pipelining` of them; HTTP/2 opens no more connections than this.
   */
  concurrency?: number;
  /** HTTP/2: streams at once per connection at most (the server's SETTINGS_MAX_CONCURRENT_STREAMS applies too). Default 256. */
  maxStreams?: number;
  /** HTTP/1.1: requests on one connection at once (1: none pipelined; 0: a connection per request). Default 1. */
  pipelining?: number;
  /** Bound on the wait for an answer's headers and on any gap in its body, unless a request sets its own. Default 300 s. */
  timeoutMs?: number;
  /** HTTP/1.1: gather the writes of one event-loop turn into one syscall. Default: when pipelining. */
  batchWrites?: boolean;
  /** TLS options for https endpoints. */
  tls?: TlsOptions;
  /**
   * HTTP/2: how long a connection carries new requests before it is replaced by a fresh one (and drained), in ms,
   * each connection a random part of it earlier so that they do not all go at once; 0: never. A layer-4 balancer
   * places only new connections, so this is how a restarted or added container node gets traffic again. Default 60 s.
   */
  maxConnectionAgeMs?: number;
  /**
   * A forward proxy to reach the origin through (see `ProxySetting`: a URL, `false` for none, undefined for the
   * environment's HTTPS_PROXY, HTTP_PROXY, ALL_PROXY and NO_PROXY, as curl reads them). An https:// origin, and an
   * http:// one over HTTP/2, go through CONNECT tunnels, one per connection; HTTP/1.1 to an http:// origin is sent to
   * the proxy with absolute URIs. A proxy that will not tunnel to an http:// origin leaves `auto` on HTTP/1.1.
   */
  proxy?: ProxySetting;
  /** TLS options of an https:// proxy (its CA, e.g. `{ ca: readFileSync('proxy-ca.pem') }`); the system's CAs by default. */
  proxyTls?: TlsOptions;
  /**
   * Called once with the protocol `auto` chose (at once for `h2` and `http1.1`); `why`, when the choice was not the
   * server's own (a proxy that will not tunnel), says so in words.
   */
  onProtocol?: (protocol: WireProtocol, why?: string) => void;
}
