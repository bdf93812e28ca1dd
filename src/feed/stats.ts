import {
  addEncoded,
  emptyLatencyHistogram,
  encodeHistogram,
  type LatencyHistogram,
  latencyIndex,
  recordAt,
  valueAtPercentile,
} from './latency-histogram.js';
import type { WireProtocol } from '../http/transport.js';

/**
 * The summary of one feed, named as the library names things (camelCase, like `VisitReport`). The CLI
 * prints it under the established feeders' dotted names (`feeder.ok.count`, ...), which it alone owns.
 */
export interface FeedSummary {
  /**
   * Operations read (sent, skipped or unreadable). With a transform: the operations it returned, and each input
   * it failed on; inputs it dropped are in `dropped` instead.
   */
  operations: number;
  seconds: number;
  /** Operations that succeeded. */
  ok: number;
  /** `ok` per second. */
  okRate: number;
  /** Operations finally failed. */
  errors: number;
  /** Operations in flight at the end. */
  inflight: number;
  requests: number;
  requestBytes: number;
  requestMBps: number;
  exceptions: number;
  responses: number;
  responseBytes: number;
  responseMBps: number;
  responseErrors: number;
  responseLatencyMinMs: number;
  responseLatencyAvgMs: number;
  responseLatencyMaxMs: number;
  responseLatencyP50Ms: number;
  responseLatencyP90Ms: number;
  responseLatencyP99Ms: number;
  responseLatencyP999Ms: number;
  responseCodes: Record<string, number>;
  /** Requests sent again after a retryable answer or transport error. */
  retries: number;
  /** 429 answers. */
  throttled: number;
  /** Operations that could not be read (bad JSON, unknown key, bad id): also in `errors`. */
  parseErrors: number;
  /**
   * Operations left to other shards (--shard). In a run that is not resumed, or resumed from a checkpoint without
   * counts (`earlierCounts`), also those the checkpoint had finished, passed over.
   */
  skipped: number;
  /**
   * Input operations the transform (`FeedOptions.transform`) returned none for: dropped on purpose, neither
   * succeeded nor failed, and not in `operations`. Present when there were any (the summary without a
   * transform stays as it was).
   */
  dropped?: number;
  /**
   * 5xx answers that were not the service's JSON: pages from a proxy or balancer on the way (nginx's 500 when its
   * worker_connections run out, a 502/503/504), each retried when safe to repeat and cutting the limit as a 429
   * does. Present when there were any.
   */
  proxyPages?: number;
  /**
   * How long the cluster was feed-blocked (507: a content node at its resource limits), in seconds: writes waited
   * for the block to lift, one of them probing at a time, removes going on. Present when it was.
   */
  feedBlockedSeconds?: number;
  /** The in-flight limit at the end (the level the cluster took). */
  inflightLimit: number;
  /** The HTTP spoken: `h2` or `http1.1` (absent with a caller's dispatcher, whose protocol is its own). */
  protocol?: WireProtocol;
  /** The forward proxy gone through, without credentials (absent for a direct connection, or with a caller's transport). */
  proxy?: string;
  /** Operations not finished because the feed was stopped (SIGINT, breaker); the checkpoint covers them. */
  abandoned: number;
  /**
   * Latency of the answers per HTTP status, as vespa-feed-client's extended benchmark output: how slow the
   * 429s are beside the 200s. The counts add up to `responses`.
   */
  responseLatencyByCode: Record<string, LatencyFigures>;
  /**
   * Per operation, from its first send to its final answer, retries and backoff included: what a writer
   * waits for. With an arrival rate (`FeedOptions.arrivalRate`) it counts from when the operation was due.
   */
  operationLatencyMinMs: number;
  operationLatencyAvgMs: number;
  operationLatencyP50Ms: number;
  operationLatencyP90Ms: number;
  operationLatencyP99Ms: number;
  operationLatencyMaxMs: number;
  /**
   * A resumed feed's (`FeedOptions.resume`, or an existing `checkpoint`): this run's figures. The counts above
   * (`operations`, `ok`, `errors`, `parseErrors`, `skipped`, `dropped`) and `seconds`, `okRate` are then the whole
   * feed's, the runs before included, as its checkpoint counted them; the request, response and latency figures,
   * `inflight` and `abandoned` are this run's.
   */
  runOperations?: number;
  runOk?: number;
  runErrors?: number;
  runSeconds?: number;
  /**
   * `'unknown'` when the checkpoint resumed carries no counts (written by an earlier vespa-bulk): the figures above
   * are then this run's alone, since what the runs before did is not known.
   */
  earlierCounts?: 'unknown';
}

