import { setMaxListeners } from 'node:events';
import { VespaBulkError } from '../core/errors.js';
import {
  defaultRetryPolicy,
  isRefusal,
  notRepeatedReason,
  parseRetryAfter,
  retryDelay,
  type RetryPolicy,
} from '../http/retry-delay.js';
import { type Transport, type WireProtocol } from '../http/transport.js';
import { createTransport } from '../http/create-transport.js';
import { proxyShown } from '../http/proxy/proxy-route.js';
import { dispatchTo, header, type RawResponse } from '../http/exchange.js';
import { answerMessage } from '../document/answer-message.js';
import type { TransportError } from '../http/transport-error.js';
import { isLoopback, splitEndpoint } from '../http/endpoint.js';
import {
  DocumentRequestEncoder,
  defaultMaxRequestBytes,
  methodOf,
  requestBodyBytes,
  requestSizeError,
  type EncodedBody,
} from '../http/document-request.js';
import { isAuthFailure } from '../http/tls.js';
import { Reachability } from '../http/reachability.js';
import { isSafeToRepeat, parseOperation, type FeedOperation } from '../document/operation.js';
import type { RawItem } from '../core/operation-splitter.js';
import { createThrottle, defaultMaxInflight, type FeedThrottle, type QueueReading } from './throttle.js';
import { CircuitBreaker } from './breaker.js';
import { SameFailureRule, type SameFailureVerdict } from './same-failure.js';
import { FeedStats, type FeedStatsState } from './stats.js';
import { openFeedSource } from './open-feed-source.js';
import { type FeedSource, type InputInfo, type InputPosition, type OpenPosition, type SourceBatch } from './source.js';
import { inShard } from './shard.js';
import type { FeedOptions } from './options.js';
import { FeedResult } from './operation-result.js';
import { FifoQueue } from '../structures/fifo-queue.js';
import { IdSequencer } from './id-sequencer.js';
import { OpenOperations } from './open-operations.js';
import { checkFeedOptions } from './options.js';
import { ArrivalSchedule } from './arrival.js';
import type {
  DriverCut,
  DriverEnd,
  DriverFigures,
  DriverRun,
  FailureOutput,
  FeedDriver,
  StopReason,
} from './driver.js';
import { failUnsent, positionAfter, settleUnsent } from './unsent.js';
import { Sleeper } from '../structures/sleeper.js';
import { ShuffleBuffer } from './shuffle-buffer.js';
import { loadTransform, type TransformFunction } from '../transform/transform.js';
import { transformBatches } from './transform-items.js';
import { FeedBlock } from './feed-block.js';

/** Operations `shuffle` holds when `shuffleBuffer` is not given. */
export const defaultShuffleBuffer = 10_000;

/**
 * The longest wait between two probes of a feed block: how late a lifted block may be noticed. (Each write at its own
 * backoff, as before, waited up to a minute between tries: a block that lifted was noticed that late.)
 */
const feedBlockProbeMaxMs = 10_000;

/**
 * Where one operation stands, from read to done:
 * - `waiting-for-id`: an earlier operation on its document id is not finished (`IdSequencer`);
 * - `queued`: in the ready queue, waiting for room under the limit (and, with an arrival rate, for its due time);
 * - `in-flight`: an attempt is on the wire;
 * - `backing-off`: an attempt failed and `retryDelay()` said to try again after a delay, or the cluster is
 *   feed-blocked and the write waits for the block to lift (`feed-block.ts`);
 * - `abandoned`: left unfinished by a stop; the checkpoint covers it;
 * - `done`: succeeded or finally failed (in the failure output).
 */
type OperationState = 'waiting-for-id' | 'queued' | 'in-flight' | 'backing-off' | 'abandoned' | 'done';

