import type { Dispatcher } from 'undici';
import { VespaBulkError } from '../errors.js';
import { defaultRetryPolicy, parseRetryAfter, retryDelay, type RetryPolicy } from '../http/retry-delay.js';
import { createPool, dispatchTo, isLoopback, parseBody, rawHeader, splitEndpoint, type RawResponse, type TransportError, type WireProtocol } from '../http/transport.js';
import { DocumentRequestEncoder, defaultMaxRequestBytes, methodOf, requestSizeError, type EncodedBody } from '../http/document-request.js';
import { isAuthFailure } from '../http/tls.js';
import { protocolError, unreachableCause, unreachableError } from '../http/reachability.js';
import { isSafeToRepeat, parseOperation, type FeedOperation } from './operation.js';
import type { RawItem } from './splitter.js';
import { AdaptiveThrottle, FixedThrottle, defaultMaxInflight, type Throttle } from './throttle.js';
import { CircuitBreaker } from './breaker.js';
import { FeedStats, type FeedCounters, type FeedSummary } from './stats.js';
import { FailureWriter } from './failures.js';
import { CheckpointSaver, checkpointToResume, feedPosition, resumeSkip, type Checkpoint, type SaveState } from './checkpoint.js';
import { ReadProgress, describeInputs, readSources, type FeedSource, type InputInfo, type InputPosition, type SourceBatch } from './source.js';
import { inShard } from './shard.js';
import type { FeedOptions } from './options.js';
import { FeedResult } from './operation-result.js';
import { FifoQueue } from '../structures/fifo-queue.js';
import { IdSequencer } from './id-sequencer.js';
import { OpenOperations } from './open-operations.js';
import { checkFeedOptions } from './check-options.js';

/** What the feed ended with, beyond the summary counters. */
export interface FeedOutcome {
  summary: FeedSummary;
  /** Failure output, when something failed. */
  failuresFile?: string;
  /** Checkpoint, when the feed was stopped before the end. */
  checkpointFile?: string;
  /** Why the feed stopped early. */
  stopped?: StopReason;
  /** With `stopped: 'unauthorized'`: the status that refused the credentials (401 or 403). */
  authStatus?: number;
  /**
   * With `stopped: 'unreachable'`: the error naming the endpoint and the cause: VB_UNREACHABLE, or VB_PROTOCOL
   * when HTTP/2 was asked for (`protocol: 'h2'`) and the server does not speak it.
   */
  unreachable?: VespaBulkError;
}

/**
 * interrupted: Ctrl-C or the caller's signal; breaker: nothing but failures for too long; unauthorized: the
 * service refused the credentials (401/403), which no retry and no later operation can change; unreachable:
 * nothing answered at the endpoint from the start (refused, unknown host, TLS handshake failed), where
 * retrying for the breaker's minute only delays the message.
 */
export type StopReason = 'interrupted' | 'breaker' | 'unauthorized' | 'unreachable';

/** A snapshot for the progress line. */
export interface FeedProgress {
  seconds: number;
  ok: number;
  failed: number;
  retries: number;
  inflight: number;
  limit: number;
  p50Ms: number;
  p99Ms: number;
  /** Operations read so far (including those left to other shards or before a resume point). */
  read: number;
  /** Operations done with: succeeded, finally failed or skipped. */
  finished: number;
  /** Share of the input read (0..1), when its size is known. */
  readShare?: number;
  /** Input bytes read so far. */
  readBytes?: number;
  /** Input bytes in all, when known (files, not stdin). */
  totalBytes?: number;
}

/** Where failed operations go: a FailureWriter, or (in a worker thread) a relay to the thread that writes. */
export type FailureOutput = Pick<FailureWriter, 'write' | 'drained' | 'close' | 'count' | 'path'>;

/** What a worker thread gives its Feeder beyond FeedOptions (see feed/workers/); library callers leave it out. */
export interface FeederInternals {
  /** Failure output in place of a file of the Feeder's own. */
  failures?: FailureOutput;
}

