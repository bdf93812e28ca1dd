import { classifyStatus, isOverloaded, parseRetryAfter, type RetryPolicy } from '../http/retry-delay.js';
import { retryLoop, type AttemptFailure, type RetryEvent, type RetryOutcome } from '../http/retry-loop.js';
import type { VisitEntry } from '../document/visit-entry.js';
import type { VisitBatch } from './visit-batch.js';
import { ExactlyOnce } from './exactly-once.js';
import {
  classifyParsedLine,
  classifyLinePrefix,
  LineSplitter,
  putPrefixLength,
  readStringValue,
  removePrefixLength,
  type LineKind,
} from './jsonl-lines.js';
import type { SliceResumeState, VisitMessage } from './options.js';
import { readPlainJson, type PlainDocument } from './plain-json.js';
import { chainKey, streamAccept, visitRequestPath } from './query.js';
import { isVespaBulkError } from '../core/errors.js';
import type { Reachability } from '../http/reachability.js';
import type { Transport } from '../http/transport.js';
import { exchange, header, headerList, type Exchange } from '../http/exchange.js';
import { TransportError } from '../http/transport-error.js';
import { answerMessage, statusMessage } from '../document/answer-message.js';

/**
 * One slice of a visit: a chain of requests, each continuing from the last token, until the service says
 * the slice is finished. Retries 429/502/503/504 and cut responses from the last token with backoff, and
 * delivers each document once across those resumptions.
 */
export interface SliceVisitorOptions {
  transport: Transport;
  /** The endpoint, for messages. */
  endpoint: string;
  /** Path prefix of the endpoint ('' or '/prefix'). */
  pathPrefix: string;
  visitPath: string;
  query: URLSearchParams;
  slices: number;
  sliceId: number;
  /** Set when a whole-cluster visit goes through both bucket spaces: which one this chain visits. */
  bucketSpace?: string;
  /** Set when the visit goes through several content clusters: which one this chain visits (its query names it). */
  cluster?: string;
  stream: boolean;
  headers: Record<string, string>;
  requestTimeoutMs: number;
  retry: RetryPolicy;
  resume?: SliceResumeState;
  signal?: AbortSignal;
  /** Receives new documents; a returned promise pauses reading this slice's response until it settles. */
  deliver: (batch: VisitBatch) => void | Promise<void>;
  /** The slice's token advanced or the slice ended (for checkpoints). */
  onState?: (visitor: SliceVisitor) => void;
  onMessage?: (message: VisitMessage) => void;
  /**
   * A request was answered 429 or 503 (the cluster, or something in front of it, says stop) and is to be retried:
   * the visit's search takes it as the feed's takes a 429, and runs fewer slices at once.
   */
  onThrottled?: () => void;
  /** Bytes received, for rates. */
  onBytes?: (n: number) => void;
  /** Injected for tests. */
  random?: () => number;
  /**
   * Shared by the slices of one visit: whether a failure ends the visit at once (VB_UNREACHABLE before any answer,
   * VB_PROTOCOL) instead of being retried.
   */
  reach?: Reachability;
}

/**
 * Where a slice stands; `failed` slices carry their continuation token in the report. `waiting`: not started yet,
 * or parked by the visit's in-flight limit (then with the token it resumes from).
 */
export type SliceStatus = 'waiting' | 'running' | 'finished' | 'failed' | 'stopped';

/** How a slice ended; a failed one carries the token to resume it from. */
export interface SliceReport {
  slice: number;
  /** Present when a whole-cluster visit went through both bucket spaces: the space of this chain. */
  bucketSpace?: string;
  /** Present when the visit went through several content clusters: the cluster of this chain. */
  cluster?: string;
  status: SliceStatus;
  documents: number;
  removes: number;
  percentFinished: number;
  /** Token to continue from (absent when the slice finished or never got one). */
  continuation?: string;
  requests: number;
  retries: number;
  /** Times the chain was parked by the visit's in-flight limit (and resumed from its token later). */
  parks: number;
  /** Documents the service sent again after a resumption and that were not delivered twice. */
  repeatsSkipped: number;
  error?: string;
  /** HTTP status of the final failure, when it was one. */
  status_code?: number;
}