/** One operation read and not finished; its encoded body and headers are kept across retries. */
interface Pending extends EncodedBody {
  seq: number;
  state: OperationState;
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

/** A worker thread's engine's figures for its coordinator: counters, in-flight count and limit. */
export interface EngineCounters {
  stats: FeedStatsState;
  inflight: number;
  limit: number;
  queue?: QueueReading | undefined;
}

/**
 * The feed engine on one thread. Reads operations with backpressure, sends them through a transport under
 * the in-flight limit, keeps operations on one id in order, retries by `retryDelay()`, and accounts for every
 * operation: succeeded, in the failure output, or before the checkpoint's position. The per-operation state
 * machine is here (`OperationState`), and so are its counters and its stop; the run around it (failure output,
 * checkpoint, signal, outcome) is the `Feeder`'s, or in a worker thread the coordinator's. Requests are built by
 * `DocumentRequestEncoder`, per-id order is `IdSequencer`'s, the limit is a `FeedThrottle`'s, the pacing with an
 * arrival rate an `ArrivalSchedule`'s.
 */
export class FeedEngine implements FeedDriver {
  readonly workers = 1;
  private readonly options: FeedOptions;
  private readonly transport: Transport;
  private readonly ownsTransport: boolean;
  /**
   * On every request when the transport is the caller's: a stop that gives up on the requests still on the wire
   * aborts them, as the transport, lent to others too (a `DocumentClient`, another feed), is not this feed's to destroy.
   */
  private readonly abandon: AbortController | undefined;
  private readonly encoder: DocumentRequestEncoder;
  private readonly throttle: FeedThrottle;
  private readonly breaker: CircuitBreaker;
  private readonly policy: RetryPolicy;
  private readonly deadlineMs: number;
  private readonly sendTimeout: boolean;
  private readonly maxRequestBytes: number;
  private readonly arrival: ArrivalSchedule;
  /** The counters behind the summary. */
  private readonly stats = new FeedStats();
  /** The run's failure output (in a worker thread, a relay to the coordinator's). */
  private failures: FailureOutput | undefined;
  private inputs: InputInfo[] = [];
  /** Why the feed is stopping, once it is. */
  private stopping: StopReason | undefined;
  /** Position after the last item read, for a checkpoint when nothing is unfinished. */
  private readPosition: InputPosition | undefined;
  /** The transform, loaded by `prepare()`. */
  private transform: TransformFunction | undefined;

  private seq = 0;
  private inflight = 0;
  private readonly ready = new FifoQueue<Pending>();
  private readonly sequencer = new IdSequencer<Pending>();
  /** Operations read and not finished, in input order: the first is the checkpoint. */
  private readonly unfinished = new OpenOperations<Pending>();
  private authStatus: number | undefined;
  /** Whether every operation so far failed alike (`feed/same-failure.ts`), and the verdict once it stopped the feed. */
  private readonly sameFailure = new SameFailureRule();
  private sameFailureVerdict: SameFailureVerdict | undefined;
  /** Whether a failure ends the feed: nothing has answered and nothing can, or HTTP/2 insisted on is not spoken. */
  private readonly reach: Reachability;
  private unreachable: VespaBulkError | undefined;
  private readonly sleeper = new Sleeper();
  private maxUnfinished = 0;
  /** Writes that met a feed block (507), waiting together for it to lift; one at a time goes out as a probe. */
  private readonly feedBlock: FeedBlock<Pending>;
  private feedBlockTimer: NodeJS.Timeout | undefined;
  /** With `shuffle`: operations read and not yet let go to the sequencer, at most `shuffleBound`. */
  private readonly shuffler: ShuffleBuffer<Pending> | undefined;
  private readonly shuffleBound: number;

