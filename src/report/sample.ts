import type { Feeder } from '../feed/feeder.js';
import type { VisitRun } from '../visit/visitor.js';
import { emptyLatencyHistogram, type LatencyHistogram } from './histogram.js';

/**
 * The running totals of a run at one moment: what the recorder and the metrics endpoint read. Every count is
 * cumulative since the start; the recorder makes per-second figures by difference. Any run can be recorded
 * through a function returning these (a feed, a visit, a bench with its own generator).
 */
export interface RunSample {
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
  /** Requests (feed) or slices (visit) in flight now. */
  inflight: number;
  /** The in-flight limit now (the adaptive limit of a feed, the slice count of a visit). */
  inflightLimit: number;
  /** Request body bytes sent. */
  sentBytes: number;
  /** Response body bytes received. */
  receivedBytes: number;
  /** Response latency in µs, cumulative; the sampler hands over a copy the recorder may change. */
  latencyUs: LatencyHistogram;
}

/** What a recorder samples: a function returning the run's totals now. */
export type RunSampler = () => RunSample;

/** Samples a running feed through `Feeder.snapshot()`. */
export function feedSampler(feeder: Feeder): RunSampler {
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