/** A chain's resume state with the documents delivered for it in this run: what a checkpoint saves of it. */
export type ChainState = SliceResumeState & { documents: number };

/** The saved states of `chains`, by key (see `SliceVisitor.savedState`). */
export function savedStates(chains: Iterable<SliceVisitor>): Record<string, ChainState> {
  const out: Record<string, ChainState> = {};
  for (const s of chains) out[s.key] = s.savedState();
  return out;
}

/**
 * Resolves once no chain holds lines read but not handed on: they are handed on within a turn of the event loop
 * (a checkpoint read after it covers no document the output has not got). Gives up after 100 turns.
 */
export async function linesHandedOn(chains: Iterable<SliceVisitor>): Promise<void> {
  for (let turns = 0; turns < 100 && [...chains].some((s) => s.hasUndelivered()); turns++)
    await new Promise((r) => setImmediate(r));
}

/** What the lines of one JSONL answer said of its end. */
interface JsonlTail {
  /** Document and tombstone lines, repeats included. */
  documents: number;
  /** `documentCount` of its `sessionStats` line (-1 when the line has none); undefined until the line came. */
  statsCount: number | undefined;
  /** The last line read was a continuation. */
  ended: boolean;
  token: string | undefined;
  error: string | undefined;
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

/**
 * Why a request stopped though nothing went wrong with the service, so it is never retried: the chain was asked to
 * park and stopped at a continuation token, or the consumer failed (e.g. the output disk is full) with `error`.
 */
type Halt = { kind: 'parked' } | { kind: 'deliveryFailed'; error: unknown };

/**
 * What one request came to: the token to continue from (undefined: the slice is finished), or a halt. The retry
 * loop takes either as the attempt's result; only a thrown `RequestFailure` (or a transport's error) is retried.
 */
type RequestOutcome = { kind: 'answered'; token: string | undefined } | Halt;

const parked: Halt = { kind: 'parked' };

/** A delivery: done (undefined), failed, or under way while the consumer asks to wait. */
type Delivery = Halt | undefined | Promise<Halt | undefined>;

function isHalt(delivery: Delivery): delivery is Halt {
  return delivery !== undefined && 'kind' in delivery;
}

const maxErrorBodyBytes = 64 * 1024;

export class SliceVisitor {
  readonly sliceId: number;
  private readonly bucketSpace: string | undefined;
  private readonly cluster: string | undefined;
  /** The chain's key in checkpoints and `resumeFrom`. */
  readonly key: string;
  /** How messages name the chain: `slice 3`, `slice 3 (global)`, or `cluster 'a' slice 3` of several clusters. */
  private readonly label: string;
  /** The token the next request continues from (none: from the beginning). */
  private continuation: string | undefined;
  private state: SliceStatus = 'waiting';
  private percent = 0;
  /** Counts of this process, for the report and the progress line. */
  private readonly tally = { documents: 0, removes: 0, requests: 0, retries: 0, parks: 0 };
  private error: string | undefined;
  private errorStatus: number | undefined;
  /** Whether the chain ran in this process (its state may differ from the one it was resumed from). */
  private started = false;
  private readonly exactlyOnce: ExactlyOnce;
  /** The headers of every request of the chain: made once, so the transport encodes them once. */
  private readonly requestHeaders: readonly string[];

  /** Set while a request runs: a new document or token was seen. */
  private progressed = false;
  /**
   * Lines were read (the token and the delivered ids may have moved) but their documents are not handed on
   * yet; a checkpoint waits until this is false, so it never covers a document the output has not got.
   */
  private undelivered = false;
  private tokenChanged = false;
  /** Asked to stop at the next continuation token (the visit holds fewer chains in flight). */
  private parkAsked = false;
  /** A token arrived while parking was asked: the rest of the response is left unread, and the chain stops. */
  private parkNow = false;