/** One operation read and not finished; its encoded body and headers are kept across retries. */
interface Pending extends EncodedBody {
  seq: number;
  op: FeedOperation;
  item: RawItem;
  input: number;
  attempts: number;
  deadline: number;
  /** When the current attempt was sent (performance.now()). */
  sentAt: number;
  /** When the operation is due (arrival rate), 0 for at once. Its latency counts from here. */
  dueAt: number;
  /** When its first attempt was sent, or when it was due: its operation latency counts from here. */
  startedAt: number;
  safe?: boolean;
  timer?: NodeJS.Timeout;
  lastStatus?: number;
  lastMessage?: string;
  lastCode?: string;
}

/**
 * The feed engine. Reads operations with backpressure, sends them through an undici pool under the in-flight
 * limit, keeps operations on one id in order, retries by `retryDelay()`, and accounts for every operation:
 * succeeded, in the failure output, or before the checkpoint's position. The state machine is here; requests
 * are built by `DocumentRequestEncoder`, per-id order is `IdSequencer`'s, results are `FeedResult`s.
 */
export class Feeder {
  private readonly options: FeedOptions;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly encoder: DocumentRequestEncoder;
  private readonly throttle: Throttle;
  private readonly breaker: CircuitBreaker;
  private readonly policy: RetryPolicy;
  private readonly timeoutMs: number;
  private readonly sendTimeout: boolean;
  private readonly maxRequestBytes: number;
  /** @internal The counters behind the summary; read them through `progress()` and the outcome. */
  readonly stats: FeedStats;
  private readonly readProgress = new ReadProgress();
  private inputs: InputInfo[] = [];
  private failures: FailureOutput | undefined;
  private readonly internals: FeederInternals;

  private seq = 0;
  private inflight = 0;
  private peakInflight = 0;
  private windowOk = 0;
  private windowThrottled = 0;
  private windowLatencyMs = 0;
  private windowResponses = 0;
  private readonly ready = new FifoQueue<Pending>();
  private readonly sequencer = new IdSequencer<Pending>();
  /** Operations read and not finished, in input order: the first is the checkpoint. */
  private readonly unfinished = new OpenOperations<Pending>();
  private readonly retrying = new Set<Pending>();
  /** Position after the last item read, for a checkpoint when nothing is unfinished. */
  private readPosition: InputPosition | undefined;
  /** The checkpoint this run continues, if any. */
  private resumed: Checkpoint | undefined;
  private stopping: StopReason | undefined;
  private authStatus: number | undefined;
  /** Some answer came from the endpoint: from then on transport errors are outages, retried, not a wrong target. */
  private answered = false;
  private unreachable: VespaBulkError | undefined;
  private readonly tlsEndpoint: boolean;
  private wake: (() => void) | undefined;
  private maxUnfinished: number;
  /** ms between due times with an arrival rate; 0 without one (operations go when the limit allows). */
  private readonly intervalMs: number;
  /** When operation 0 is due (arrival rate). */
  private scheduleStart = 0;
  /** Wakes the pump for the next operation not yet due. */
  private dueTimer: NodeJS.Timeout | undefined;

