import type { ConnectionOptions } from './connection-options.js';
import { toDocumentPath } from '../document/id.js';
import { isSafeToRepeat, type OperationKind } from '../document/operation.js';
import { type Transport } from './transport.js';
import { createTransport } from './create-transport.js';
import { headersToObject, jsonObjectOf, parseBody, send } from './exchange.js';
import { splitEndpoint } from './endpoint.js';
import { TransportError } from './transport-error.js';
import { Reachability } from './reachability.js';
import {
  checkRetryBound,
  checkRetryPolicy,
  classifyStatus,
  defaultRetryPolicy,
  parseRetryAfter,
  type RetryPolicy,
} from './retry-delay.js';
import { retryLoop, type AttemptFailure } from './retry-loop.js';
import {
  DocumentRequestEncoder,
  defaultMaxRequestBytes,
  requestSizeError,
  type DocumentParams,
  type EncodedBody,
} from './document-request.js';
import { VespaBulkError } from '../core/errors.js';
import {
  checkDuration,
  checkExclusive,
  checkInteger,
  checkOneOf,
  checkProtocol,
  checkUrl,
} from '../core/options-check.js';
import { tensorFormats } from '../document/tensor-format.js';

export type { DocumentParams } from './document-request.js';

/** Options of `new DocumentClient()`; how it reaches the service is `ConnectionOptions` (`tls` not beside `transport`). */
export interface DocumentClientOptions extends ConnectionOptions {
  /** Container endpoint, e.g. http://127.0.0.1:8080 (a path prefix is kept). */
  endpoint: string;
  /** Connections at most, one per request in flight (default 4); HTTP/2 spreads the requests over them and renews them as the feed does. */
  connections?: number;
  /** HTTP/1.1 pipelining depth per connection. Default 1. */
  pipelining?: number;
  /**
   * Client-side bound for one attempt, in ms: the wait for the answer's headers and any gap in its body (the
   * socket's timeout). An attempt over it fails in transport with VB_TIMEOUT, retried where that is safe. Default 300 s.
   */
  requestTimeoutMs?: number;
  /**
   * Deadline of one call over all its attempts and the waits between them, in ms, as `FeedOptions.deadlineMs`: no
   * retry starts, nor a wait that would end, after it; the last answer or error is then the outcome. It does not
   * cut an attempt short (`requestTimeoutMs` does that) and is not sent (`DocumentParams.serviceTimeout` is the
   * service's). Default none: `maxRetries` bounds the retries.
   */
  deadlineMs?: number;
  /**
   * Retries of one call, in a row, with the backoff of `retryPolicy`: an answer 429 (throttled) or 503 (busy,
   * nothing applied), and a transport error where sending again is safe (as the feeder decides: a get, or an
   * operation without a condition that is a put, a remove or an update of assignments only; any operation when
   * the request surely never left). Not retried: other statuses, and an endpoint where nothing has ever
   * answered (that rejects at once). When the retries are spent, the last 429 or 503 resolves as any answer
   * does, or the last transport error rejects. Default 4 (five attempts in all); 0: none. The rule: {@link RetryPolicy}.
   */
  maxRetries?: number;
  /** Fine-tuning of the backoff: `defaultRetryPolicy` (100 ms doubling to 10 s, half random), these fields over it. Its `maxRetries` is refused beside `maxRetries` above (VB_USAGE). */
  retryPolicy?: Partial<RetryPolicy>;
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

/** Retries of a `DocumentClient` call unless `maxRetries` says otherwise: five attempts in all. */
const defaultDocumentRetries = 4;

/** A 2xx answer whose body is not the service's JSON (cut where the protocol could not tell, a proxy's page): its outcome is unknown. */
class UnreadableAnswer extends Error {
  constructor(readonly response: DocumentResponse) {
    super(`HTTP ${response.status} with an answer that is not the service's JSON: outcome unknown`);
  }
}

/**
 * The answers `retryDelay` may retry (429, and the 502/503/504 of something between us and the handler) as
 * opposed to answers that are final; 507 is returned at once, a feed block lasting minutes.
 */
function retriedStatus(status: number): boolean {
  const kind = classifyStatus(status);
  return kind !== 'final' && kind !== 'feed-blocked';
}

/** An answer the service asks to have sent again (429, 503): nothing was applied. */
class RetryableAnswer extends Error {
  constructor(readonly response: DocumentResponse) {
    super(`HTTP ${response.status}`);
  }
}

/**
 * Single-document operations on /document/v1. Every HTTP status resolves (check `status`), 429, 502, 503 and 504
 * after the retries (`maxRetries`) are spent, or at once where the operation may have been applied and is not safe
 * to repeat (a condition, an update that is not all assignments: see `retryDelay`); transport failures reject with VespaBulkError VB_TRANSPORT or
 * VB_TIMEOUT (after the retries, where retrying is safe), an endpoint where nothing has ever answered with
 * VB_UNREACHABLE (at once), and a server without HTTP/2 asked for it (`protocol: 'h2'`) with VB_PROTOCOL.
 * @example
 * ```ts
 * import { DocumentClient } from 'vespa-bulk';
 *
 * const client = new DocumentClient({ endpoint: 'http://127.0.0.1:8080' });
 * await client.put('id:mynamespace:music::song-1', { title: 'Song 1', year: 2001 });
 * await client.update('id:mynamespace:music::song-1', { year: { assign: 2002 } }, { condition: 'music.year == 2001' });
 * const { status, body } = await client.get('id:mynamespace:music::song-1');
 * console.log(status, body);
 * await client.remove('id:mynamespace:music::song-1');
 * await client.close();
 * ```
 */
export class DocumentClient {
  private readonly transport: Transport;
  private readonly ownsTransport: boolean;
  private readonly encoder: DocumentRequestEncoder;
  private readonly maxRequestBytes: number;
  private readonly policy: RetryPolicy;
  private readonly timeoutMs: number | undefined;
  /** Whether a failure rejects at once: before any answer, an endpoint where nothing answers is not retried. */
  private readonly reach: Reachability;