  constructor(private readonly options: SliceVisitorOptions) {
    this.sliceId = options.sliceId;
    this.bucketSpace = options.bucketSpace;
    this.cluster = options.cluster;
    this.key = chainKey(options.sliceId, options.bucketSpace, options.cluster);
    const label = `slice ${options.sliceId}${options.bucketSpace === undefined ? '' : ` (${options.bucketSpace})`}`;
    this.label = options.cluster === undefined ? label : `cluster '${options.cluster}' ${label}`;
    this.continuation = options.resume?.continuation;
    this.exactlyOnce = new ExactlyOnce(options.resume?.deliveredIds ?? []);
    this.requestHeaders = headerList({
      accept: options.stream ? streamAccept : 'application/json',
      ...options.headers,
    });
    if (options.resume?.finished) {
      this.state = 'finished';
      this.percent = 100;
    }
  }

  /** Where the chain stands now. */
  get status(): SliceStatus {
    return this.state;
  }

  /** How far the service says the chain got (100 once finished). */
  get percentFinished(): number {
    return this.percent;
  }

  /** Documents delivered in this process. */
  get documents(): number {
    return this.tally.documents;
  }

  /** Tombstones delivered in this process. */
  get removes(): number {
    return this.tally.removes;
  }

  /** Requests retried in this process. */
  get retries(): number {
    return this.tally.retries;
  }

  /** Whether the chain waits to run: not started yet, or parked (then it continues from its token). */
  isWaiting(): boolean {
    return this.state === 'waiting';
  }

  /** Whether the chain has progress to continue from: a token, or documents delivered after one to skip. */
  hasBegun(): boolean {
    return this.continuation !== undefined || this.exactlyOnce.pendingIds().length > 0;
  }

  /** Whether the chain is done: nothing more is requested for it. */
  isFinished(): boolean {
    return this.state === 'finished';
  }

  /** Whether the chain ran in this process (its state may differ from the one it was resumed from). */
  hasStarted(): boolean {
    return this.started;
  }

  /** Whether lines were read whose documents are not handed on yet (a checkpoint waits until they are). */
  hasUndelivered(): boolean {
    return this.undelivered;
  }

  /** Documents and tombstones delivered in this process. */
  delivered(): number {
    return this.tally.documents + this.tally.removes;
  }

  /**
   * Where a resumed chain continues: finished, or from its token (none: from the beginning) skipping the ids
   * delivered after it. The state a checkpoint saves for the chain.
   */
  resumeState(): SliceResumeState {
    if (this.isFinished()) return { finished: true };
    return {
      ...(this.continuation !== undefined && { continuation: this.continuation }),
      deliveredIds: this.exactlyOnce.pendingIds(),
    };
  }

  /**
   * What a checkpoint saves of the chain: its resume state, with the documents it delivered in this process (the
   * delivered ids last, as they may be many).
   */
  savedState(): ChainState {
    const { deliveredIds, ...place } = this.resumeState();
    return { ...place, documents: this.delivered(), ...(deliveredIds !== undefined && { deliveredIds }) };
  }

  report(): SliceReport {
    return {
      slice: this.sliceId,
      ...(this.bucketSpace !== undefined && { bucketSpace: this.bucketSpace }),
      ...(this.cluster !== undefined && { cluster: this.cluster }),
      status: this.status,
      documents: this.tally.documents,
      removes: this.tally.removes,
      percentFinished: this.percentFinished,
      ...(this.state !== 'finished' && this.continuation !== undefined && { continuation: this.continuation }),
      requests: this.tally.requests,
      retries: this.tally.retries,
      parks: this.tally.parks,
      repeatsSkipped: this.exactlyOnce.repeatsSkipped,
      ...(this.error !== undefined && { error: this.error }),
      ...(this.errorStatus !== undefined && { status_code: this.errorStatus }),
    };
  }

