import * as hdr from 'hdr-histogram-js';

/**
 * Latency histograms in microseconds, with the feeder's bounds (1 µs to one hour, 3 significant digits), so
 * that every histogram of every shard has the same layout and adding them is exact.
 */
export type LatencyHistogram = hdr.Histogram;

/** An empty latency histogram (µs). */
export function emptyLatencyHistogram(): LatencyHistogram {
  return hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: 3 });
}

/** HdrHistogram's compressed base64 form, readable by every HdrHistogram implementation (Java, Go, Python). */
export function encodeHistogram(h: LatencyHistogram): string {
  return hdr.encodeIntoCompressedBase64(h);
}

/** The histogram of `encodeHistogram()`, laid out as every other latency histogram so it adds exactly. */
export function decodeHistogram(base64: string): LatencyHistogram {
  const out = emptyLatencyHistogram();
  if (base64 !== '') out.add(hdr.decodeFromCompressedBase64(base64));
  return out;
}

/** Percentile `p` (0-100) of `h` in milliseconds; 0 for an empty histogram. */
export function percentileMs(h: LatencyHistogram, p: number): number {
  return h.totalCount === 0 ? 0 : h.getValueAtPercentile(p) / 1000;
}

/** For each upper bound (µs), how many values are at or below it: the buckets of a Prometheus histogram. */
export function cumulativeCounts(h: LatencyHistogram, boundsUs: readonly number[]): number[] {
  const counts = boundsUs.map(() => 0);
  if (h.totalCount === 0) return counts;
  // Every histogram here is built by hdr.build() without WebAssembly: a JsHistogram, which can be iterated.
  const it = (h as unknown as hdr.JsHistogram).recordedValuesIterator;
  it.reset();
  while (it.hasNext()) {
    const v = it.next();
    for (let i = 0; i < boundsUs.length; i++) if (v.valueIteratedTo <= boundsUs[i]) counts[i] += v.countAtValueIteratedTo;
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