  constructor(options: FeedOptions = {}, internals: FeederInternals = {}) {
    checkFeedOptions(options);
    this.options = options;
    this.internals = internals;
    this.stats = new FeedStats();
    const { origin, prefix } = splitEndpoint(options.endpoint ?? 'http://127.0.0.1:8080');
    this.tlsEndpoint = origin.startsWith('https:');
    this.timeoutMs = options.deadlineMs ?? 600_000;
    this.sendTimeout = options.deadlineMs !== undefined;
    this.maxRequestBytes = options.maxRequestBytes ?? defaultMaxRequestBytes;
    this.ownsDispatcher = options.dispatcher === undefined;
    this.dispatcher =
      options.dispatcher ??
      createPool({
        origin,
        protocol: options.http2 === true ? 'h2' : (options.protocol ?? 'auto'),
        connections: options.connections,
        // Room on the wire for the most the throttle may send: HTTP/2 streams, or HTTP/1.1 connections.
        concurrency: options.inflight ?? options.maxInflight ?? defaultMaxInflight,
        pipelining: options.pipelining,
        maxStreams: options.maxStreams,
        timeoutMs: options.requestTimeoutMs ?? Math.min(this.timeoutMs + 5_000, 600_000),
        batchWrites: options.batchWrites,
        tls: options.tls,
        onProtocol: (protocol: WireProtocol) => {
          this.stats.protocol = protocol;
          options.onProtocol?.(protocol);
        },
      });
    const compression = options.compression ?? 'auto';
    this.encoder = new DocumentRequestEncoder({
      prefix,
      headers: options.headers,
      compress: compression === 'gzip' || (compression === 'auto' && !isLoopback(origin)),
      route: options.route,
      tracelevel: options.tracelevel,
      dryRun: options.dryRun,
    });
    this.throttle =
      options.inflight !== undefined ? new FixedThrottle(options.inflight) : new AdaptiveThrottle({ max: options.maxInflight });
    this.breaker = new CircuitBreaker({ halfOpenAfterMs: (options.halfOpenSeconds ?? 10) * 1000, openAfterMs: (options.maxFailureSeconds ?? 60) * 1000 });
    this.policy = { ...defaultRetryPolicy, ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}), ...options.retryPolicy };
    this.maxUnfinished = 0;
    this.intervalMs = options.arrivalRate !== undefined ? 1000 / options.arrivalRate : 0;
    this.updateWindow();
  }

  /** The running totals with a copy of the latency histogram, and the in-flight count and limit now. */
  snapshot(): FeedCounters & { inflight: number; limit: number } {
    return { ...this.stats.snapshot(), inflight: this.inflight, limit: this.throttle.limit };
  }

  /** Current figures for a progress line. */
  progress(): FeedProgress {
    return {
      seconds: (performance.now() - this.stats.startedAt) / 1000,
      ok: this.stats.ok,
      failed: this.stats.errors,
      retries: this.stats.retries,
      inflight: this.inflight,
      limit: this.throttle.limit,
      p50Ms: this.stats.percentileMs(50),
      p99Ms: this.stats.percentileMs(99),
      read: this.stats.operations + this.stats.skipped,
      finished: this.stats.ok + this.stats.errors + this.stats.skipped,
      ...this.readProgress.of(this.inputs),
    };
  }

  /** Stops the feed as Ctrl-C does. */
  stop(reason: StopReason = 'interrupted'): void {
    if (this.stopping !== undefined) return;
    this.stopping = reason;
    for (const p of this.retrying) clearTimeout(p.timer);
    this.retrying.clear();
    this.ready.clear();
    clearTimeout(this.dueTimer);
    this.wakeUp();
  }

  /** Why the feed is stopping, once it is. */
  get stopReason(): StopReason | undefined {
    return this.stopping;
  }

  /** @internal `[input, offset, line]` of every operation read and not finished, in input order (a worker's share of the checkpoint). */
  unfinishedPositions(): Array<[number, number, number]> {
    const open: Array<[number, number, number]> = [];
    for (const p of this.unfinished.values()) open.push([p.input, p.item.offset, p.item.line]);
    return open;
  }

  /** Feeds `source` (see `feed()`) and resolves with the outcome once every operation is finished or the feed stopped. Call once. */
  async run(source: FeedSource): Promise<FeedOutcome> {
    const options = this.options;
    const inputs = describeInputs(source);
    const checkpointPath = typeof options.checkpoint === 'string' ? options.checkpoint : undefined;
    const resume = checkpointToResume(options, inputs);
    // A checkpoint at the end (position null) leaves nothing to read.
    const batches =
      resume?.position === null
        ? emptyBatches()
        : readSources(source, { stdin: options.stdin, tls: options.tls, urlRetries: options.maxRetries, from: resume?.position ?? undefined, skip: resume !== undefined ? resumeSkip(resume) : undefined }, this.readProgress);
    return this.runBatches(batches, inputs, resume, checkpointPath);
  }

  /**
   * @internal Feeds batches already cut (a worker thread's share); `inputs` names the inputs their `input`
   * indexes. With `checkpointPath`, progress is saved there periodically (on this thread; a worker
   * thread's Feeder saves nothing, its coordinator gathers the checkpoint).
   */
  async runBatches(batches: AsyncIterable<SourceBatch>, inputs: InputInfo[], resume?: Checkpoint, checkpointPath?: string): Promise<FeedOutcome> {
    const options = this.options;
    this.inputs = inputs;
    this.resumed = resume;
    this.failures =
      this.internals.failures ??
      (typeof options.failures === 'string' ? new FailureWriter(options.failures, resume?.failures === options.failures ? resume.failureMark : undefined) : undefined);
    const saver = checkpointPath === undefined ? undefined : new CheckpointSaver({ path: checkpointPath, inputs: this.inputs.map((i) => i.name), shard: options.shard, ...(this.failures instanceof FailureWriter && { failures: this.failures }) });
    const intervalMs = options.checkpointIntervalMs ?? 2000;
    if (saver !== undefined && intervalMs > 0) saver.start(intervalMs, () => this.saveState());
    const onAbort = () => this.stop('interrupted');
    if (options.signal?.aborted) onAbort();
    options.signal?.addEventListener('abort', onAbort);
    const throttle = this.throttle;
    const windowMs = throttle instanceof AdaptiveThrottle ? throttle.sampleMs : 100;
    const ticker = setInterval(() => this.tick(), windowMs);
    this.scheduleStart = performance.now();
    let readError: { error: unknown } | undefined;
    try {
      for await (const batch of batches) {
        for (const item of batch.items) this.accept(item, batch.input, batch.name);
        this.pump();
        while (this.unfinished.size >= this.maxUnfinished && this.stopping === undefined) await this.sleep();
        if (this.failures !== undefined) await this.failures.drained();
        if (this.stopping !== undefined) break;
      }
    } catch (err) {
      readError = { error: err };
      this.stop('interrupted');
    }
    await this.finish();
    clearInterval(ticker);
    clearTimeout(this.dueTimer);
    options.signal?.removeEventListener('abort', onAbort);
    await saver?.stop();
    if (this.ownsDispatcher) await this.dispatcher.close().catch(() => undefined);
    await this.failures?.close();
    if (readError !== undefined) throw readError.error;

    const outcome: FeedOutcome = { summary: this.stats.summary(performance.now(), this.inflight, this.throttle.limit) };
    if (this.failures !== undefined && this.failures.count > 0) outcome.failuresFile = this.failures.path;
    if (this.stopping === undefined && saver !== undefined && (resume !== undefined || intervalMs > 0)) {
      // A finished feed marks its checkpoint done, so running it once more feeds nothing twice.
      await saver.save({ ...this.saveState(), position: null, reason: 'finished' });
      outcome.checkpointFile = saver.path;
    }
    if (this.stopping !== undefined) {
      outcome.stopped = this.stopping;
      if (this.authStatus !== undefined) outcome.authStatus = this.authStatus;
      if (this.unreachable !== undefined) outcome.unreachable = this.unreachable;
      this.stats.abandoned = this.unfinished.size;
      outcome.summary.abandoned = this.unfinished.size;
      if (saver !== undefined) {
        await saver.save(this.saveState());
        outcome.checkpointFile = saver.path;
      }
    }
    return outcome;
  }

  /** @internal What a checkpoint saved now holds: the first unfinished operation, the read position, the counts. */
  saveState(): SaveState {
    return {
      ...feedPosition(this.unfinishedPositions(), this.readPosition, this.resumed),
      reason: this.stopping ?? 'running',
      ok: this.stats.ok,
      errors: this.stats.errors,
    };
  }

  /** The checkpoint now (as a stop would save it, without the failure output's mark). */
  checkpoint(): Checkpoint {
    return new CheckpointSaver({ path: '', inputs: this.inputs.map((i) => i.name), shard: this.options.shard }).build(this.saveState());
  }

  private accept(item: RawItem, input: number, name: string): void {
    this.readPosition = { input, offset: item.offset + item.bytes.length, line: item.line };
    if (item.skip) {
      this.stats.skipped++;
      return;
    }
    if (item.error !== undefined) {
      this.stats.operations++;
      this.parseFailure(item, name, item.error);
      return;
    }
    let op: FeedOperation;
    try {
      op = parseOperation(item.bytes);
    } catch (err) {
      this.stats.operations++;
      this.parseFailure(item, name, err);
      return;
    }
    if (!inShard(op.id, this.options.shard)) {
      this.stats.skipped++;
      return;
    }
    this.stats.operations++;
    const tooLarge = requestSizeError(op.fields, this.maxRequestBytes, op.id);
    if (tooLarge !== undefined) {
      this.localFailure(item, name, tooLarge, false, op);
      return;
    }
    const seq = this.seq++;
    // Due by its place in the input, not by when it was read: a reader held back by a slow cluster must not
    // push the schedule back (coordinated omission), or a stall would vanish from the percentiles.
    const dueAt = this.intervalMs > 0 ? this.scheduleStart + seq * this.intervalMs : 0;
    const p: Pending = { seq, op, item, input, attempts: 0, deadline: 0, sentAt: 0, dueAt, startedAt: 0 };
    this.unfinished.add(p);
    if (this.sequencer.admit(op.id, p)) this.ready.push(p);
  }

  private parseFailure(item: RawItem, name: string, err: unknown): void {
    this.localFailure(item, name, err, true);
  }

  /** An operation that fails without a request: unreadable (`parse`), or refused before sending (`op` read). */
  private localFailure(item: RawItem, name: string, err: unknown, parse: boolean, op?: FeedOperation): void {
    const e = err instanceof VespaBulkError ? err : new VespaBulkError('VB_BAD_OPERATION', String((err as Error)?.message ?? err));
    this.stats.errors++;
    if (parse) this.stats.parseErrors++;
    const message = e.message;
    const about = op === undefined ? {} : { id: op.id, operation: op.kind };
    this.failures?.write(item.bytes, { input: name, inputLine: item.line, ...about, message, attempts: 0, code: e.code }, op === undefined);
    this.options.onResult?.({ ok: false, message, attempts: 0, input: name, line: item.line, ...(op !== undefined && { id: op.id, kind: op.kind }) });
  }

  private limitNow(now: number): number {
    const state = this.breaker.state(now);
    if (state === 'half-open') return 1;
    if (state === 'open') return 0;
    return this.throttle.limit;
  }

  private pump(): void {
    if (this.stopping !== undefined) return;
    const now = performance.now();
    const limit = this.limitNow(now);
    if (this.intervalMs > 0) {
      this.pumpDue(now, limit);
      return;
    }
    while (this.inflight < limit) {
      const p = this.ready.shift();
      if (p === undefined) break;
      this.dispatch(p);
    }
  }

  /** With an arrival rate: sends what is due (the ready queue is in due order, retries being overdue), and sleeps until the next. */
  private pumpDue(now: number, limit: number): void {
    while (this.inflight < limit) {
      const p = this.ready.peek();
      if (p === undefined) break;
      if (p.dueAt > now) {
        if (this.dueTimer === undefined) {
          this.dueTimer = setTimeout(() => {
            this.dueTimer = undefined;
            this.pump();
          }, p.dueAt - now);
        }
        break;
      }
      this.ready.shift();
      this.dispatch(p);
    }
  }

  private dispatch(p: Pending): void {
    const op = p.op;
    const now = performance.now();
    if (p.attempts === 0) {
      p.deadline = now + this.timeoutMs;
      p.startedAt = p.dueAt > 0 ? p.dueAt : now;
    }
    p.attempts++;
    this.inflight++;
    if (this.inflight > this.peakInflight) this.peakInflight = this.inflight;
    // Encoded at the first attempt and kept for the retries; dropped when the operation is done.
    if (p.body === undefined) this.encoder.encodeBody(op.fields, p);
    const path = this.encoder.operationPath(op.path, op.condition, op.create, this.sendTimeout ? Math.max(1, p.deadline - now) : undefined);
    const body = p.body!;
    const safe = (p.safe ??= isSafeToRepeat(op));
    this.stats.requests++;
    if (body) this.stats.requestBytes += body.length;
    p.sentAt = now;
    dispatchTo(
      this.dispatcher,
      {
        method: methodOf[op.kind],
        path,
        headers: p.headers,
        body,
        idempotent: safe,
      },
      this,
      p,
    );
  }

  /** @internal ResponseReceiver: the answer to `p`'s current attempt. */
  onRawResponse(p: Pending, res: RawResponse): void {
    const now = performance.now();
    const sentAt = p.sentAt;
    this.answered = true;
    this.inflight--;
    const status = res.status;
    this.stats.response(status, res.body.length, (now - sentAt) * 1000);
    this.windowLatencyMs += now - sentAt;
    this.windowResponses++;
    if (status >= 200 && status < 300 && !isReadableAnswer(res.body)) {
      this.onUnreadable(p, status, now);
      return;
    }
    if (status >= 200 && status < 300) {
      this.breaker.success();
      this.windowOk++;
      this.complete(p, true, status, undefined, res.body);
      this.pump();
      return;
    }
    if (status === 429) this.windowThrottled++;
    // 507 (feed block) and 4xx mean the cluster is alive and answering: not breaker failures.
    if (status >= 500 && status !== 507) this.breaker.failure(now);
    else this.breaker.success();
    const body = parseBody(res.body) as { message?: unknown };
    p.lastStatus = status;
    p.lastMessage = typeof body?.message === 'string' ? body.message : `HTTP ${status}`;
    p.lastCode = undefined;
    const delay = retryDelay(
      {
        attempt: p.attempts,
        status,
        safeToRepeat: (p.safe ??= isSafeToRepeat(p.op)),
        retryAfterMs: parseRetryAfter(rawHeader(res.rawHeaders, 'retry-after')),
        remainingMs: p.deadline - now,
      },
      this.policy,
    );
    this.retryOrFail(p, delay, res.body);
    if (isAuthFailure(status) && this.stopping === undefined) {
      // Every later operation would be refused alike: stop with a checkpoint rather than fail them all.
      this.authStatus = status;
      this.stop('unauthorized');
    }
  }

  /**
   * A 2xx whose body is not the service's JSON came from something in its place (a proxy's page, a mangled
   * answer): whether the operation was applied is unknown, as after a cut connection. Operations safe to
   * repeat are sent again; the others fail with that reason rather than count as done.
   */
  private onUnreadable(p: Pending, status: number, now: number): void {
    this.breaker.failure(now);
    p.lastStatus = status;
    p.lastMessage = `HTTP ${status} with an answer that is not JSON: outcome unknown`;
    p.lastCode = 'VB_BAD_RESPONSE';
    const delay = retryDelay({ attempt: p.attempts, safeToRepeat: (p.safe ??= isSafeToRepeat(p.op)), maybeApplied: true, remainingMs: p.deadline - now }, this.policy);
    this.retryOrFail(p, delay, undefined);
  }

  /** @internal ResponseReceiver: `p`'s current attempt failed in transport. */
  onRawError(p: Pending, err: TransportError): void {
    const now = performance.now();
    this.inflight--;
    this.stats.exceptions++;
    if (this.stopping !== undefined && (err.code === 'VB_ABORTED' || err.undiciCode === 'UND_ERR_DESTROYED')) {
      // Abandoned at stop: stays unfinished, so the checkpoint covers it.
      this.wakeUp();
      return;
    }
    if (!this.answered && err.undiciCode === 'H2_NOT_SUPPORTED') {
      // HTTP/2 was asked for and the server does not speak it: every operation would fail alike.
      this.unreachable ??= protocolError(this.options.endpoint ?? 'http://127.0.0.1:8080', err);
      this.stop('unreachable');
      this.wakeUp();
      return;
    }
    if (!this.answered) {
      const cause = unreachableCause(err, this.tlsEndpoint);
      if (cause !== undefined) {
        // Nothing has ever answered: a wrong target or a service not up. The operation stays unfinished (the
        // checkpoint covers it), as when the breaker stops the feed, but within a second instead of a minute.
        this.unreachable ??= unreachableError(this.options.endpoint ?? 'http://127.0.0.1:8080', cause, err);
        this.stop('unreachable');
        this.wakeUp();
        return;
      }
    }
    this.breaker.failure(now);
    p.lastStatus = undefined;
    p.lastMessage = err?.message ?? String(err);
    p.lastCode = (err as VespaBulkError)?.code ?? 'VB_TRANSPORT';
    const delay = retryDelay(
      {
        attempt: p.attempts,
        safeToRepeat: (p.safe ??= isSafeToRepeat(p.op)),
        maybeApplied: err?.maybeApplied ?? true,
        remainingMs: p.deadline - now,
      },
      this.policy,
    );
    this.retryOrFail(p, delay, undefined);
  }

  private retryOrFail(p: Pending, delay: number, body: Buffer | undefined): void {
    if (this.stopping !== undefined) {
      // No retries once stopping: the operation stays unfinished and the checkpoint covers it.
      this.wakeUp();
      return;
    }
    if (delay > 0) {
      this.stats.retries++;
      this.retrying.add(p);
      p.timer = setTimeout(() => {
        this.retrying.delete(p);
        this.ready.push(p);
        this.pump();
      }, delay);
    } else {
      this.complete(p, false, p.lastStatus, p.lastMessage, body);
    }
    this.pump();
  }

  private complete(p: Pending, ok: boolean, status: number | undefined, message: string | undefined, body: Buffer | undefined): void {
    this.unfinished.delete(p);
    if (p.attempts > 0) this.stats.operationDone((performance.now() - p.startedAt) * 1000);
    const name = this.inputs[p.input]?.name ?? '<input>';
    if (ok) this.stats.ok++;
    else {
      this.stats.errors++;
      const reason = { input: name, inputLine: p.item.line, id: p.op.id, operation: p.op.kind, status, message: message ?? 'failed', attempts: p.attempts, code: p.lastCode };
      if (reason.code === undefined) delete reason.code;
      if (reason.status === undefined) delete reason.status;
      this.failures?.write(p.item.bytes, reason, false);
    }
    const onResult = this.options.onResult;
    if (onResult !== undefined && (!ok || this.options.onResultOnlyFailed !== true)) onResult(new FeedResult(ok, p, name, status, message, body));
    p.body = undefined;
    const next = this.sequencer.release(p.op.id);
    if (next !== undefined) this.ready.push(next);
    if (this.wake !== undefined && (this.stopping !== undefined || this.unfinished.size < this.maxUnfinished * 0.75 || this.unfinished.size === 0)) this.wakeUp();
  }

  private tick(): void {
    const now = performance.now();
    if (this.breaker.state(now) === 'open' && this.stopping === undefined) {
      this.stop('breaker');
      return;
    }
    this.throttle.sample(now, {
      ok: this.windowOk,
      throttled: this.windowThrottled,
      peakInflight: this.peakInflight,
      ...(this.windowResponses > 0 ? { latencyMs: this.windowLatencyMs / this.windowResponses } : {}),
    });
    this.windowOk = 0;
    this.windowThrottled = 0;
    this.windowLatencyMs = 0;
    this.windowResponses = 0;
    this.peakInflight = this.inflight;
    this.updateWindow();
    this.pump();
  }

  /** How many operations may be read ahead of completion: enough to keep the limit busy, bounded for memory. */
  private updateWindow(): void {
    this.maxUnfinished = Math.max(2 * this.throttle.limit + 64, 256);
  }

  private sleep(): Promise<void> {
    return new Promise((resolve) => (this.wake = resolve));
  }

  private wakeUp(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  /** Waits until every operation read is finished, or, when stopping, until in-flight requests end or the grace period is over. */
  private async finish(): Promise<void> {
    if (this.stopping === undefined) {
      while (this.unfinished.size > 0 && this.stopping === undefined) await this.sleep();
    }
    if (this.stopping === undefined) return;
    // Nothing ever answered: nothing in flight can be on its way to being applied, so none is waited for.
    const graceMs = this.stopping === 'unreachable' ? 0 : (this.options.stopGraceMs ?? 10_000);
    const until = performance.now() + graceMs;
    let timer: NodeJS.Timeout | undefined;
    while (this.inflight > 0 && performance.now() < until) {
      timer = setTimeout(() => this.wakeUp(), Math.max(1, until - performance.now()));
      await this.sleep();
      clearTimeout(timer);
    }
    if (this.inflight > 0) {
      // Abandon what is still on the wire; those operations stay unfinished and the checkpoint covers them.
      await this.dispatcher.destroy().catch(() => undefined);
    }
  }
}

async function* emptyBatches(): AsyncGenerator<SourceBatch> {}

/** Whether a 2xx body is what the service sends: empty, or a JSON object (checked by its ends only: cheap). */
function isReadableAnswer(body: Buffer): boolean {
  let end = body.length;
  while (end > 0 && (body[end - 1] === 0x0a || body[end - 1] === 0x0d || body[end - 1] === 0x20)) end--;
  if (end === 0) return true;
  return body[0] === 0x7b && body[end - 1] === 0x7d;
}