  constructor(options: FeedOptions = {}) {
    checkFeedOptions(options);
    this.options = options;
    const { origin, prefix } = splitEndpoint(options.endpoint ?? 'http://127.0.0.1:8080');
    this.reach = new Reachability(options.endpoint ?? 'http://127.0.0.1:8080');
    this.deadlineMs = options.deadlineMs ?? 600_000;
    this.sendTimeout = options.deadlineMs !== undefined;
    this.maxRequestBytes = options.maxRequestBytes ?? defaultMaxRequestBytes;
    this.ownsTransport = options.transport === undefined;
    this.transport =
      options.transport ??
      createTransport({
        origin,
        protocol: options.protocol ?? 'auto',
        connections: options.connections,
        // Room on the wire for the most the throttle may send: HTTP/2 streams, or HTTP/1.1 connections.
        concurrency: options.inflight ?? options.maxInflight ?? defaultMaxInflight,
        pipelining: options.pipelining,
        maxStreams: options.maxStreams,
        timeoutMs: options.requestTimeoutMs ?? Math.min(this.deadlineMs + 5_000, 600_000),
        batchWrites: options.batchWrites,
        tls: options.tls,
        proxy: options.proxy,
        proxyTls: options.proxyTls,
        onProtocol: (protocol: WireProtocol, why?: string) => {
          this.stats.protocol = protocol;
          options.onProtocol?.(protocol, why);
        },
      });
    if (this.ownsTransport) this.stats.proxy = proxyShown(options.proxy, origin);
    else {
      this.abandon = new AbortController();
      // Each request in flight listens on it, up to the in-flight limit.
      setMaxListeners(0, this.abandon.signal);
    }
    const compression = options.compression ?? 'auto';
    this.encoder = new DocumentRequestEncoder({
      prefix,
      headers: options.headers,
      compress: compression === 'gzip' || (compression === 'auto' && !isLoopback(origin)),
      route: options.route,
      tracelevel: options.tracelevel,
      dryRun: options.dryRun,
    });
    this.throttle = createThrottle(options);
    this.breaker = new CircuitBreaker({
      halfOpenAfterMs: (options.halfOpenSeconds ?? 10) * 1000,
      openAfterMs: (options.maxFailureSeconds ?? 60) * 1000,
    });
    this.policy = {
      ...defaultRetryPolicy,
      ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
      ...options.retryPolicy,
    };
    this.feedBlock = new FeedBlock({
      firstMs: this.policy.feedBlockBaseDelayMs,
      maxMs: Math.min(this.policy.feedBlockMaxDelayMs, feedBlockProbeMaxMs),
    });
    this.arrival = new ArrivalSchedule(options.arrivalRate, () => this.pump());
    this.shuffler = options.shuffle === true ? new ShuffleBuffer<Pending>() : undefined;
    this.shuffleBound = options.shuffleBuffer ?? defaultShuffleBuffer;
    this.updateWindow();
  }

  figures(): DriverFigures {
    return {
      stats: this.stats,
      inflight: this.inflight,
      limit: this.throttle.limit,
      queue: this.throttle.queue,
      read: this.stats.operations + this.stats.skipped + this.stats.dropped,
    };
  }

  /** The figures as plain data, for a worker thread's coordinator. */
  counters(): EngineCounters {
    return {
      stats: this.stats.state(),
      inflight: this.inflight,
      limit: this.throttle.limit,
      queue: this.throttle.queue,
    };
  }

  /** Stops the feed as Ctrl-C does (the first reason given stands): no retry waits, nothing more is sent. */
  stop(reason: StopReason = 'interrupted'): void {
    if (this.stopping !== undefined) return;
    this.stopping = reason;
    for (const p of this.unfinished.values()) {
      if (p.state === 'in-flight') continue;
      if (p.state === 'backing-off') clearTimeout(p.timer);
      p.state = 'abandoned';
    }
    this.ready.clear();
    // Held for a feed block: still unfinished (abandoned above), the checkpoint covers them.
    this.feedBlock.clear(performance.now());
    clearTimeout(this.feedBlockTimer);
    // Held by the shuffle: still unfinished (abandoned above), the checkpoint covers them.
    this.shuffler?.clear();
    this.arrival.cancel();
    this.sleeper.wakeUp();
  }

  /** Why the feed is stopping, once it is. */
  get stopReason(): StopReason | undefined {
    return this.stopping;
  }

  unfinishedPositions(): OpenPosition[] {
    const open: OpenPosition[] = [];
    for (const p of this.unfinished.values()) open.push([p.input, p.item.offset, p.item.line]);
    return open;
  }

  /** Loads the transform, if any: one that cannot be loaded is a usage error before anything is opened. */
  async prepare(): Promise<void> {
    if (this.options.transform !== undefined) this.transform = await loadTransform(this.options.transform);
  }

