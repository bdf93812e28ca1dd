import * as hdr from 'hdr-histogram-js';
import type { WireProtocol } from '../http/transport.js';

/**
 * Counters of one feed and the summary made of them. The established feeders' field names are kept so
 * existing dashboards and scripts read ours; our additions follow the same dotted style.
 */
export interface FeedSummary {
  'feeder.operation.count': number;
  'feeder.seconds': number;
  'feeder.ok.count': number;
  'feeder.ok.rate': number;
  'feeder.error.count': number;
  'feeder.inflight.count': number;
  'http.request.count': number;
  'http.request.bytes': number;
  'http.request.MBps': number;
  'http.exception.count': number;
  'http.response.count': number;
  'http.response.bytes': number;
  'http.response.MBps': number;
  'http.response.error.count': number;
  'http.response.latency.millis.min': number;
  'http.response.latency.millis.avg': number;
  'http.response.latency.millis.max': number;
  'http.response.latency.millis.p50': number;
  'http.response.latency.millis.p90': number;
  'http.response.latency.millis.p99': number;
  'http.response.latency.millis.p999': number;
  'http.response.code.counts': Record<string, number>;
  /** Requests sent again after a retryable answer or transport error. */
  'feeder.retry.count': number;
  /** 429 answers. */
  'feeder.throttled.count': number;
  /** Operations that could not be read (bad JSON, unknown key, bad id): also in error.count. */
  'feeder.parse.error.count': number;
  /** Operations left to other shards (--shard) or before the checkpoint (--resume). */
  'feeder.skipped.count': number;
  /** The in-flight limit at the end (the level the cluster took). */
  'feeder.inflight.limit': number;
  /** The HTTP spoken: `h2` or `http1.1` (absent with a caller's dispatcher, whose protocol is its own). */
  'http.protocol'?: WireProtocol;
  /** Operations not finished because the feed was stopped (SIGINT, breaker); the checkpoint covers them. */
  'feeder.abandoned.count': number;
  /**
   * Latency of the answers per HTTP status, as vespa-feed-client's extended benchmark output: how slow the
   * 429s are beside the 200s. The counts add up to `http.response.count`.
   */
  'http.response.latency.millis.by.code': Record<string, LatencyFigures>;
  /**
   * Per operation, from its first send to its final answer, retries and backoff included: what a writer
   * waits for. With an arrival rate (`FeedOptions.arrivalRate`) it counts from when the operation was due.
   */
  'operation.latency.millis.min': number;
  'operation.latency.millis.avg': number;
  'operation.latency.millis.p50': number;
  'operation.latency.millis.p90': number;
  'operation.latency.millis.p99': number;
  'operation.latency.millis.max': number;
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

/** Latencies in microseconds: count, extremes and an HDR histogram for the percentiles. */
class LatencyRecorder {
  count = 0;
  private minUs = Number.POSITIVE_INFINITY;
  private maxUs = 0;
  private sumUs = 0;
  private readonly histogram = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: 3 });

  record(latencyUs: number): void {
    const us = latencyUs < 1 ? 1 : Math.round(latencyUs);
    this.count++;
    if (us < this.minUs) this.minUs = us;
    if (us > this.maxUs) this.maxUs = us;
    this.sumUs += us;
    this.histogram.recordValue(us);
  }

  percentileMs(p: number): number {
    return this.count === 0 ? 0 : this.histogram.getValueAtPercentile(p) / 1000;
  }

  /** Adds these latencies to `into` (same bounds), e.g. a copy for a sampler. */
  addTo(into: hdr.Histogram): void {
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
    return { count: this.count, minUs: this.minUs, maxUs: this.maxUs, sumUs: this.sumUs, histogram: hdr.encodeIntoCompressedBase64(this.histogram) };
  }

  /** Adds another recorder's state: counts and histogram buckets add exactly, extremes take the wider. */
  merge(s: LatencyState): void {
    if (s.count === 0) return;
    this.count += s.count;
    this.sumUs += s.sumUs;
    if (s.minUs < this.minUs) this.minUs = s.minUs;
    if (s.maxUs > this.maxUs) this.maxUs = s.maxUs;
    const other = hdr.decodeFromCompressedBase64(s.histogram);
    this.histogram.add(other);
    other.destroy();
  }

  figures(): LatencyFigures {
    return { count: this.count, min: round(this.minMs()), avg: round(this.avgMs()), p50: round(this.percentileMs(50)), p99: round(this.percentileMs(99)), max: round(this.maxMs()) };
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
  /** `hdr.encodeIntoCompressedBase64` of the histogram. */
  histogram: string;
}