  constructor(options: DocumentClientOptions) {
    checkUrl(options, 'endpoint');
    checkInteger(options, 'connections', 1);
    checkInteger(options, 'pipelining', 1);
    checkProtocol(options);
    checkDuration(options, 'deadlineMs', true);
    checkDuration(options, 'requestTimeoutMs', true);
    checkInteger(options, 'maxRetries', 0);
    checkRetryPolicy(options.retryPolicy);
    checkRetryBound(options);
    checkInteger(options, 'maxRequestBytes', 1);
    this.policy = {
      ...defaultRetryPolicy,
      maxRetries: defaultDocumentRetries,
      ...options.retryPolicy,
      ...(options.maxRetries !== undefined && { maxRetries: options.maxRetries }),
    };
    this.timeoutMs = options.deadlineMs;
    this.maxRequestBytes = options.maxRequestBytes ?? defaultMaxRequestBytes;
    // The own transport's TLS settings would be silently ignored with a caller's transport.
    checkExclusive(options, 'transport', 'tls');
    const { origin, prefix } = splitEndpoint(options.endpoint);
    this.reach = new Reachability(options.endpoint);
    this.encoder = new DocumentRequestEncoder({ prefix, headers: options.headers });
    this.ownsTransport = options.transport === undefined;
    this.transport =
      options.transport ??
      createTransport({
        origin,
        protocol: options.protocol,
        connections: options.connections,
        concurrency: 4,
        pipelining: options.pipelining ?? 1,
        timeoutMs: options.requestTimeoutMs,
        tls: options.tls,
        proxy: options.proxy,
        proxyTls: options.proxyTls,
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
    return this.request('GET', id, params, undefined, undefined);
  }

  /** Writes a whole document; `fields` as an object, or as JSON text sent as it is. */
  put(id: string, fields: object | string, params?: DocumentParams): Promise<DocumentResponse> {
    const body = Buffer.from(typeof fields === 'string' ? fields : JSON.stringify(fields));
    return this.request('POST', id, params, body, 'put');
  }

  /** Applies field operations (`{"title":{"assign":"x"}}`); with `create: true` a missing document is created. */
  update(id: string, fields: object | string, params?: DocumentParams): Promise<DocumentResponse> {
    const body = Buffer.from(typeof fields === 'string' ? fields : JSON.stringify(fields));
    return this.request('PUT', id, params, body, 'update');
  }

  /** Removes a document; 200 also when there was none. */
  remove(id: string, params?: DocumentParams): Promise<DocumentResponse> {
    return this.request('DELETE', id, params, undefined, 'remove');
  }

  /** Closes the own transport (one given in the options is left open). */
  async close(): Promise<void> {
    if (this.ownsTransport) await this.transport.close();
  }

  private async request(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    id: string,
    params: DocumentParams | undefined,
    fields: Buffer | undefined,
    /** The write it is; undefined for a read, which is always safe to repeat. */
    kind: OperationKind | undefined,
  ): Promise<DocumentResponse> {
    const path = this.encoder.requestPath(toDocumentPath(id), params);
    const tooLarge = requestSizeError(fields, this.maxRequestBytes, id);
    if (tooLarge !== undefined) throw tooLarge;
    const encoded: EncodedBody = {};
    this.encoder.encodeBody(fields, encoded);
    const safeToRepeat = kind === undefined || isSafeToRepeat({ kind, condition: params?.condition, fields });
    try {
      const outcome = await retryLoop(
        async () => {
          const raw = await send(this.transport, {
            method,
            path,
            headers: encoded.headers,
            body: encoded.body,
            idempotent: safeToRepeat,
          });
          this.reach.answer();
          const whole = raw.status >= 200 && raw.status < 300 ? jsonObjectOf(raw.body) : undefined;
          const res: DocumentResponse = {
            status: raw.status,
            body: whole ?? parseBody(raw.body),
            raw: raw.body,
            headers: headersToObject(raw.headers),
          };
          if (retriedStatus(res.status)) throw new RetryableAnswer(res);
          if (res.status >= 200 && res.status < 300 && whole === undefined) throw new UnreadableAnswer(res);
          return res;
        },
        {
          policy: this.policy,
          safeToRepeat,
          ...(this.timeoutMs !== undefined && { deadline: performance.now() + this.timeoutMs }),
          failureOf: (err) => this.failureOf(err),
        },
      );
      if (outcome.kind === 'succeeded') return outcome.value;
      if (outcome.kind === 'failed') {
        // The retries are spent (or not allowed): the last 429, 502, 503 or 504 is the answer, a transport error is thrown as it is.
        if (outcome.error instanceof RetryableAnswer) return outcome.error.response;
        if (outcome.error instanceof UnreadableAnswer)
          throw new VespaBulkError('VB_BAD_RESPONSE', outcome.error.message, { status: outcome.error.response.status });
        throw outcome.error;
      }
      throw new VespaBulkError('VB_ABORTED', 'stopped');
    } catch (caught) {
      // Nothing answers at the endpoint, or HTTP/2 was asked for and the server does not speak it: said as such.
      const err = caught instanceof TransportError ? (this.reach.verdict(caught) ?? caught) : caught;
      if (err instanceof VespaBulkError) {
        // Give the error a place so the CLI can say which document failed.
        throw new VespaBulkError(err.code, err.message, { place: { documentId: id }, cause: err });
      }
      throw err;
    }
  }

  /** What the retry policy needs of a failed attempt; undefined for a failure not to retry. */
  private failureOf(err: unknown): AttemptFailure | undefined {
    if (err instanceof RetryableAnswer)
      return { status: err.response.status, retryAfterMs: parseRetryAfter(err.response.headers['retry-after']) };
    if (err instanceof UnreadableAnswer) return { maybeApplied: true };
    // Nothing has ever answered (a wrong endpoint, a service not up) or HTTP/2 is not spoken: said at once rather than after the backoff.
    if (!(err instanceof TransportError) || err.code === 'VB_ABORTED' || this.reach.verdict(err) !== undefined)
      return undefined;
    return { maybeApplied: err.maybeApplied };
  }
}