  /** Reads `source` (from where `run.resume` stands) and feeds it; see `feedBatches`. */
  feed(source: FeedSource, run: DriverRun): Promise<DriverEnd> {
    return this.feedBatches(openFeedSource(source, this.options, run.resume, run.readProgress), run);
  }

  /**
   * Feeds batches already cut (a worker thread's, routed to it), whose `input` indexes `run.inputs`, after
   * `prepare()`; resolves once every operation is finished or the feed stopped.
   */
  async feedBatches(
    batches: AsyncIterable<SourceBatch>,
    run: Pick<DriverRun, 'inputs' | 'failures'>,
  ): Promise<DriverEnd> {
    if (this.transform !== undefined) batches = transformBatches(batches, this.transform);
    this.inputs = run.inputs;
    const failures = (this.failures = run.failures);
    const ticker = setInterval(() => this.tick(), this.throttle.tickMs);
    this.arrival.start(performance.now());
    let readError: { error: unknown } | undefined;
    try {
      for await (const batch of batches) {
        for (const item of batch.items) this.accept(item, batch.input, batch.name);
        this.pump();
        while (this.readAhead() >= this.maxUnfinished && this.stopping === undefined) await this.sleeper.sleep();
        if (failures !== undefined) await failures.drained();
        if (this.stopping !== undefined) break;
      }
      if (this.shuffler !== undefined && this.stopping === undefined) {
        for (const p of this.shuffler.drain()) this.letGo(p);
        this.pump();
      }
    } catch (err) {
      readError = { error: err };
      this.stop('interrupted');
    }
    await this.finish();
    clearInterval(ticker);
    this.arrival.cancel();
    if (this.ownsTransport) await this.transport.close().catch(() => undefined);
    if (readError !== undefined) throw readError.error;
    if (this.stopping !== undefined) this.stats.abandoned = this.unfinished.size;
    this.stats.feedBlockedMs = this.feedBlock.blockedMs(performance.now());
    const summary = this.stats.summary(performance.now(), this.inflight, this.throttle.limit);
    return {
      summary,
      ...(this.authStatus !== undefined && { authStatus: this.authStatus }),
      ...(this.unreachable !== undefined && { unreachable: this.unreachable }),
      ...(this.sameFailureVerdict !== undefined && { sameFailure: this.sameFailureVerdict }),
    };
  }

  cut(): DriverCut {
    return { open: this.unfinishedPositions(), read: this.readPosition };
  }

  /** On one thread the cut is consistent at any moment between two events: saved now. */
  atConsistentCut(save: () => Promise<void>): Promise<void> {
    return save();
  }

  private accept(item: RawItem, input: number, name: string): void {
    this.readPosition = positionAfter(input, item);
    const onResult = this.options.onResult;
    if (settleUnsent(this.stats, item, name, this.failures, onResult)) return;
    let op: FeedOperation;
    try {
      op = parseOperation(item.bytes);
    } catch (err) {
      this.stats.operations++;
      if (item.source !== undefined)
        failUnsent(this.stats, item, name, transformedInvalid(err), false, this.failures, onResult);
      else failUnsent(this.stats, item, name, err, true, this.failures, onResult);
      return;
    }
    if (!inShard(op.id, this.options.shard)) {
      this.stats.skipped++;
      return;
    }
    this.stats.operations++;
    const tooLarge = requestSizeError(op.fields, this.maxRequestBytes, op.id);
    if (tooLarge !== undefined) {
      failUnsent(this.stats, item, name, tooLarge, false, this.failures, onResult, op);
      return;
    }
    const seq = this.seq++;
    const p: Pending = {
      seq,
      state: 'waiting-for-id',
      op,
      item,
      input,
      attempts: 0,
      deadline: 0,
      sentAt: 0,
      dueAt: this.arrival.dueAt(seq),
      startedAt: 0,
      // Every field it will have, from the start: one shape for all, and no property store of its own allocated
      // when the first attempt adds its body.
      body: undefined,
      bodyFrame: undefined,
      headers: undefined,
      safe: undefined,
      timer: undefined,
      lastStatus: undefined,
      lastMessage: undefined,
      lastCode: undefined,
    };
    this.unfinished.add(p);
    const shuffler = this.shuffler;
    if (shuffler === undefined) {
      if (this.sequencer.admit(op.id, p)) this.enqueue(p);
      return;
    }
    shuffler.add(op.id, p);
    if (shuffler.size > this.shuffleBound) this.letGo(shuffler.take()!);
  }

