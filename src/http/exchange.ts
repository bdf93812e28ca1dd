import type { RequestControl, ResponseHandler, Transport, TransportRequest } from './transport.js';
import { TransportError } from './transport-error.js';

/**
 * The ways a caller sends a request through a `Transport` and takes its answer:
 * - `dispatchTo`: the answer whole, to a receiver object, with no promise or closure per request (the feeder's);
 * - `send`: the answer whole, as a promise;
 * - `exchange`: the body read as it arrives, chunk by chunk, with backpressure (visits, large answers).
 * Each delivers an answer only when it ended as the protocol marks its end: anything cut is a `TransportError`.
 */

/** A whole answer. */
export interface RawResponse {
  status: number;
  /** Lower-case header names and values, flat. */
  headers: readonly string[];
  body: Buffer;
}

/**
 * Where `dispatchTo` delivers an answer. The feeder implements it directly, so its hot path makes no promise,
 * closure or microtask per request; `ctx` is handed back untouched to say which request it was.
 */
export interface ResponseReceiver<C> {
  onRawResponse(ctx: C, res: RawResponse): void;
  onRawError(ctx: C, err: TransportError): void;
}

const noHeaders: readonly string[] = [];
const emptyBody = Buffer.alloc(0);

class Collector<C> implements ResponseHandler {
  private status = 0;
  private headers: readonly string[] = noHeaders;
  /** The body's first piece; the later ones in `more` (most answers come in one DATA frame: no array for them). */
  private first: Buffer | undefined = undefined;
  private more: Buffer[] | undefined = undefined;
  private length = 0;
  constructor(
    private readonly receiver: ResponseReceiver<C>,
    private readonly ctx: C,
  ) {}
  onHeaders(status: number, headers: readonly string[]): void {
    this.status = status;
    this.headers = headers;
  }
  onData(chunk: Buffer): void {
    if (this.first === undefined) this.first = chunk;
    else (this.more ??= []).push(chunk);
    this.length += chunk.length;
  }
  onComplete(): void {
    const first = this.first;
    let body: Buffer = emptyBody;
    if (first !== undefined) body = this.more === undefined ? first : Buffer.concat([first, ...this.more], this.length);
    this.receiver.onRawResponse(this.ctx, { status: this.status, headers: this.headers, body });
  }
  onError(err: TransportError): void {
    this.receiver.onRawError(this.ctx, err);
  }
}

/** Sends one request and reports to `receiver`: every status as a response, only transport failures as errors. */
export function dispatchTo<C>(
  transport: Transport,
  req: TransportRequest,
  receiver: ResponseReceiver<C>,
  ctx: C,
): void {
  transport.dispatch(req, new Collector(receiver, ctx));
}

type Settle = { resolve: (r: RawResponse) => void; reject: (e: unknown) => void };
const settleReceiver: ResponseReceiver<Settle> = {
  onRawResponse: (ctx, res) => ctx.resolve(res),
  onRawError: (ctx, err) => ctx.reject(err),
};

/** `dispatchTo` as a promise: every status resolves; only transport failures reject (`TransportError`). */
export function send(transport: Transport, req: TransportRequest): Promise<RawResponse> {
  return new Promise<RawResponse>((resolve, reject) => dispatchTo(transport, req, settleReceiver, { resolve, reject }));
}

/** Header value by lower-case name (the first, where there are several). */
export function header(headers: readonly string[], name: string): string | undefined {
  for (let i = 0; i + 1 < headers.length; i += 2) if (headers[i] === name) return headers[i + 1];
  return undefined;
}

/** The headers as an object, several values of one name as an array. */
export function headersToObject(headers: readonly string[]): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (let i = 0; i + 1 < headers.length; i += 2) {
    const k = headers[i];
    const v = headers[i + 1];
    const prev = out[k];
    if (prev === undefined) out[k] = v;
    else out[k] = Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

/**
 * Header names and values as a transport takes them (lower-case names, flat), from an object or a flat list;
 * `undefined` values are left out. Made once per kind of request, not per request.
 */
export function headerList(headers: Record<string, string | undefined> | readonly string[] | undefined): string[] {
  const out: string[] = [];
  if (headers === undefined) return out;
  if (Array.isArray(headers)) {
    for (let i = 0; i + 1 < headers.length; i += 2) out.push(String(headers[i]).toLowerCase(), String(headers[i + 1]));
    return out;
  }
  for (const [name, value] of Object.entries(headers as Record<string, string | undefined>))
    if (value !== undefined) out.push(name.toLowerCase(), value);
  return out;
}

/** Parsed JSON body, or `{message: text}` when the body is not JSON (proxies answer HTML). */
export function parseBody(body: Buffer): unknown {
  if (body.length === 0) return {};
  const text = body.toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    return { message: text };
  }
}

