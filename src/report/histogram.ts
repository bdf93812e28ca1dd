import type * as hdr from 'hdr-histogram-js';
import type { LatencyHistogram } from '../feed/latency-histogram.js';

export {
  decodeHistogram,
  emptyLatencyHistogram,
  encodeHistogram,
  type LatencyHistogram,
} from '../feed/latency-histogram.js';

/** Percentile `p` (0-100) of `h` in milliseconds; 0 for an empty histogram. */
export function percentileMs(h: LatencyHistogram, p: number): number {
  return h.totalCount === 0 ? 0 : h.getValueAtPercentile(p) / 1000;
}

/** For each upper bound (µs), how many values are at or below it: the buckets of a Prometheus histogram. */
export function cumulativeCounts(h: LatencyHistogram, boundsUs: readonly number[]): number[] {
  const counts = boundsUs.map(() => 0);
  if (h.totalCount === 0) return counts;
  // Every histogram here is an Int32Histogram (emptyLatencyHistogram), a JsHistogram, which can be iterated.
  const it = (h as unknown as hdr.JsHistogram).recordedValuesIterator;
  it.reset();
  while (it.hasNext()) {
    const v = it.next();
    for (let i = 0; i < boundsUs.length; i++)
      if (v.valueIteratedTo <= boundsUs[i]) counts[i] += v.countAtValueIteratedTo;
  }
  return counts;
}

/**
 * The latency distribution as HdrHistogram plots it: for percentiles ever closer to 100 (x = 1/(1-p), so 2 is
 * the median, 10 is p90, 100 is p99, 1000 is p99.9), the latency in ms. Stops where the data runs out.
 */
export function latencyDistribution(h: LatencyHistogram): { x: number[]; ms: number[] } {
  const x: number[] = [];
  const ms: number[] = [];
  if (h.totalCount === 0) return { x, ms };
  // Ten points a decade, up to the percentile the count can still tell apart from the maximum.
  const decades = Math.max(1, Math.min(6, Math.log10(h.totalCount)));
  for (let i = 0; i <= decades * 10; i++) {
    const inverse = 10 ** (i / 10);
    x.push(inverse);
    ms.push(h.getValueAtPercentile(100 * (1 - 1 / inverse)) / 1000);
  }
  x.push(10 ** (decades + 0.3));
  ms.push(h.maxValue / 1000);
  return { x, ms };
}