  /** An operation the shuffle let go: on to the sequencer, which keeps it behind an earlier one on its id. */
  private letGo(p: Pending): void {
    if (this.sequencer.admit(p.op.id, p)) this.enqueue(p);
  }

  private enqueue(p: Pending): void {
    p.state = 'queued';
    this.ready.push(p);
  }

  private limitNow(now: number): number {
    const state = this.breaker.state(now);
    if (state === 'half-open') return 1;
    if (state === 'open') return 0;
    return this.throttle.limit;
  }

  /** Sends what the limit allows; with an arrival rate, only what is due (the ready queue is in due order, retries being overdue). */
  private pump(): void {
    if (this.stopping !== undefined) return;
    const now = performance.now();
    const limit = this.limitNow(now);
    const paced = this.arrival.paced;
    while (this.inflight < limit) {
      const p = this.ready.peek();
      if (p === undefined) break;
      if (paced && !this.arrival.isDue(p.dueAt, now)) break;
      this.ready.shift();
      // A write would meet the block the others wait for: it waits with them, unsent. A remove goes on.
      if (this.feedBlock.blocked && p.op.kind !== 'remove') this.holdForBlock(p, now);
      else this.dispatch(p);
    }
  }

  /** `p` waits with the others for the feed block to lift (its deadline counts from now if it was never sent). */
  private holdForBlock(p: Pending, now: number): void {
    if (p.attempts === 0) {
      p.deadline = now + this.deadlineMs;
      p.startedAt = p.dueAt > 0 ? p.dueAt : now;
    } else this.stats.retries++;
    p.state = 'backing-off';
    const first = this.feedBlock.hold(p, now);
    if (first !== undefined) this.armFeedBlockProbe(first);
  }

  private armFeedBlockProbe(delayMs: number): void {
    clearTimeout(this.feedBlockTimer);
    this.feedBlockTimer = setTimeout(() => this.probeFeedBlock(), delayMs);
  }

  /**
   * The probe's time: the writes past their deadline fail (with the 507 they met, or as never sent), and the one
   * held longest goes out, past the in-flight limit if need be (one request).
   */
  private probeFeedBlock(): void {
    this.feedBlockTimer = undefined;
    if (this.stopping !== undefined) return;
    const now = performance.now();
    const { expired, probe, nextMs } = this.feedBlock.fire(now);
    for (const p of expired) {
      // One never sent has no status or code of its own, only this.
      if (p.attempts === 0)
        p.lastMessage =
          "not sent: the cluster was feed-blocked (507: resource limits) for the whole of the operation's timeout";
      this.complete(p, false, p.lastStatus, p.lastMessage, undefined);
    }
    if (probe !== undefined) this.dispatch(probe);
    if (nextMs !== undefined) this.armFeedBlockProbe(nextMs);
    this.sleeper.wakeUp();
    this.pump();
  }

  /** A write succeeded: whatever block there was has lifted, and what waited for it is sent. */
  private feedBlockLifted(now: number): void {
    clearTimeout(this.feedBlockTimer);
    this.feedBlockTimer = undefined;
    for (const p of this.feedBlock.lift(now)) this.enqueue(p);
  }