  /**
   * Asks a running chain to stop at its next continuation token (`wanted`), or to go on after all. A parked chain
   * is `waiting`; `run()` resumes it from that token. With JSONL the service sends tokens as it goes, so the chain
   * stops soon; otherwise at the end of its current request.
   */
  park(wanted = true): void {
    if (this.state === 'running') this.parkAsked = wanted;
  }

  /**
   * Runs the chain until it is finished, fails for good, is stopped, or parks (`status` says which). A chain that
   * is `waiting` may be run again: it continues from its token.
   */
  async run(): Promise<SliceReport> {
    const o = this.options;
    if (this.state !== 'waiting') return this.report();
    this.state = 'running';
    this.started = true;
    this.parkAsked = false;
    this.parkNow = false;
    while (this.state === 'running') {
      let outcome: RetryOutcome<RequestOutcome>;
      try {
        outcome = await retryLoop(
          () => {
            this.progressed = false;
            return this.request();
          },
          {
            policy: o.retry,
            safeToRepeat: true,
            signal: o.signal,
            random: o.random,
            failureOf: (err) => this.failureOf(err),
            onRetry: (retry) => this.onRetry(retry),
          },
        );
      } catch (err) {
        if (isVespaBulkError(err, 'VB_UNREACHABLE') || isVespaBulkError(err, 'VB_PROTOCOL')) {
          this.state = 'failed';
          this.error = err.message;
          o.onState?.(this);
        }
        throw err;
      }
      if (outcome.kind === 'aborted') {
        this.state = 'stopped';
        break;
      }
      if (outcome.kind === 'failed') {
        const failure = toFailure(outcome.error);
        // What came after the last token would come again on a resumption: remember it.
        this.exactlyOnce.cut();
        this.state = 'failed';
        this.error = failure.message;
        this.errorStatus = failure.status;
        o.onState?.(this);
        break;
      }
      // A halt is what the attempt returned, not a failure: the loop hands it back without retrying.
      const step = outcome.value;
      if (step.kind === 'parked') {
        // What came after the token (in the chunk that held it) was not handed on, and comes again from it.
        this.exactlyOnce.cut();
        this.state = 'waiting';
        this.tally.parks++;
        break;
      }
      if (step.kind === 'deliveryFailed') {
        this.state = 'stopped';
        throw step.error;
      }
      const next = step.token;
      if (next === undefined) {
        this.state = 'finished';
        this.percent = 100;
        this.exactlyOnce.finished();
      } else {
        this.continuation = next;
        // Between requests there is nothing unread: park here.
        if (this.parkAsked) {
          this.state = 'waiting';
          this.tally.parks++;
        }
      }
      o.onState?.(this);
    }
    o.onState?.(this);
    return this.report();
  }

  /** What the retry policy needs of a failed request; undefined for what is never retried (rethrown as it is). */
  private failureOf(err: unknown): AttemptFailure | undefined {
    if (isVespaBulkError(err, 'VB_UNREACHABLE') || isVespaBulkError(err, 'VB_PROTOCOL')) return undefined;
    const failure = toFailure(err);
    return { status: failure.status, retryAfterMs: failure.retryAfterMs, progressed: this.progressed };
  }

  private onRetry(retry: RetryEvent): void {
    // What came after the last token will come again: remember it so it is not delivered twice.
    this.exactlyOnce.cut();
    this.tally.retries++;
    const status = toFailure(retry.error).status;
    if (isOverloaded(status)) this.options.onThrottled?.();
    this.options.onMessage?.({
      slice: this.sliceId,
      severity: 'warning',
      text: `${this.label}: ${toFailure(retry.error).message}; retrying in ${retry.delayMs} ms (attempt ${retry.attempt} of ${retry.maxRetries})`,
    });
    this.options.onState?.(this);
  }

