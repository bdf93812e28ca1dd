import type { Feeder } from '../feed/feeder.js';
import type { VisitRun } from '../visit/visitor.js';
import { emptyLatencyHistogram, type LatencyHistogram } from './histogram.js';

/**
 * What a run counts: a {@link RunSample} holds the totals since the start, a stats point (`StatsPoint`) the counts
 * of one interval. `inflight` and `inflightLimit` are levels, not counts: the sample's moment, the interval's end.
 */
export interface RunCounts {
  /** Operations (feed) or documents (visit) done successfully. */
  ok: number;
  /** Operations finally failed (feed) or slices failed (visit). */
  failed: number;
  /** Requests sent again after a retryable answer or transport error. */
  retries: number;
  /** HTTP responses by status code. */
  status: Record<string, number>;
  /** Requests that got no HTTP answer (connection refused or reset, timeouts). */
  exceptions: number;
  /** Requests (feed) or slices (visit) in flight. */
  inflight: number;
  /** The in-flight limit (the adaptive limit of a feed, the slice count of a visit). */
  inflightLimit: number;
  /**
   * The shortest round trip the adaptive limit has seen of late, in ms: what an answer takes with nothing queued
   * (a feed with the adaptive limit, once answers came).
   */
  minRttMs?: number;
  /**
   * Of the requests in flight, how many wait beyond that round trip, as the adaptive limit estimates it: in flight x
   * (1 - shortest / mean latency). A feed at its knee keeps this small; one past it, most of what it has in flight.
   */
  queueEstimate?: number;
  /** Request body bytes sent. */
  sentBytes: number;
  /** Response body bytes received. */
  receivedBytes: number;
}

/**
 * The running totals of a run at one moment: what the recorder and the metrics endpoint read. Every count is
 * cumulative since the start; the recorder makes per-second figures by difference. Any run can be recorded
 * through a function returning these (a feed, a visit, a bench with its own generator).
 */
export interface RunSample extends RunCounts {
  /** Response latency in µs, cumulative; the sampler hands over a copy the recorder may change. */
  latencyUs: LatencyHistogram;
}

/** What a recorder samples: a function returning the run's totals now. */
export type RunSampler = () => RunSample;

/**
 * Samples a running feed through `Feeder.snapshot()`.
 * @example
 * ```ts
 * import { Feeder } from 'vespa-bulk';
 * import { feedSampler, startMetricsServer } from 'vespa-bulk/report';
 *
 * const feeder = new Feeder({ endpoint: 'http://127.0.0.1:8080' });
 * const metrics = await startMetricsServer({ port: 9464, sample: feedSampler(feeder) });
 * await feeder.run('corpus.jsonl');
 * await metrics.close();
 * ```
 */
export function feedSampler(feeder: Pick<Feeder, 'snapshot'>): RunSampler {
  return () => {
    const s = feeder.snapshot();
    return {
      ok: s.ok,
      failed: s.errors,
      retries: s.retries,
      status: s.codes,
      exceptions: s.exceptions,
      inflight: s.inflight,
      inflightLimit: s.limit,
      ...s.queue,
      sentBytes: s.requestBytes,
      receivedBytes: s.responseBytes,
      latencyUs: s.latencyUs,
    };
  };
}

/**
 * Samples a running visit: documents delivered, slices failed, in flight (running slices) out of all slices,
 * bytes received. A visit measures no per-request latency (its requests stream for seconds by design), so its
 * histogram stays empty.
 * @example
 * ```ts
 * import { visit } from 'vespa-bulk';
 * import { startMetricsServer, visitSampler } from 'vespa-bulk/report';
 *
 * let metrics: Awaited<ReturnType<typeof startMetricsServer>> | undefined;
 * const docs = visit({ endpoint: 'http://127.0.0.1:8080', cluster: 'content' }, {
 *   onStart: (run) => void startMetricsServer({ port: 9464, sample: visitSampler(run) }).then((m) => (metrics = m)),
 * });
 * for await (const doc of docs) console.log(doc.id);
 * await metrics?.close();
 * ```
 */
export function visitSampler(run: VisitRun): RunSampler {
  return () => ({
    ok: run.documents(),
    failed: run.slices.filter((s) => s.status === 'failed').length,
    retries: run.slices.reduce((n, s) => n + s.retries, 0),
    status: {},
    exceptions: 0,
    inflight: run.slices.filter((s) => s.status === 'running').length,
    inflightLimit: run.slices.length,
    sentBytes: 0,
    receivedBytes: run.bytes(),
    latencyUs: emptyLatencyHistogram(),
  });
}

/**
 * Samples a run made of several feeds one after another (the steps of a bench, each its own feeder): the
 * finished feeds' totals plus the running one's, so that every total only grows, as the recorder's
 * differences need. In flight and the limit are the running feed's.
 */
export class SequenceSampler {
  private finished: RunSample | undefined;
  private current: RunSampler | undefined;

  /** The next feed starts: the one before it is finished, its totals kept. */
  next(sampler: RunSampler): void {
    if (this.current !== undefined) this.finished = addSamples(this.finished, this.current());
    this.current = sampler;
  }

  /** The run's totals now; pass as the recorder's sampler. */
  readonly sample: RunSampler = () => {
    const now = this.current?.();
    if (now === undefined)
      return this.finished === undefined ? emptySample() : { ...addSamples(undefined, this.finished), inflight: 0 };
    const total = addSamples(this.finished, now);
    return { ...total, inflight: now.inflight, inflightLimit: now.inflightLimit, ...queueOf(now) };
  };
}

/** A run's sample before anything happened. */
export function emptySample(): RunSample {
  return {
    ok: 0,
    failed: 0,
    retries: 0,
    status: {},
    exceptions: 0,
    inflight: 0,
    inflightLimit: 0,
    sentBytes: 0,
    receivedBytes: 0,
    latencyUs: emptyLatencyHistogram(),
  };
}

/** A sample's queue levels, where it has them (levels, as `inflight`: the moment's, never added up over time). */
export function queueOf(
  s: Pick<RunCounts, 'minRttMs' | 'queueEstimate'>,
): Pick<RunCounts, 'minRttMs' | 'queueEstimate'> {
  return {
    ...(s.minRttMs !== undefined && { minRttMs: s.minRttMs }),
    ...(s.queueEstimate !== undefined && { queueEstimate: s.queueEstimate }),
  };
}

/** `a + b` as a new sample (b's in-flight figures); neither is changed. */
function addSamples(a: RunSample | undefined, b: RunSample): RunSample {
  const status = { ...b.status };
  const latencyUs = emptyLatencyHistogram();
  latencyUs.add(b.latencyUs);
  if (a === undefined) return { ...b, status, latencyUs };
  for (const [code, n] of Object.entries(a.status)) status[code] = (status[code] ?? 0) + n;
  latencyUs.add(a.latencyUs);
  return {
    ok: a.ok + b.ok,
    failed: a.failed + b.failed,
    retries: a.retries + b.retries,
    status,
    exceptions: a.exceptions + b.exceptions,
    inflight: b.inflight,
    inflightLimit: b.inflightLimit,
    ...queueOf(b),
    sentBytes: a.sentBytes + b.sentBytes,
    receivedBytes: a.receivedBytes + b.receivedBytes,
    latencyUs,
  };
}