/** Latency figures of one group of answers, in milliseconds. */
export interface LatencyFigures {
  count: number;
  min: number;
  avg: number;
  p50: number;
  p99: number;
  max: number;
}

/** A latency as the histograms count it: whole µs, at least 1. */
const wholeUs = (latencyUs: number): number => (latencyUs < 1 ? 1 : Math.round(latencyUs));

/** Latencies in microseconds: count, extremes and an HDR histogram for the percentiles. */
class LatencyRecorder {
  count = 0;
  private minUs = Number.POSITIVE_INFINITY;
  private maxUs = 0;
  private sumUs = 0;
  private readonly histogram = emptyLatencyHistogram();

  record(latencyUs: number): void {
    const us = wholeUs(latencyUs);
    this.recordAt(us, latencyIndex(us));
  }

  /** `record` of whole µs whose histogram index (`latencyIndex`) is known: one lookup for several recorders. */
  recordAt(us: number, index: number): void {
    this.count++;
    if (us < this.minUs) this.minUs = us;
    if (us > this.maxUs) this.maxUs = us;
    this.sumUs += us;
    recordAt(this.histogram, us, index);
  }

  percentileMs(p: number): number {
    return this.count === 0 ? 0 : valueAtPercentile(this.histogram, p) / 1000;
  }

  /** Adds these latencies to `into` (same bounds), e.g. a copy for a sampler. */
  addTo(into: LatencyHistogram): void {
    into.add(this.histogram);
  }

  minMs(): number {
    return this.count === 0 ? 0 : this.minUs / 1000;
  }

  maxMs(): number {
    return this.maxUs / 1000;
  }

  avgMs(): number {
    return this.count === 0 ? 0 : this.sumUs / this.count / 1000;
  }

  /** Everything this recorder holds, as plain data that crosses a thread (the histogram HDR-encoded). */
  state(): LatencyState {
    return {
      count: this.count,
      minUs: this.minUs,
      maxUs: this.maxUs,
      sumUs: this.sumUs,
      histogram: encodeHistogram(this.histogram),
    };
  }

  /** Adds another recorder's state: counts and histogram buckets add exactly, extremes take the wider. */
  merge(s: LatencyState): void {
    if (s.count === 0) return;
    this.count += s.count;
    this.sumUs += s.sumUs;
    if (s.minUs < this.minUs) this.minUs = s.minUs;
    if (s.maxUs > this.maxUs) this.maxUs = s.maxUs;
    addEncoded(this.histogram, s.histogram);
  }

  figures(): LatencyFigures {
    return {
      count: this.count,
      min: round(this.minMs()),
      avg: round(this.avgMs()),
      p50: round(this.percentileMs(50)),
      p99: round(this.percentileMs(99)),
      max: round(this.maxMs()),
    };
  }
}

function round(n: number, digits = 3): number {
  return Number(n.toFixed(digits));
}

/** A LatencyRecorder as plain data (see `FeedStats.state()`). */
export interface LatencyState {
  count: number;
  minUs: number;
  maxUs: number;
  sumUs: number;
  /** `encodeHistogram` of the histogram. */
  histogram: string;
}

/** FeedStats as plain data, posted by a worker thread and merged by the coordinator. */
export interface FeedStatsState {
  counters: Record<(typeof counterNames)[number], number>;
  /** Not added up over workers, who meet the same block at once: the longest. */
  feedBlockedMs: number;
  latency: LatencyState;
  byCode: [number, LatencyState][];
  operationLatency: LatencyState;
}