  /** One request; resolves to the next token (undefined when the slice is finished), or to why it halted. */
  private async request(): Promise<RequestOutcome> {
    const o = this.options;
    const path = o.pathPrefix + visitRequestPath(o.visitPath, o.query, o.slices, o.sliceId, this.continuation);
    this.tally.requests++;
    let answer: Exchange;
    try {
      answer = await exchange(o.transport, {
        method: 'GET',
        path,
        headers: this.requestHeaders,
        signal: o.signal,
        timeoutMs: o.requestTimeoutMs,
      });
    } catch (err) {
      if (err instanceof TransportError && !o.signal?.aborted) {
        const verdict = o.reach?.verdict(err);
        if (verdict !== undefined) throw verdict;
      }
      throw new RequestFailure(`request failed: ${describe(err)}`, undefined);
    }
    o.reach?.answer();
    const status = answer.status;
    if (status < 200 || status > 299) {
      const text = await answer.text(maxErrorBodyBytes).catch(() => '');
      const kind = classifyStatus(status);
      throw new RequestFailure(
        statusMessage(status, kind === 'final' || text !== '' ? messageOf(text) : undefined),
        status,
        parseRetryAfter(header(answer.headers, 'retry-after')),
      );
    }
    const contentType = header(answer.headers, 'content-type') ?? '';
    let outcome: RequestOutcome;
    try {
      outcome = /jsonl|ndjson/i.test(contentType) ? await this.readJsonl(answer) : await this.readPlain(answer);
    } catch (err) {
      answer.cancel();
      if (err instanceof RequestFailure) throw err;
      throw new RequestFailure(`response cut off: ${describe(err)}`, undefined);
    }
    // A halt leaves the rest of the answer unread.
    if (outcome.kind !== 'answered') answer.cancel();
    return outcome;
  }

  /**
   * A streamed JSONL answer, read line by line as it arrives. It is whole only when it ends as the container's
   * handler ends every one: the `sessionStats` line, whose `documentCount` is the number of documents and
   * tombstones it sent, then optional trace and message lines, then a continuation line, last. Anything else was
   * cut (however cleanly the connection ended) and the slice goes on from its last token.
   */
  private async readJsonl(answer: Exchange): Promise<RequestOutcome> {
    const o = this.options;
    const splitter = new LineSplitter();
    const tail: JsonlTail = { documents: 0, statsCount: undefined, ended: false, token: undefined, error: undefined };
    let entries: VisitEntry[] = [];
    let halt: Halt | undefined;
    /** Stops the read (the rest of the response is left) when there is a halt. */
    const stopOn = (h: Halt | undefined): 'stop' | undefined => {
      if (h === undefined) return undefined;
      halt = h;
      return 'stop';
    };
    const onLine = (buf: Buffer, start: number, end: number): void => this.onJsonlLine(buf, start, end, entries, tail);
    // Chunks that came while a delivery was pending (the transport keeps taking what is already in the window):
    // left unparsed until it is done, so the token and the delivered ids never run ahead of the documents handed
    // on, and a checkpoint taken meanwhile holds only what the output holds.
    let held: Buffer[] | undefined;
    let delivering = false;
    await answer.read({
      onChunk: (chunk) => {
        o.onBytes?.(chunk.length);
        if (delivering) {
          (held ??= []).push(chunk);
          return;
        }
        this.undelivered = true;
        splitter.push(chunk, onLine);
      },
      flush: () => {
        if (held !== undefined) {
          const chunks = held;
          held = undefined;
          for (const chunk of chunks) splitter.push(chunk, onLine);
        }
        this.undelivered = false;
        const batch = entries;
        entries = [];
        const delivery = batch.length === 0 ? undefined : this.deliver(batch);
        if (isHalt(delivery)) return stopOn(delivery);
        if (this.tokenChanged) {
          this.tokenChanged = false;
          o.onState?.(this);
        }
        // Parked at the token just passed on: once its documents are delivered, the response is left.
        const park = this.parkNow ? parked : undefined;
        if (delivery === undefined) return stopOn(park);
        delivering = true;
        return delivery.then((failed) => {
          delivering = false;
          return stopOn(failed ?? park);
        });
      },
    });
    if (halt !== undefined) return halt;
    const rest = splitter.takeRest();
    if (rest !== undefined) {
      // The handler ends every line with a newline: a last line without one was cut, unless it is whole JSON
      // (its kind is told by its first bytes, so a cut one must not get that far).
      if (!isJsonText(rest))
        throw new RequestFailure(
          `response cut off inside a line: ${rest.toString('utf8', 0, Math.min(rest.length, 200))}`,
          undefined,
        );
      onLine(rest, 0, rest.length);
    }
    if (entries.length > 0) {
      const failed = await this.deliver(entries);
      if (failed !== undefined) return failed;
    }
    if (tail.error !== undefined) throw new RequestFailure(`the service reported: ${tail.error}`, undefined);
    if (tail.statsCount === undefined || !tail.ended)
      throw new RequestFailure(
        'response cut off: it ended without its closing sessionStats and continuation lines',
        undefined,
      );
    if (tail.statsCount >= 0 && tail.statsCount !== tail.documents) {
      throw new RequestFailure(
        `response cut off: its sessionStats counts ${tail.statsCount} documents, ${tail.documents} came`,
        undefined,
      );
    }
    return { kind: 'answered', token: tail.token };
  }