/**
 * The body as a JSON object, or undefined when it is not one: what the service writes in every 2xx answer, so that a
 * 2xx body that is not (cut where the protocol could not tell, a proxy's page) is an answer whose outcome is unknown.
 */
export function jsonObjectOf(body: Buffer): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** What `exchange` does with the body, as it arrives. */
export interface BodyReader {
  /** A chunk of the body, at once (synchronous); what it throws fails the exchange and aborts the request. */
  onChunk(chunk: Buffer): void;
  /**
   * Hands on what the chunks since the last call produced: once per event-loop turn, and once more at the end. A
   * returned promise holds the body back until it settles; what it rejects with fails the exchange. `'stop'` (or a
   * promise of it): the reader wants no more, though nothing failed; `read` resolves, the rest of the body is left.
   */
  flush(): void | 'stop' | Promise<void | 'stop'>;
}

/** An answer whose headers have come and whose body is read by `read`, `bytes` or `text`, or left by `cancel`. */
export interface Exchange {
  status: number;
  headers: readonly string[];
  /**
   * Reads the body into `reader` and resolves once it ended whole. Rejects with the `TransportError` of a body cut
   * short (after a last `flush` of what came before the cut, so that what was read whole is handed on), or with
   * what `reader` threw.
   */
  read(reader: BodyReader, maxTurnBytes?: number): Promise<void>;
  /** The whole body (at most `limit` bytes kept; the rest is read and dropped). */
  bytes(limit?: number): Promise<Buffer>;
  /** The whole body as UTF-8 text (at most `limit` bytes of it). */
  text(limit?: number): Promise<string>;
  /** The body's chunks as they arrive, for readers that pull; ends with the error of a body cut short. */
  chunks(): AsyncIterable<Buffer>;
  /** Leaves the body unread: the request is aborted, its connection kept where the protocol allows. */
  cancel(): void;
}

/**
 * Sends `req` and resolves once the answer's headers came, with the body still to read (it is held back until
 * `read`, `bytes` or `text` asks for it). Rejects with a `TransportError` when no answer came.
 */
export function exchange(transport: Transport, req: TransportRequest): Promise<Exchange> {
  return new Promise<Exchange>((resolve, reject) => transport.dispatch(req, new StreamedAnswer(resolve, reject)));
}

class StreamedAnswer implements ResponseHandler, Exchange {
  status = 0;
  headers: readonly string[] = noHeaders;
  private control: RequestControl | undefined;
  private reader: BodyReader | undefined;
  private maxTurnBytes = 1 << 20;
  /** Chunks that came before a reader was attached. */
  private early: Buffer[] = [];
  private ended = false;
  private failure: TransportError | undefined;
  private settled = false;
  private readResolve: (() => void) | undefined;
  private readReject: ((err: unknown) => void) | undefined;
  /** Chunks were handed to the reader since its last flush. */
  private unflushed = false;
  private turnBytes = 0;
  private scheduled: NodeJS.Immediate | undefined;
  /** A flush's promise is pending: the body is held back. */
  private waiting = false;
  /** The flush after the body's end (whole or cut) has been made. */
  private lastFlushed = false;

  constructor(
    private headersResolve: ((e: Exchange) => void) | undefined,
    private headersReject: ((err: unknown) => void) | undefined,
  ) {}

  onStart(control: RequestControl): void {
    this.control = control;
  }

  onHeaders(status: number, headers: readonly string[]): void {
    this.status = status;
    this.headers = headers;
    // Nothing more is read until someone asks for the body.
    this.control?.pause();
    const resolve = this.headersResolve!;
    this.headersResolve = this.headersReject = undefined;
    resolve(this);
  }

  onData(chunk: Buffer): void {
    if (this.settled) return;
    if (this.reader === undefined) {
      this.early.push(chunk);
      return;
    }
    this.take(chunk);
  }

  onComplete(): void {
    this.ended = true;
    if (this.reader !== undefined && !this.waiting) this.runFlush();
  }

  onError(err: TransportError): void {
    if (this.headersReject !== undefined) {
      const reject = this.headersReject;
      this.headersResolve = this.headersReject = undefined;
      reject(err);
      return;
    }
    this.failure ??= err;
    if (this.reader !== undefined && !this.waiting) this.runFlush();
  }