const counterNames = [
  'operations',
  'ok',
  'errors',
  'parseErrors',
  'skipped',
  'resumeSkipped',
  'dropped',
  'abandoned',
  'requests',
  'requestBytes',
  'exceptions',
  'responses',
  'responseBytes',
  'responseErrors',
  'retries',
  'throttled',
  'proxyPages',
] as const;

/** Running totals of a feed, from `Feeder.snapshot()`: what a recorder or a metrics endpoint samples. */
export interface FeedCounters {
  operations: number;
  ok: number;
  /** Operations finally failed. */
  errors: number;
  retries: number;
  /** Requests that got no HTTP answer (transport errors). */
  exceptions: number;
  requestBytes: number;
  responseBytes: number;
  /** HTTP responses by status code. */
  codes: Record<string, number>;
  /** A copy of the response latency histogram, in microseconds (the caller may change it). */
  latencyUs: LatencyHistogram;
}

export class FeedStats {
  readonly startedAt: number;
  operations = 0;
  ok = 0;
  errors = 0;
  parseErrors = 0;
  skipped = 0;
  /** Of `skipped`: items a resumed feed passed over as its checkpoint's finished ones (re-read, not sent). */
  resumeSkipped = 0;
  dropped = 0;
  abandoned = 0;
  requests = 0;
  requestBytes = 0;
  exceptions = 0;
  responses = 0;
  responseBytes = 0;
  responseErrors = 0;
  retries = 0;
  throttled = 0;
  proxyPages = 0;
  /** How long the cluster was feed-blocked, in ms, as the engine last saw it. */
  feedBlockedMs = 0;
  /** The protocol the feed spoke, once known. */
  protocol: WireProtocol | undefined;
  /** The forward proxy gone through, as `proxyShown` gives it. */
  proxy: string | undefined;
  private readonly latency = new LatencyRecorder();
  /** Per status: its count is the status's count in `responseCodes`. */
  private readonly byCode = new Map<number, LatencyRecorder>();
  private readonly operationLatency = new LatencyRecorder();
  /** The last status's recorder: nearly every answer has the status of the one before. */
  private lastCode = -1;
  private lastRecorder: LatencyRecorder | undefined;

  constructor(now: number = performance.now()) {
    this.startedAt = now;
  }

  response(status: number, bytes: number, latencyUs: number): void {
    this.responses++;
    this.responseBytes += bytes;
    if (status < 200 || status > 299) this.responseErrors++;
    if (status === 429) this.throttled++;
    let recorder = this.lastRecorder;
    if (status !== this.lastCode || recorder === undefined) {
      recorder = this.byCode.get(status);
      if (recorder === undefined) this.byCode.set(status, (recorder = new LatencyRecorder()));
      this.lastCode = status;
      this.lastRecorder = recorder;
    }
    // Both count the same latency: its bucket is found once.
    const us = wholeUs(latencyUs);
    const index = latencyIndex(us);
    recorder.recordAt(us, index);
    this.latency.recordAt(us, index);
  }

  /** Answers with `status` so far. */
  answersWith(status: number): number {
    return this.byCode.get(status)?.count ?? 0;
  }

  /** One operation finished after its final answer, `latencyUs` after its first send (or its due time). */
  operationDone(latencyUs: number): void {
    this.operationLatency.record(latencyUs);
  }

  /** The counters and a copy of the latency histogram (µs), for a recorder sampling once a second. */
  snapshot(): FeedCounters {
    const latencyUs = emptyLatencyHistogram();
    this.latency.addTo(latencyUs);
    const codes: Record<string, number> = {};
    for (const [status, recorder] of this.byCode) codes[String(status)] = recorder.count;
    return {
      operations: this.operations,
      ok: this.ok,
      errors: this.errors,
      retries: this.retries,
      exceptions: this.exceptions,
      requestBytes: this.requestBytes,
      responseBytes: this.responseBytes,
      codes,
      latencyUs,
    };
  }