  private dispatch(p: Pending): void {
    const op = p.op;
    const now = performance.now();
    if (p.attempts === 0) {
      p.deadline = now + this.deadlineMs;
      p.startedAt = p.dueAt > 0 ? p.dueAt : now;
    }
    p.attempts++;
    p.state = 'in-flight';
    this.inflight++;
    this.throttle.sent(this.inflight);
    // Encoded at the first attempt and kept for the retries; dropped when the operation is done. The fields go
    // into the connection's buffer as they lie in the input, framed there (encodeFramed): no body per operation.
    if (p.body === undefined) this.encoder.encodeFramed(op.fields, p);
    const path = this.encoder.operationPath(
      op.path,
      op.condition,
      op.create,
      this.sendTimeout ? Math.max(1, p.deadline - now) : undefined,
    );
    const body = p.body!;
    const safe = (p.safe ??= isSafeToRepeat(op));
    this.stats.requests++;
    if (body) this.stats.requestBytes += p.bodyFrame === undefined ? body.length : requestBodyBytes(op.fields);
    p.sentAt = now;
    dispatchTo(
      this.transport,
      {
        method: methodOf[op.kind],
        path,
        headers: p.headers,
        body,
        bodyFrame: p.bodyFrame,
        idempotent: safe,
        signal: this.abandon?.signal,
      },
      this,
      p,
    );
  }

  /** ResponseReceiver: the answer to `p`'s current attempt. */
  onRawResponse(p: Pending, res: RawResponse): void {
    const now = performance.now();
    const sentAt = p.sentAt;
    this.reach.answer();
    this.inflight--;
    const status = res.status;
    this.feedBlock.answered(p);
    this.stats.response(status, res.body.length, (now - sentAt) * 1000);
    // A refusal (429, 503, a feed block's 507) comes at once, without the service's work: as a round trip it would
    // read as the shortest there is, and every served answer as waiting beyond it.
    if (!isRefusal(status)) this.throttle.answered(now - sentAt);
    // 507 (a feed block) is the cluster alive and answering, as 4xx are: the one 5xx that is no server failure.
    const serverFailed = status >= 500 && status !== 507;
    if (((status >= 200 && status < 300) || serverFailed) && !isReadableAnswer(res.body)) {
      this.onNotTheService(p, status, now);
      return;
    }
    if (status >= 200 && status < 300) {
      this.breaker.success();
      this.throttle.succeeded();
      this.complete(p, true, status, undefined, res.body);
      // A remove goes through a block; any other write that did says it has lifted.
      if (this.feedBlockTimer !== undefined && p.op.kind !== 'remove') this.feedBlockLifted(now);
      this.pump();
      return;
    }
    if (status === 429) this.throttle.throttled(now);
    if (serverFailed) this.breaker.failure(now);
    else this.breaker.success();
    p.lastStatus = status;
    p.lastMessage = answerMessage(res.body) ?? `HTTP ${status}`;
    p.lastCode = undefined;
    const delay = retryDelay(
      {
        attempt: p.attempts,
        status,
        safeToRepeat: (p.safe ??= isSafeToRepeat(p.op)),
        retryAfterMs: parseRetryAfter(header(res.headers, 'retry-after')),
        remainingMs: p.deadline - now,
      },
      this.policy,
    );
    if (delay === 0) this.sayNotRepeated(p, { status, safeToRepeat: p.safe === true });
    if (status === 507 && delay > 0 && this.stopping === undefined) {
      this.holdForBlock(p, now);
      this.pump();
      return;
    }
    this.retryOrFail(p, delay, res.body);
    if (isAuthFailure(status) && this.stopping === undefined) {
      // Every later operation would be refused alike: stop with a checkpoint rather than fail them all.
      this.authStatus = status;
      this.stop('unauthorized');
    }
  }

  /**
   * An answer whose body is not the service's JSON came from something in its place, and whether the operation got
   * through is unknown, as after a cut connection: sent again when safe to repeat, else failed with that reason rather
   * than counted as done.
   * - A 2xx: a mangled answer, or a proxy's page.
   * - A 5xx (but 507): the path failed (nginx's "500 Internal Server Error" page when its worker_connections run out, a
   *   balancer's 502/503/504). Counted apart, and the limit is cut as on 429: what is in the way has limits of its own
   *   and the feed ran into one.
   */
  private onNotTheService(p: Pending, status: number, now: number): void {
    const path = status >= 500;
    this.breaker.failure(now);
    if (path) {
      this.throttle.throttled(now);
      this.stats.proxyPages++;
    }
    p.lastStatus = status;
    p.lastMessage = path
      ? `HTTP ${status} from something on the way, not the service's answer (a proxy's page): outcome unknown`
      : `HTTP ${status} with an answer that is not JSON: outcome unknown`;
    p.lastCode = 'VB_BAD_RESPONSE';
    const input = { attempt: p.attempts, safeToRepeat: (p.safe ??= isSafeToRepeat(p.op)), maybeApplied: true };
    const delay = retryDelay({ ...input, remainingMs: p.deadline - now }, this.policy);
    if (delay === 0 && path) this.sayNotRepeated(p, input);
    this.retryOrFail(p, delay, undefined);
  }

