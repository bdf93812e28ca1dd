import type { Dispatcher } from 'undici';
import { classifyStatus, parseRetryAfter, retryDelay } from '../http/retry-delay.js';
import type { VisitBatch, VisitEntry } from './entries.js';
import { ExactlyOnce } from './exactly-once.js';
import { classifyParsedLine, classifyLinePrefix, LineSplitter, putPrefixLength, readStringValue, removePrefixLength, type LineKind } from './jsonl-lines.js';
import type { SliceResumeState, VisitMessage, VisitRetryPolicy } from './options.js';
import { readPlainJson } from './plain-json.js';
import { readBody } from './body-reader.js';
import { streamAccept, visitRequestPath } from './query.js';

/**
 * One slice of a visit: a chain of requests, each continuing from the last token, until the service says
 * the slice is finished. Retries 429/502/503/504 and cut responses from the last token with backoff, and
 * delivers each document once across those resumptions.
 */
export interface SliceVisitorOptions {
  dispatcher: Dispatcher;
  /** Scheme, host and port; an Agent picks its connection by it. */
  origin: string;
  /** Path prefix of the endpoint ('' or '/prefix'). */
  pathPrefix: string;
  visitPath: string;
  query: URLSearchParams;
  slices: number;
  sliceId: number;
  stream: boolean;
  headers: Record<string, string>;
  requestTimeoutMs: number;
  retry: VisitRetryPolicy;
  resume?: SliceResumeState;
  signal?: AbortSignal;
  /** Receives new documents; a returned promise pauses reading this slice's response until it settles. */
  deliver: (batch: VisitBatch) => void | Promise<void>;
  /** The slice's token advanced or the slice ended (for checkpoints). */
  onState?: (visitor: SliceVisitor) => void;
  onMessage?: (message: VisitMessage) => void;
  /** Bytes received, for rates. */
  onBytes?: (n: number) => void;
  /** Injected for tests. */
  random?: () => number;
}

export type SliceStatus = 'running' | 'finished' | 'failed' | 'stopped';

/** How a slice ended; a failed one carries the token to resume it from. */
export interface SliceReport {
  slice: number;
  status: SliceStatus;
  documents: number;
  removes: number;
  percentFinished: number;
  /** Token to continue from (absent when the slice finished or never got one). */
  continuation?: string;
  requests: number;
  retries: number;
  /** Documents the service sent again after a resumption and that were not delivered twice. */
  repeatsSkipped: number;
  error?: string;
  /** HTTP status of the final failure, when it was one. */
  status_code?: number;
}