  /** Everything counted so far as plain data, for another thread to merge (`merge`). */
  state(): FeedStatsState {
    const counters = {} as FeedStatsState['counters'];
    for (const name of counterNames) counters[name] = this[name];
    return {
      counters,
      feedBlockedMs: this.feedBlockedMs,
      latency: this.latency.state(),
      byCode: [...this.byCode].map(([status, recorder]) => [status, recorder.state()]),
      operationLatency: this.operationLatency.state(),
    };
  }

  /** Adds another feed's counts: counters add, histograms merge exactly (HDR buckets add). */
  merge(s: FeedStatsState): void {
    for (const name of counterNames) this[name] += s.counters[name];
    this.feedBlockedMs = Math.max(this.feedBlockedMs, s.feedBlockedMs);
    this.latency.merge(s.latency);
    for (const [status, state] of s.byCode) {
      let recorder = this.byCode.get(status);
      if (recorder === undefined) this.byCode.set(status, (recorder = new LatencyRecorder()));
      recorder.merge(state);
    }
    this.operationLatency.merge(s.operationLatency);
  }

  /** Percentile of the answers' latency (each attempt by itself). */
  percentileMs(p: number): number {
    return this.latency.percentileMs(p);
  }

  /** Percentile of the operations' latency (first send or due time to final answer). */
  operationPercentileMs(p: number): number {
    return this.operationLatency.percentileMs(p);
  }

  summary(now: number, inflight: number, inflightLimit: number): FeedSummary {
    const seconds = Math.max(1e-6, (now - this.startedAt) / 1000);
    const codes: Record<string, number> = {};
    const byCode: Record<string, LatencyFigures> = {};
    for (const [k, v] of [...this.byCode].sort((a, b) => a[0] - b[0])) {
      codes[String(k)] = v.count;
      byCode[String(k)] = v.figures();
    }
    const ops = this.operationLatency;
    return {
      operations: this.operations,
      seconds: round(seconds),
      ok: this.ok,
      okRate: round(this.ok / seconds),
      errors: this.errors,
      inflight: inflight,
      requests: this.requests,
      requestBytes: this.requestBytes,
      requestMBps: round(this.requestBytes / 1e6 / seconds),
      exceptions: this.exceptions,
      responses: this.responses,
      responseBytes: this.responseBytes,
      responseMBps: round(this.responseBytes / 1e6 / seconds),
      responseErrors: this.responseErrors,
      responseLatencyMinMs: round(this.latency.minMs()),
      responseLatencyAvgMs: round(this.latency.avgMs()),
      responseLatencyMaxMs: round(this.latency.maxMs()),
      responseLatencyP50Ms: round(this.percentileMs(50)),
      responseLatencyP90Ms: round(this.percentileMs(90)),
      responseLatencyP99Ms: round(this.percentileMs(99)),
      responseLatencyP999Ms: round(this.percentileMs(99.9)),
      responseCodes: codes,
      retries: this.retries,
      throttled: this.throttled,
      parseErrors: this.parseErrors,
      skipped: this.skipped,
      ...(this.dropped > 0 && { dropped: this.dropped }),
      ...(this.proxyPages > 0 && { proxyPages: this.proxyPages }),
      ...(this.feedBlockedMs > 0 && { feedBlockedSeconds: round(this.feedBlockedMs / 1000) }),
      inflightLimit: inflightLimit,
      ...(this.protocol !== undefined && { protocol: this.protocol }),
      ...(this.proxy !== undefined && { proxy: this.proxy }),
      abandoned: this.abandoned,
      responseLatencyByCode: byCode,
      operationLatencyMinMs: round(ops.minMs()),
      operationLatencyAvgMs: round(ops.avgMs()),
      operationLatencyP50Ms: round(ops.percentileMs(50)),
      operationLatencyP90Ms: round(ops.percentileMs(90)),
      operationLatencyP99Ms: round(ops.percentileMs(99)),
      operationLatencyMaxMs: round(ops.maxMs()),
    };
  }
}