  /** ResponseReceiver: `p`'s current attempt failed in transport. */
  onRawError(p: Pending, err: TransportError): void {
    const now = performance.now();
    this.inflight--;
    this.feedBlock.answered(p);
    this.stats.exceptions++;
    if (this.stopping !== undefined && (err.failure === 'aborted' || err.failure === 'shut')) {
      // Abandoned at stop: stays unfinished, so the checkpoint covers it.
      p.state = 'abandoned';
      this.sleeper.wakeUp();
      return;
    }
    const verdict = this.reach.verdict(err);
    if (verdict !== undefined) {
      // Nothing has ever answered (a wrong target or a service not up), or HTTP/2 insisted on is not spoken: every
      // operation would fail alike. The operation stays unfinished (the checkpoint covers it), as when the breaker
      // stops the feed, but within a second instead of a minute.
      this.unreachable ??= verdict;
      this.leaveUnreachable(p);
      return;
    }
    this.breaker.failure(now);
    p.lastStatus = undefined;
    p.lastMessage = err.message;
    p.lastCode = err.code;
    const delay = retryDelay(
      {
        attempt: p.attempts,
        safeToRepeat: (p.safe ??= isSafeToRepeat(p.op)),
        maybeApplied: err.maybeApplied,
        remainingMs: p.deadline - now,
      },
      this.policy,
    );
    if (delay === 0) this.sayNotRepeated(p, { safeToRepeat: p.safe === true, maybeApplied: err.maybeApplied });
    this.retryOrFail(p, delay, undefined);
  }

  /** A final failure that may have been applied says so in its reason (the failure output's `error`). */
  private sayNotRepeated(p: Pending, input: Parameters<typeof notRepeatedReason>[0]): void {
    const reason = notRepeatedReason(input);
    if (reason !== undefined) p.lastMessage = `${p.lastMessage}; ${reason}`;
  }

  /** Nothing answers at the endpoint: the feed stops, `p` stays unfinished. */
  private leaveUnreachable(p: Pending): void {
    p.state = 'abandoned';
    this.stop('unreachable');
    this.sleeper.wakeUp();
  }

  private retryOrFail(p: Pending, delay: number, body: Buffer | undefined): void {
    if (this.stopping !== undefined) {
      // No retries once stopping: the operation stays unfinished and the checkpoint covers it.
      p.state = 'abandoned';
      this.sleeper.wakeUp();
      return;
    }
    if (delay > 0) {
      this.stats.retries++;
      p.state = 'backing-off';
      p.timer = setTimeout(() => {
        this.enqueue(p);
        this.pump();
      }, delay);
    } else {
      this.complete(p, false, p.lastStatus, p.lastMessage, body);
    }
    this.pump();
  }