class RequestFailure extends Error {
  constructor(
    message: string,
    readonly status: number | undefined,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/** The consumer failed (e.g. the output disk is full): not the service's fault, so never retried. */
class DeliveryFailure extends Error {
  constructor(readonly failure: unknown) {
    super('delivery failed');
  }
}

const maxErrorBodyBytes = 64 * 1024;

export class SliceVisitor {
  readonly sliceId: number;
  continuation: string | undefined;
  status: SliceStatus = 'running';
  percentFinished = 0;
  documents = 0;
  removes = 0;
  requests = 0;
  retries = 0;
  error: string | undefined;
  errorStatus: number | undefined;
  readonly exactlyOnce: ExactlyOnce;

  /** Set while a request runs: a new document or token was seen. */
  private progressed = false;
  /**
   * Lines were read (the token and the delivered ids may have moved) but their documents are not handed on
   * yet; a checkpoint waits until this is false, so it never covers a document the output has not got.
   */
  undelivered = false;
  private tokenChanged = false;

  constructor(private readonly options: SliceVisitorOptions) {
    this.sliceId = options.sliceId;
    this.continuation = options.resume?.continuation;
    this.exactlyOnce = new ExactlyOnce(options.resume?.deliveredIds ?? []);
    if (options.resume?.finished) {
      this.status = 'finished';
      this.percentFinished = 100;
    }
  }

  report(): SliceReport {
    return {
      slice: this.sliceId,
      status: this.status,
      documents: this.documents,
      removes: this.removes,
      percentFinished: this.percentFinished,
      ...(this.status !== 'finished' && this.continuation !== undefined && { continuation: this.continuation }),
      requests: this.requests,
      retries: this.retries,
      repeatsSkipped: this.exactlyOnce.repeatsSkipped,
      ...(this.error !== undefined && { error: this.error }),
      ...(this.errorStatus !== undefined && { status_code: this.errorStatus }),
    };
  }

  async run(): Promise<SliceReport> {
    let failuresInARow = 0;
    while (this.status === 'running') {
      if (this.options.signal?.aborted) {
        this.status = 'stopped';
        break;
      }
      this.progressed = false;
      try {
        const next = await this.request();
        failuresInARow = 0;
        if (next === undefined) {
          this.status = 'finished';
          this.percentFinished = 100;
          this.exactlyOnce.finished();
        } else {
          this.continuation = next;
        }
        this.options.onState?.(this);
      } catch (err) {
        if (err instanceof DeliveryFailure) {
          this.status = 'stopped';
          throw err.failure;
        }
        if (this.options.signal?.aborted) {
          this.status = 'stopped';
          break;
        }
        const failure = toFailure(err);
        // What came after the last token will come again: remember it so it is not delivered twice.
        this.exactlyOnce.cut();
        if (this.progressed) failuresInARow = 0;
        failuresInARow++;
        const delay =
          failuresInARow > this.options.retry.maxAttempts
            ? 0
            : retryDelay(
                { attempt: failuresInARow, status: failure.status, safeToRepeat: true, retryAfterMs: failure.retryAfterMs, random: this.options.random },
                this.options.retry,
              );
        if (delay === 0) {
          this.status = 'failed';
          this.error = failure.message;
          this.errorStatus = failure.status;
          this.options.onState?.(this);
          break;
        }
        this.retries++;
        this.options.onMessage?.({
          slice: this.sliceId,
          severity: 'warning',
          text: `slice ${this.sliceId}: ${failure.message}; retrying in ${delay} ms (attempt ${failuresInARow} of ${this.options.retry.maxAttempts})`,
        });
        this.options.onState?.(this);
        try {
          await sleep(delay, this.options.signal);
        } catch {
          this.status = 'stopped';
        }
      }
    }
    this.options.onState?.(this);
    return this.report();
  }

  /** One request; resolves to the next token, or undefined when the slice is finished. */
  private async request(): Promise<string | undefined> {
    const o = this.options;
    const path = o.pathPrefix + visitRequestPath(o.visitPath, o.query, o.slices, o.sliceId, this.continuation);
    this.requests++;
    let response: Dispatcher.ResponseData;
    try {
      response = await o.dispatcher.request({
        origin: o.origin,
        method: 'GET',
        path,
        headers: { accept: o.stream ? streamAccept : 'application/json', ...o.headers },
        signal: o.signal,
        headersTimeout: o.requestTimeoutMs,
        bodyTimeout: o.requestTimeoutMs,
      });
    } catch (err) {
      throw new RequestFailure(`request failed: ${describe(err)}`, undefined);
    }
    const { statusCode, headers, body } = response;
    if (statusCode < 200 || statusCode > 299) {
      const text = await readLimited(body, maxErrorBodyBytes).catch(() => '');
      const kind = classifyStatus(statusCode);
      throw new RequestFailure(`HTTP ${statusCode}${kind === 'final' || text !== '' ? `: ${messageOf(text)}` : ''}`, statusCode, parseRetryAfter(headers['retry-after']));
    }
    const contentType = String(headers['content-type'] ?? '');
    try {
      if (/jsonl|ndjson/i.test(contentType)) return await this.readJsonl(body);
      if (o.stream) return await this.readPlain(body);
      return await this.readPage(body);
    } catch (err) {
      body.destroy();
      if (err instanceof RequestFailure || err instanceof DeliveryFailure) throw err;
      throw new RequestFailure(`response cut off: ${describe(err)}`, undefined);
    }
  }

  private async readJsonl(body: Dispatcher.ResponseData['body']): Promise<string | undefined> {
    const o = this.options;
    const splitter = new LineSplitter();
    const tail: { statsSeen: boolean; ended: boolean; token: string | undefined; error: string | undefined } = {
      statsSeen: false,
      ended: false,
      token: undefined,
      error: undefined,
    };
    let entries: VisitEntry[] = [];
    const onLine = (buf: Buffer, start: number, end: number): void => this.onJsonlLine(buf, start, end, entries, tail);
    await readBody(
      body,
      (chunk) => {
        o.onBytes?.(chunk.length);
        this.undelivered = true;
        splitter.push(chunk, onLine);
      },
      () => {
        this.undelivered = false;
        const batch = entries;
        entries = [];
        const result = batch.length === 0 ? undefined : this.deliver(batch);
        if (this.tokenChanged) {
          this.tokenChanged = false;
          o.onState?.(this);
        }
        return result;
      },
    );
    const rest = splitter.takeRest();
    if (rest !== undefined) onLine(rest, 0, rest.length);
    if (entries.length > 0) await this.deliver(entries);
    if (!tail.ended) throw new RequestFailure('response cut off before its final continuation line', undefined);
    if (tail.error !== undefined) throw new RequestFailure(`the service reported: ${tail.error}`, undefined);
    return tail.token;
  }

  private onJsonlLine(
    buf: Buffer,
    start: number,
    end: number,
    entries: VisitEntry[],
    tail: { statsSeen: boolean; ended: boolean; token: string | undefined; error: string | undefined },
  ): void {
    if (tail.ended) {
      // Anything after the final continuation line means the previous one was not final.
      tail.ended = false;
    }
    let kind: LineKind = classifyLinePrefix(buf, start, end);
    let id: string | undefined;
    let parsed: Record<string, unknown> | undefined;
    if (kind === 'put') id = readStringValue(buf, start + putPrefixLength, end);
    else if (kind === 'remove') id = readStringValue(buf, start + removePrefixLength, end);
    if ((kind === 'put' || kind === 'remove') && id === undefined) kind = 'other';
    if (kind !== 'put' && kind !== 'remove') {
      try {
        parsed = JSON.parse(buf.toString('utf8', start, end)) as Record<string, unknown>;
      } catch {
        throw new RequestFailure(`unparseable line in the response: ${buf.toString('utf8', start, Math.min(end, start + 200))}`, undefined);
      }
      if (kind === 'other') kind = classifyParsedLine(parsed);
    }
    switch (kind) {
      case 'put':
      case 'remove':
      case 'document': {
        const shape = parsed === undefined || kind !== 'document' ? 'feed' : 'document';
        const docId = id ?? ((parsed?.put ?? parsed?.remove ?? parsed?.id) as string);
        const docKind = kind === 'remove' ? 'remove' : 'put';
        this.accept({ kind: docKind, id: docId, shape, buf, start, end }, entries);
        return;
      }
      case 'continuation': {
        const c = parsed!.continuation as { token?: unknown; percentFinished?: unknown } | string | undefined;
        const token = typeof c === 'string' ? c : typeof c?.token === 'string' ? c.token : undefined;
        const percent = typeof c === 'object' && typeof c?.percentFinished === 'number' ? c.percentFinished : undefined;
        if (percent !== undefined) this.percentFinished = percent;
        if (token !== undefined && token !== this.continuation) {
          this.continuation = token;
          this.exactlyOnce.tokenAdvanced();
          this.progressed = true;
          this.tokenChanged = true;
        }
        // The last line of a complete response is a continuation (after sessionStats, but an older server
        // may send none): a body that ends cleanly on one is complete; a cut one ends in an error or elsewhere.
        tail.ended = true;
        tail.token = token;
        return;
      }
      case 'sessionStats':
        tail.statsSeen = true;
        return;
      case 'message': {
        const m = parsed!.message as { text?: unknown; severity?: unknown } | string;
        const text = typeof m === 'string' ? m : String(m?.text ?? '');
        const severity = typeof m === 'object' && (m.severity === 'warning' || m.severity === 'error') ? m.severity : 'info';
        if (severity === 'error') tail.error = text;
        this.options.onMessage?.({ slice: this.sliceId, severity, text: `slice ${this.sliceId}: ${text}` });
        return;
      }
      case 'sessionTrace':
        this.options.onMessage?.({ slice: this.sliceId, severity: 'info', text: `slice ${this.sliceId} trace: ${JSON.stringify(parsed!.sessionTrace)}` });
        return;
      default:
        this.options.onMessage?.({ slice: this.sliceId, severity: 'warning', text: `slice ${this.sliceId}: ignored an unknown line: ${buf.toString('utf8', start, Math.min(end, start + 200))}` });
    }
  }

  /** Hands documents on; returns a promise only when the consumer asks to wait. */
  private deliver(entries: VisitEntry[]): void | Promise<void> {
    let result: void | Promise<void>;
    try {
      result = this.options.deliver({ slice: this.sliceId, entries });
    } catch (err) {
      throw new DeliveryFailure(err);
    }
    if (result === undefined) return;
    return result.catch((err: unknown) => {
      throw new DeliveryFailure(err);
    });
  }

  private accept(entry: VisitEntry, entries: VisitEntry[]): void {
    // Only new documents are progress: a response always cut before its next token would otherwise retry forever.
    if (!this.exactlyOnce.accept(entry.id)) return;
    this.progressed = true;
    if (entry.kind === 'remove') this.removes++;
    else this.documents++;
    entries.push(entry);
  }

  /** A streamed plain JSON object: parsed incrementally. */
  private async readPlain(body: Dispatcher.ResponseData['body']): Promise<string | undefined> {
    const o = this.options;
    const counted = countBytes(body as AsyncIterable<Buffer>, o.onBytes);
    const tail = await readPlainJson(counted, (items) => {
      const entries: VisitEntry[] = [];
      for (const item of items) this.acceptItem(item, entries);
      if (entries.length > 0) return this.deliver(entries);
    });
    return this.finishPlain(tail.continuation, tail.message);
  }

  /** A page of non-streamed visiting: bounded by wantedDocumentCount, so parsed whole. */
  private async readPage(body: Dispatcher.ResponseData['body']): Promise<string | undefined> {
    const chunks: Buffer[] = [];
    for await (const chunk of body as AsyncIterable<Buffer>) {
      this.options.onBytes?.(chunk.length);
      chunks.push(chunk);
    }
    let page: { documents?: unknown[]; continuation?: unknown; message?: unknown };
    try {
      page = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof page;
    } catch {
      throw new RequestFailure('response cut off or not JSON', undefined);
    }
    const entries: VisitEntry[] = [];
    for (const item of page.documents ?? []) this.acceptItem(item, entries);
    if (entries.length > 0) await this.deliver(entries);
    return this.finishPlain(typeof page.continuation === 'string' ? page.continuation : undefined, typeof page.message === 'string' ? page.message : undefined);
  }

  private finishPlain(token: string | undefined, message: string | undefined): string | undefined {
    if (message !== undefined) this.options.onMessage?.({ slice: this.sliceId, severity: 'info', text: `slice ${this.sliceId}: ${message}` });
    if (token !== undefined) {
      this.exactlyOnce.tokenAdvanced();
      this.progressed = true;
    }
    return token;
  }

  private acceptItem(item: unknown, entries: VisitEntry[]): void {
    const o = item as Record<string, unknown> | null;
    if (o === null || typeof o !== 'object') return;
    const buf = Buffer.from(JSON.stringify(o));
    if (typeof o.remove === 'string') this.accept({ kind: 'remove', id: o.remove, shape: 'feed', buf, start: 0, end: buf.length }, entries);
    else if (typeof o.put === 'string') this.accept({ kind: 'put', id: o.put, shape: 'feed', buf, start: 0, end: buf.length }, entries);
    else if (typeof o.id === 'string') this.accept({ kind: 'put', id: o.id, shape: 'document', buf, start: 0, end: buf.length }, entries);
  }
}

async function* countBytes(body: AsyncIterable<Buffer>, onBytes: ((n: number) => void) | undefined): AsyncIterable<Buffer> {
  for await (const chunk of body) {
    onBytes?.(chunk.length);
    yield chunk;
  }
}

async function readLimited(body: AsyncIterable<Buffer>, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const chunk of body) {
    if (n < limit) chunks.push(chunk);
    n += chunk.length;
  }
  return Buffer.concat(chunks).toString('utf8').slice(0, limit);
}

function messageOf(text: string): string {
  try {
    const body = JSON.parse(text) as { message?: unknown };
    if (typeof body.message === 'string') return body.message;
  } catch {
    // not JSON: the text itself says what happened
  }
  return text.trim().slice(0, 500) || '(empty body)';
}

function toFailure(err: unknown): RequestFailure {
  if (err instanceof RequestFailure) return err;
  return new RequestFailure(describe(err), undefined);
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === 'string' ? `${err.message} (${code})` : err.message;
  }
  return String(err);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Error('aborted'));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new Error('aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