  private onJsonlLine(buf: Buffer, start: number, end: number, entries: VisitEntry[], tail: JsonlTail): void {
    // Parking at the token just read: what follows it is left for the resumption.
    if (this.parkNow) return;
    // Anything after a continuation line means it was not the final one.
    tail.ended = false;
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
        throw new RequestFailure(
          `unparseable line in the response: ${buf.toString('utf8', start, Math.min(end, start + 200))}`,
          undefined,
        );
      }
      if (kind === 'other') kind = classifyParsedLine(parsed);
    }
    switch (kind) {
      case 'put':
      case 'remove':
      case 'document': {
        tail.documents++;
        const shape = parsed === undefined || kind !== 'document' ? 'feed' : 'document';
        const docId = id ?? ((parsed?.put ?? parsed?.remove ?? parsed?.id) as string);
        const docKind = kind === 'remove' ? 'remove' : 'put';
        this.accept({ kind: docKind, id: docId, shape, buf, start, end }, entries);
        return;
      }
      case 'continuation': {
        const c = parsed!.continuation as { token?: unknown; percentFinished?: unknown } | string | undefined;
        const token = continuationToken(c);
        const percent = typeof c === 'object' && typeof c?.percentFinished === 'number' ? c.percentFinished : undefined;
        if (percent !== undefined) this.percent = percent;
        if (token !== undefined && token !== this.continuation) {
          this.continuation = token;
          this.exactlyOnce.tokenAdvanced();
          this.progressed = true;
          this.tokenChanged = true;
          if (this.parkAsked) this.parkNow = true;
        }
        // The last line of a complete response is a continuation (after sessionStats, but an older server
        // may send none): a body that ends cleanly on one is complete; a cut one ends in an error or elsewhere.
        tail.ended = true;
        tail.token = token;
        return;
      }
      case 'sessionStats': {
        // Documents after it would not be in its count: a second one, or documents after it, are not the end.
        const count = (parsed!.sessionStats as { documentCount?: unknown } | undefined)?.documentCount;
        tail.statsCount = typeof count === 'number' ? count : -1;
        return;
      }
      case 'message': {
        const m = parsed!.message as { text?: unknown; severity?: unknown } | string;
        const given = typeof m === 'string' ? m : m?.text;
        const text = messageText(given);
        const severity =
          typeof m === 'object' && (m.severity === 'warning' || m.severity === 'error') ? m.severity : 'info';
        if (severity === 'error') tail.error = text;
        this.options.onMessage?.({ slice: this.sliceId, severity, text: `${this.label}: ${text}` });
        return;
      }
      case 'sessionTrace':
        this.options.onMessage?.({
          slice: this.sliceId,
          severity: 'info',
          text: `${this.label} trace: ${JSON.stringify(parsed!.sessionTrace)}`,
        });
        return;
      default:
        this.options.onMessage?.({
          slice: this.sliceId,
          severity: 'warning',
          text: `${this.label}: ignored an unknown line: ${buf.toString('utf8', start, Math.min(end, start + 200))}`,
        });
    }
  }

  /** Hands documents on; returns a promise only when the consumer asks to wait. What the consumer throws is a halt. */
  private deliver(entries: VisitEntry[]): Delivery {
    let result: void | Promise<void>;
    try {
      result = this.options.deliver({ slice: this.sliceId, entries });
    } catch (err) {
      return { kind: 'deliveryFailed', error: err };
    }
    if (result === undefined) return;
    return result.then(
      () => undefined,
      (err: unknown): Halt => ({ kind: 'deliveryFailed', error: err }),
    );
  }

  private accept(entry: VisitEntry, entries: VisitEntry[]): void {
    // Only new documents are progress: a response always cut before its next token would otherwise retry forever.
    if (!this.exactlyOnce.accept(entry.id)) return;
    this.progressed = true;
    if (entry.kind === 'remove') this.tally.removes++;
    else this.tally.documents++;
    entries.push(entry);
  }

  /**
   * The plain JSON object, streamed or one page of non-streamed visiting: parsed incrementally either way,
   * so that the documents keep their bytes' meaning (see plain-json.ts) and a long response is never held whole.
   */
  private async readPlain(answer: Exchange): Promise<RequestOutcome> {
    const o = this.options;
    const counted = countBytes(answer.chunks(), o.onBytes);
    let halt: Halt | undefined;
    const tail = await readPlainJson(counted, async (items) => {
      const entries: VisitEntry[] = [];
      for (const item of items) this.acceptItem(item, entries);
      if (entries.length === 0) return;
      halt = await this.deliver(entries);
      if (halt !== undefined) return 'stop';
    });
    // Left unread after a halt, which the callback kept.
    if (tail === undefined) return halt!;
    return { kind: 'answered', token: this.finishPlain(tail.continuation, tail.message) };
  }

  private finishPlain(token: string | undefined, message: string | undefined): string | undefined {
    if (message !== undefined)
      this.options.onMessage?.({ slice: this.sliceId, severity: 'info', text: `${this.label}: ${message}` });
    if (token !== undefined) {
      this.exactlyOnce.tokenAdvanced();
      this.progressed = true;
    }
    return token;
  }

  private acceptItem(item: PlainDocument, entries: VisitEntry[]): void {
    const buf = Buffer.from(item.text);
    if (item.remove !== undefined)
      this.accept({ kind: 'remove', id: item.remove, shape: 'feed', buf, start: 0, end: buf.length }, entries);
    else if (item.put !== undefined)
      this.accept({ kind: 'put', id: item.put, shape: 'feed', buf, start: 0, end: buf.length }, entries);
    else if (item.id !== undefined)
      this.accept({ kind: 'put', id: item.id, shape: 'document', buf, start: 0, end: buf.length }, entries);
  }
}

async function* countBytes(
  body: AsyncIterable<Buffer>,
  onBytes: ((n: number) => void) | undefined,
): AsyncIterable<Buffer> {
  for await (const chunk of body) {
    onBytes?.(chunk.length);
    yield chunk;
  }
}

/** The token of a continuation, which the service writes alone or as an object's `token`. */
function continuationToken(c: { token?: unknown } | string | undefined): string | undefined {
  if (typeof c === 'string') return c;
  return typeof c?.token === 'string' ? c.token : undefined;
}

/** A message's text as given; none is empty, anything else is shown as JSON. */
function messageText(given: unknown): string {
  if (typeof given === 'string') return given;
  return given === undefined || given === null ? '' : JSON.stringify(given);
}

function messageOf(text: string): string {
  return answerMessage(text) ?? '(empty body)';
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

function isJsonText(buf: Buffer): boolean {
  try {
    JSON.parse(buf.toString('utf8'));
    return true;
  } catch {
    return false;
  }
}