  private complete(
    p: Pending,
    ok: boolean,
    status: number | undefined,
    message: string | undefined,
    body: Buffer | undefined,
  ): void {
    p.state = 'done';
    this.unfinished.delete(p);
    if (p.attempts > 0) this.stats.operationDone((performance.now() - p.startedAt) * 1000);
    const name = this.inputs[p.input]?.name ?? '<input>';
    if (ok) this.stats.ok++;
    else {
      this.stats.errors++;
      const reason = {
        input: name,
        inputLine: p.item.line,
        id: p.op.id,
        operation: p.op.kind,
        status,
        message: message ?? 'failed',
        attempts: p.attempts,
        code: p.lastCode,
      };
      if (reason.code === undefined) delete reason.code;
      if (reason.status === undefined) delete reason.status;
      this.failures?.write(p.item.source ?? p.item.bytes, reason, false);
    }
    const onResult = this.options.onResult;
    if (onResult !== undefined && (!ok || this.options.onResultOnlyFailed !== true))
      onResult(new FeedResult(ok, p, name, status, message, body));
    p.body = undefined;
    if (p.attempts > 0 && this.stopping === undefined) {
      if (ok) this.sameFailure.succeeded();
      else {
        const verdict = this.sameFailure.failed(status, message ?? '', body);
        if (verdict !== undefined) {
          // Every operation so far failed alike: the rest would too. They stay unfinished, in the checkpoint.
          this.sameFailureVerdict = verdict;
          this.stop('same-failure');
        }
      }
    }
    const next = this.sequencer.release(p.op.id);
    if (next !== undefined) this.enqueue(next);
    if (
      this.sleeper.sleeping &&
      (this.stopping !== undefined || this.readAhead() < this.maxUnfinished * 0.75 || this.unfinished.size === 0)
    )
      this.sleeper.wakeUp();
  }

  private tick(): void {
    const now = performance.now();
    if (this.breaker.state(now) === 'open' && this.stopping === undefined) {
      this.stop('breaker');
      return;
    }
    this.throttle.tick(now, this.inflight);
    this.stats.feedBlockedMs = this.feedBlock.blockedMs(now);
    this.updateWindow();
    this.pump();
  }

  /** How many operations may be read ahead of completion: enough to keep the limit busy, bounded for memory. */
  private updateWindow(): void {
    this.maxUnfinished = Math.max(2 * this.throttle.limit + 64, 256);
  }

  /**
   * Operations read and not finished, less those the shuffle holds: what `maxUnfinished` bounds. The shuffle's
   * are on top (its own bound); counted in, a full shuffle would keep the window shut, and reading stopped for good.
   */
  private readAhead(): number {
    return this.unfinished.size - (this.shuffler?.size ?? 0);
  }

  /** Waits until every operation read is finished, or, when stopping, until in-flight requests end or the grace period is over. */
  private async finish(): Promise<void> {
    if (this.stopping === undefined) {
      while (this.unfinished.size > 0 && this.stopping === undefined) await this.sleeper.sleep();
    }
    if (this.stopping === undefined) return;
    // Nothing ever answered: nothing in flight can be on its way to being applied, so none is waited for.
    const graceMs = this.stopping === 'unreachable' ? 0 : (this.options.stopGraceMs ?? 10_000);
    const until = performance.now() + graceMs;
    let timer: NodeJS.Timeout | undefined;
    while (this.inflight > 0 && performance.now() < until) {
      timer = setTimeout(() => this.sleeper.wakeUp(), Math.max(1, until - performance.now()));
      await this.sleeper.sleep();
      clearTimeout(timer);
    }
    if (this.inflight === 0) return;
    // Abandon what is still on the wire; those operations stay unfinished and the checkpoint covers them.
    if (this.ownsTransport) {
      await this.transport.destroy().catch(() => undefined);
      return;
    }
    // A lent transport stays open for its other users: only this feed's requests end, each as `aborted`.
    this.abandon!.abort();
    while (this.inflight > 0) await this.sleeper.sleep();
  }
}

/** A transform returned an operation that is not one: the reason says so, with what is wrong with it. */
function transformedInvalid(err: unknown): VespaBulkError {
  return new VespaBulkError(
    'VB_TRANSFORM',
    `transform: returned an invalid operation: ${err instanceof Error ? err.message : String(err)}`,
    { cause: err },
  );
}

/** Whether a 2xx body is what the service sends: empty, or a JSON object (checked by its ends only: cheap). */
function isReadableAnswer(body: Buffer): boolean {
  let end = body.length;
  while (end > 0 && (body[end - 1] === 0x0a || body[end - 1] === 0x0d || body[end - 1] === 0x20)) end--;
  if (end === 0) return true;
  return body[0] === 0x7b && body[end - 1] === 0x7d;
}
