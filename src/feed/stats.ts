import * as hdr from 'hdr-histogram-js';

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
  /** Operations not finished because the feed was stopped (SIGINT, breaker); the checkpoint covers them. */
  'feeder.abandoned.count': number;
}

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
  private latencyMinUs = Number.POSITIVE_INFINITY;
  private latencyMaxUs = 0;
  private latencySumUs = 0;
  private readonly codes = new Map<number, number>();
  private readonly histogram = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: 3 });

  constructor(now: number = performance.now()) {
    this.startedAt = now;
  }

  response(status: number, bytes: number, latencyUs: number): void {
    this.responses++;
    this.responseBytes += bytes;
    if (status < 200 || status > 299) this.responseErrors++;
    if (status === 429) this.throttled++;
    this.codes.set(status, (this.codes.get(status) ?? 0) + 1);
    const us = latencyUs < 1 ? 1 : Math.round(latencyUs);
    if (us < this.latencyMinUs) this.latencyMinUs = us;
    if (us > this.latencyMaxUs) this.latencyMaxUs = us;
    this.latencySumUs += us;
    this.histogram.recordValue(us);
  }

  /** The counters and a copy of the latency histogram (µs), for a recorder sampling once a second. */
  snapshot(): FeedCounters {
    const latencyUs = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: 3 });
    latencyUs.add(this.histogram);
    return {
      operations: this.operations, ok: this.ok, errors: this.errors, retries: this.retries, exceptions: this.exceptions,
      requestBytes: this.requestBytes, responseBytes: this.responseBytes, codes: Object.fromEntries(this.codes), latencyUs,
    };
  }

  percentileMs(p: number): number {
    return this.histogram.totalCount === 0 ? 0 : this.histogram.getValueAtPercentile(p) / 1000;
  }

  summary(now: number, inflight: number, inflightLimit: number): FeedSummary {
    const seconds = Math.max(1e-6, (now - this.startedAt) / 1000);
    const round = (n: number, digits = 3) => Number(n.toFixed(digits));
    const codes: Record<string, number> = {};
    for (const [k, v] of [...this.codes].sort((a, b) => a[0] - b[0])) codes[String(k)] = v;
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
      'http.response.latency.millis.min': this.responses === 0 ? 0 : round(this.latencyMinUs / 1000),
      'http.response.latency.millis.avg': this.responses === 0 ? 0 : round(this.latencySumUs / this.responses / 1000),
      'http.response.latency.millis.max': round(this.latencyMaxUs / 1000),
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
      'feeder.abandoned.count': this.abandoned,
    };
  }
}