  read(reader: BodyReader, maxTurnBytes = 1 << 20): Promise<void> {
    if (this.reader !== undefined || this.settled) return Promise.reject(new Error('the body is read once'));
    this.reader = reader;
    this.maxTurnBytes = maxTurnBytes;
    return new Promise<void>((resolve, reject) => {
      this.readResolve = resolve;
      this.readReject = reject;
      const early = this.early;
      this.early = [];
      for (const chunk of early) {
        if (this.settled) return;
        this.take(chunk);
      }
      if (this.settled) return;
      if (this.ended || this.failure !== undefined) this.runFlush();
      else this.control?.resume();
    });
  }

  async bytes(limit = Infinity): Promise<Buffer> {
    const chunks: Buffer[] = [];
    let kept = 0;
    await this.read({
      onChunk: (chunk) => {
        if (kept >= limit) return;
        const part = kept + chunk.length > limit ? chunk.subarray(0, limit - kept) : chunk;
        chunks.push(part);
        kept += part.length;
      },
      flush: () => undefined,
    });
    return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, kept);
  }

  async text(limit?: number): Promise<string> {
    return (await this.bytes(limit)).toString('utf8');
  }

  async *chunks(): AsyncIterable<Buffer> {
    const queue: Buffer[] = [];
    let wake: (() => void) | undefined;
    let drained: (() => void) | undefined;
    let end: { error?: unknown } | undefined;
    const read = this.read({
      onChunk: (chunk) => void queue.push(chunk),
      // Held back until the consumer has taken what came.
      flush: () => {
        wake?.();
        return queue.length === 0 ? undefined : new Promise<void>((resolve) => (drained = resolve));
      },
    }).then(
      () => (end = {}),
      (error: unknown) => (end = { error }),
    );
    try {
      for (;;) {
        const chunk = queue.shift();
        if (chunk !== undefined) {
          yield chunk;
          continue;
        }
        const resume = drained;
        drained = undefined;
        resume?.();
        if (end !== undefined) break;
        await new Promise<void>((resolve) => {
          wake = resolve;
          void read.then(() => resolve());
        });
        wake = undefined;
      }
      if (end?.error !== undefined) throw end.error as Error;
    } finally {
      // A consumer that stops early leaves the rest unread.
      if (end === undefined) this.cancel();
    }
  }

  cancel(): void {
    if (this.settled) return;
    this.settle(new TransportError('aborted', 'the body was left unread'));
    this.control?.abort();
  }

  private take(chunk: Buffer): void {
    try {
      this.reader!.onChunk(chunk);
    } catch (err) {
      this.fail(err);
      return;
    }
    this.unflushed = true;
    this.turnBytes += chunk.length;
    if (this.waiting) return;
    if (this.turnBytes >= this.maxTurnBytes) {
      if (this.scheduled !== undefined) clearImmediate(this.scheduled);
      this.runFlush();
    } else this.scheduled ??= setImmediate(() => this.runFlush());
  }

  /** Hands on what was read; then, once the body has ended (whole or cut) and its last flush is done, settles. */
  private runFlush(): void {
    if (this.scheduled !== undefined) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    this.turnBytes = 0;
    if (this.settled || this.waiting) return;
    const done = this.ended || this.failure !== undefined;
    if (this.unflushed || (done && !this.lastFlushed)) {
      this.unflushed = false;
      if (done) this.lastFlushed = true;
      let result: void | 'stop' | Promise<void | 'stop'>;
      try {
        result = this.reader!.flush();
      } catch (err) {
        this.fail(err);
        return;
      }
      if (result === 'stop') {
        this.stop();
        return;
      }
      if (result !== undefined) {
        this.waiting = true;
        this.control?.pause();
        result.then(
          (then) => {
            this.waiting = false;
            if (then === 'stop') {
              this.stop();
              return;
            }
            if (this.settled) return;
            if (this.ended || this.failure !== undefined || this.unflushed) this.runFlush();
            else this.control?.resume();
          },
          (err: unknown) => {
            this.waiting = false;
            this.fail(err);
          },
        );
        return;
      }
    }
    if (this.failure !== undefined) this.settle(this.failure);
    else if (this.ended) this.settle(undefined);
    // Held back by an earlier flush and nothing to wait for now: read on.
    else this.control?.resume();
  }

  /** The reader failed (`err`) or stopped (undefined): the rest of the body is not wanted. */
  private fail(err: unknown): void {
    if (this.settled) return;
    this.settle(err);
    if (!this.ended && this.failure === undefined) this.control?.abort();
  }

  private stop(): void {
    this.fail(undefined);
  }

  private settle(err: unknown): void {
    this.settled = true;
    if (this.scheduled !== undefined) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    const resolve = this.readResolve;
    const reject = this.readReject;
    this.readResolve = this.readReject = undefined;
    if (err === undefined) resolve?.();
    else reject?.(err);
  }
}