/** FeedStats as plain data, posted by a worker thread and merged by the coordinator. */
export interface FeedStatsState {
  counters: Record<(typeof counterNames)[number], number>;
  latency: LatencyState;
  byCode: [number, LatencyState][];
  operationLatency: LatencyState;
}

const counterNames = [
  'operations', 'ok', 'errors', 'parseErrors', 'skipped', 'abandoned', 'requests', 'requestBytes', 'exceptions',
  'responses', 'responseBytes', 'responseErrors', 'retries', 'throttled',
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
  latencyUs: hdr.Histogram;
}

export class FeedStats {
  readonly startedAt: number;
  operations = 0;
  ok = 0;
  errors = 0;
  parseErrors = 0;
  skipped = 0;
  abandoned = 0;
  requests = 0;
  requestBytes = 0;
  exceptions = 0;
  responses = 0;
  responseBytes = 0;
  responseErrors = 0;
  retries = 0;
  throttled = 0;
  /** The protocol the feed spoke, once known. */
  protocol: WireProtocol | undefined;
  private readonly latency = new LatencyRecorder();
  /** Per status: its count is the status's count in `http.response.code.counts`. */
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
    recorder.record(latencyUs);
    this.latency.record(latencyUs);
  }

  /** One operation finished after its final answer, `latencyUs` after its first send (or its due time). */
  operationDone(latencyUs: number): void {
    this.operationLatency.record(latencyUs);
  }

  /** The counters and a copy of the latency histogram (µs), for a recorder sampling once a second. */
  snapshot(): FeedCounters {
    const latencyUs = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: 3 });
    this.latency.addTo(latencyUs);
    const codes: Record<string, number> = {};
    for (const [status, recorder] of this.byCode) codes[String(status)] = recorder.count;
    return {
      operations: this.operations, ok: this.ok, errors: this.errors, retries: this.retries, exceptions: this.exceptions,
      requestBytes: this.requestBytes, responseBytes: this.responseBytes, codes, latencyUs,
    };
  }

  /** Everything counted so far as plain data, for another thread to merge (`merge`). */
  state(): FeedStatsState {
    const counters = {} as FeedStatsState['counters'];
    for (const name of counterNames) counters[name] = this[name];
    return {
      counters,
      latency: this.latency.state(),
      byCode: [...this.byCode].map(([status, recorder]) => [status, recorder.state()]),
      operationLatency: this.operationLatency.state(),
    };
  }

  /** Adds another feed's counts: counters add, histograms merge exactly (HDR buckets add). */
  merge(s: FeedStatsState): void {
    for (const name of counterNames) this[name] += s.counters[name];
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
      'feeder.operation.count': this.operations,
      'feeder.seconds': round(seconds),
      'feeder.ok.count': this.ok,
      'feeder.ok.rate': round(this.ok / seconds),
      'feeder.error.count': this.errors,
      'feeder.inflight.count': inflight,
      'http.request.count': this.requests,
      'http.request.bytes': this.requestBytes,
      'http.request.MBps': round(this.requestBytes / 1e6 / seconds),
      'http.exception.count': this.exceptions,
      'http.response.count': this.responses,
      'http.response.bytes': this.responseBytes,
      'http.response.MBps': round(this.responseBytes / 1e6 / seconds),
      'http.response.error.count': this.responseErrors,
      'http.response.latency.millis.min': round(this.latency.minMs()),
      'http.response.latency.millis.avg': round(this.latency.avgMs()),
      'http.response.latency.millis.max': round(this.latency.maxMs()),
      'http.response.latency.millis.p50': round(this.percentileMs(50)),
      'http.response.latency.millis.p90': round(this.percentileMs(90)),
      'http.response.latency.millis.p99': round(this.percentileMs(99)),
      'http.response.latency.millis.p999': round(this.percentileMs(99.9)),
      'http.response.code.counts': codes,
      'feeder.retry.count': this.retries,
      'feeder.throttled.count': this.throttled,
      'feeder.parse.error.count': this.parseErrors,
      'feeder.skipped.count': this.skipped,
      'feeder.inflight.limit': inflightLimit,
      ...(this.protocol !== undefined && { 'http.protocol': this.protocol }),
      'feeder.abandoned.count': this.abandoned,
      'http.response.latency.millis.by.code': byCode,
      'operation.latency.millis.min': round(ops.minMs()),
      'operation.latency.millis.avg': round(ops.avgMs()),
      'operation.latency.millis.p50': round(ops.percentileMs(50)),
      'operation.latency.millis.p90': round(ops.percentileMs(90)),
      'operation.latency.millis.p99': round(ops.percentileMs(99)),
      'operation.latency.millis.max': round(ops.maxMs()),
    };
  }
}
