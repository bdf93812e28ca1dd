import type { Dispatcher, buildConnector } from 'undici';
import { toDocumentPath } from '../document/id.js';
import { createPool, headersToObject, parseBody, send, splitEndpoint, type Protocol, type WireProtocol } from './transport.js';
import { isH2Refusal, protocolError } from './reachability.js';
import { DocumentRequestEncoder, defaultMaxRequestBytes, isAssignOnly, requestSizeError, type DocumentParams, type EncodedBody } from './document-request.js';
import { VespaBulkError } from '../errors.js';
import { checkDuration, checkExclusive, checkInteger, checkOneOf, checkProtocol, checkUrl } from '../options-check.js';
import { tensorFormats } from '../document/tensor-format.js';

export type { DocumentParams } from './document-request.js';

/** Options of `new DocumentClient()`. */
export interface DocumentClientOptions {
  /** Container endpoint, e.g. http://127.0.0.1:8080 (a path prefix is kept). */
  endpoint: string;
  /** Extra headers on every request (authentication tokens). */
  headers?: Record<string, string>;
  /**
   * `auto` (default): HTTP/2 where the server speaks it, else HTTP/1.1; `h2`: HTTP/2, and a request to a server
   * without it rejects with VB_PROTOCOL; `http1.1`. See `PoolOptions.protocol`.
   */
  protocol?: Protocol;
  /** Called once the protocol is known (with `auto`: once the server has answered the first connection). */
  onProtocol?: (protocol: WireProtocol) => void;
  /** HTTP/2: connections (default 1). HTTP/1.1: connections at most (default 4). */
  connections?: number;
  /** HTTP/1.1 pipelining depth per connection. Default 1. */
  pipelining?: number;
  /** Socket-level timeout for each request. Default 300 s. */
  timeoutMs?: number;
  /** Use this dispatcher instead of creating a pool (it is not closed by close()). */
  dispatcher?: Dispatcher;
  /** TLS options for https endpoints (ca, cert, key), e.g. `connectOptions(security)`, exported by the package. */
  tls?: buildConnector.BuildOptions;
  /**
   * The cluster's request size limit in bytes: a put or update whose body is over it rejects with
   * VB_REQUEST_TOO_LARGE without sending. Default 100 MiB, the container's default.
   */
  maxRequestBytes?: number;
}

/** An answer of the document interface, whatever its status. */
export interface DocumentResponse {
  status: number;
  /** Parsed JSON, or `{message: text}` when the body is not JSON. */
  // The service's JSON, whose shape depends on the request and the schema: callers read what they know of it.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  /** The body as received: where `body` rounds a number beyond 2^53, this keeps its digits. */
  raw: Buffer;
  headers: Record<string, string | string[] | undefined>;
}

/**
 * Single-document operations on /document/v1. Every HTTP status resolves (check `status`); transport
 * failures reject with VespaBulkError VB_TRANSPORT or VB_TIMEOUT, and a server without HTTP/2 asked for it
 * (`protocol: 'h2'`) with VB_PROTOCOL.
 */
export class DocumentClient {
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly encoder: DocumentRequestEncoder;
  private readonly endpoint: string;
  private readonly maxRequestBytes: number;

  constructor(options: DocumentClientOptions) {
    checkUrl(options, 'endpoint');
    checkInteger(options, 'connections', 1);
    checkInteger(options, 'pipelining', 1);
    checkProtocol(options);
    checkDuration(options, 'timeoutMs', true);
    checkInteger(options, 'maxRequestBytes', 1);
    this.maxRequestBytes = options.maxRequestBytes ?? defaultMaxRequestBytes;
    // The own pool's TLS settings would be silently ignored with a caller's dispatcher.
    checkExclusive(options, 'dispatcher', 'tls');
    const { origin, prefix } = splitEndpoint(options.endpoint);
    this.endpoint = options.endpoint;
    this.encoder = new DocumentRequestEncoder({ prefix, headers: options.headers });
    this.ownsDispatcher = options.dispatcher === undefined;
    this.dispatcher =
      options.dispatcher ??
      createPool({
        origin,
        protocol: options.protocol,
        connections: options.connections,
        concurrency: 4,
        pipelining: options.pipelining ?? 1,
        timeoutMs: options.timeoutMs,
        tls: options.tls,
        onProtocol: options.onProtocol,
      });
  }

  /** Reads a document; 404 when there is none. A bad `tensorFormat` rejects with VB_USAGE before anything is sent. */
  get(id: string, params?: DocumentParams): Promise<DocumentResponse> {
    try {
      if (params !== undefined) checkOneOf(params, 'tensorFormat', tensorFormats);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.request('GET', id, params, undefined);
  }

  /** Writes a whole document; `fields` as an object, or as JSON text sent as it is. */
  put(id: string, fields: object | string, params?: DocumentParams): Promise<DocumentResponse> {
    return this.request('POST', id, params, Buffer.from(typeof fields === 'string' ? fields : JSON.stringify(fields)));
  }

  /** Applies field operations (`{"title":{"assign":"x"}}`); with `create: true` a missing document is created. */
  update(id: string, fields: object | string, params?: DocumentParams): Promise<DocumentResponse> {
    const text = typeof fields === 'string' ? fields : JSON.stringify(fields);
    return this.request('PUT', id, params, Buffer.from(text), isAssignOnly(text));
  }

  /** Removes a document; 200 also when there was none. */
  remove(id: string, params?: DocumentParams): Promise<DocumentResponse> {
    return this.request('DELETE', id, params, undefined);
  }

  /** Closes the own pool (a dispatcher given in the options is left open). */
  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  private async request(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    id: string,
    params: DocumentParams | undefined,
    fields: Buffer | undefined,
    idempotent = true,
  ): Promise<DocumentResponse> {
    const path = this.encoder.requestPath(toDocumentPath(id), params);
    const tooLarge = requestSizeError(fields, this.maxRequestBytes, id);
    if (tooLarge !== undefined) throw tooLarge;
    const encoded: EncodedBody = {};
    this.encoder.encodeBody(fields, encoded);
    try {
      const res = await send(this.dispatcher, { method, path, headers: encoded.headers, body: encoded.body, idempotent });
      return { status: res.status, body: parseBody(res.body), raw: res.body, headers: headersToObject(res.rawHeaders) };
    } catch (err) {
      // HTTP/2 was asked for and the server does not speak it: every request would fail alike.
      if (isH2Refusal(err)) throw protocolError(this.endpoint, err);
      if (err instanceof VespaBulkError) {
        // Give the error a place so the CLI can say which document failed.
        throw new VespaBulkError(err.code, err.message, { place: { documentId: id }, cause: err });
      }
      throw err;
    }
  }
}
