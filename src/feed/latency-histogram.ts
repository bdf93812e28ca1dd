import { createRequire } from 'node:module';
import type * as Hdr from 'hdr-histogram-js';

/**
 * Latency histograms in microseconds, with the feeder's bounds (1 µs to one hour, 3 significant digits), so
 * that every histogram of every shard has the same layout and adding them is exact.
 *
 * hdr-histogram-js's entry loads its WebAssembly build and pako (a third of a one-document feed's start-up): a
 * run needs only the plain histogram class, taken from its own file; the entry is loaded when a histogram is first
 * encoded or decoded (checkpoints, workers, stats files).
 */
export type LatencyHistogram = Hdr.Histogram;

const require = createRequire(import.meta.url);
type HistogramClass = new (lowest: number, highest: number, digits: number) => Hdr.JsHistogram;
let int32Histogram: HistogramClass | undefined;
let hdr: typeof Hdr | undefined;

/** An empty latency histogram (µs): what `hdr.build()` makes with these bounds, an Int32Histogram. */
export function emptyLatencyHistogram(): LatencyHistogram {
  int32Histogram ??= (require('hdr-histogram-js/dist/Int32Histogram.js') as { default: HistogramClass }).default;
  const h = new int32Histogram(1, 3_600_000_000, 3);
  h.autoResize = true;
  if (layout === undefined) layout = { halfMagnitude: h.subBucketHalfCountMagnitude, half: h.subBucketHalfCount };
  return h;
}

/** The bucket layout every latency histogram shares (same bounds, unit 1 µs): read from the first one made. */
let layout: { halfMagnitude: number; half: number } | undefined;

/**
 * Where `us` (a whole number of µs, at least 1) is counted in every latency histogram, or -1 where only
 * `recordValue` can say (past 2^31 µs, or before any histogram was made). Found once for the several histograms
 * an answer is counted in, with integer operations: hdr-histogram-js finds it anew for each with `Math.log2`,
 * `Math.pow` and a division. The same arithmetic as its `countsArrayIndex` with a unit magnitude of 0.
 */
export function latencyIndex(us: number): number {
  if (layout === undefined || us >= 0x80000000) return -1;
  const bucket = Math.max(31 - Math.clz32(us) - layout.halfMagnitude, 0);
  return ((bucket + 1) << layout.halfMagnitude) + (us >>> bucket) - layout.half;
}

/** `h.recordValue(us)` with `us`'s index from `latencyIndex` (-1: recorded the long way). */
export function recordAt(h: LatencyHistogram, us: number, index: number): void {
  const j = h as Hdr.JsHistogram;
  if (index < 0 || index >= j.countsArrayLength) {
    j.recordValue(us);
    return;
  }
  j.incrementCountAtIndex(index);
  j.updateMinAndMax(us);
  j.incrementTotalCount();
}

/**
 * `h.getValueAtPercentile(p)`, the same value, with the walk over the counts begun at the smallest value recorded
 * rather than at 0 µs: hdr-histogram-js adds every count below it, zeros, one call each, some 6,000 of them per
 * percentile for latencies of 100 ms. The end of a one-document feed asks for a dozen percentiles, in code run
 * once and so interpreted: about 3 % of its CPU (benchmarks/startup/run.ts).
 */
export function valueAtPercentile(h: LatencyHistogram, p: number): number {
  const j = h as Hdr.JsHistogram;
  // A value of 0 sets no minimum: its count, at index 0, is then where the walk must begin.
  if (j.minNonZeroValue >= Number.MAX_SAFE_INTEGER || j.getCountAtIndex(0) > 0) return h.getValueAtPercentile(p);
  // The count the percentile reaches, rounded up as the library does (less one unit in the last place).
  const fp = (Math.min(p, 100) / 100) * j.totalCount;
  const countAtPercentile = Math.max(Math.ceil(fp - 2 ** (Math.floor(Math.log2(fp)) - 52)), 1);
  let total = 0;
  for (let i = j.countsArrayIndex(j.minNonZeroValue); i < j.countsArrayLength; i++) {
    total += j.getCountAtIndex(i);
    if (total >= countAtPercentile) {
      const value = j.valueFromIndex(i);
      return p === 0 ? j.lowestEquivalentValue(value) : j.highestEquivalentValue(value);
    }
  }
  return 0;
}

/** HdrHistogram's compressed base64 form, readable by every HdrHistogram implementation (Java, Go, Python). */
export function encodeHistogram(h: LatencyHistogram): string {
  hdr ??= require('hdr-histogram-js') as typeof Hdr;
  return hdr.encodeIntoCompressedBase64(h);
}

/** The histogram of `encodeHistogram()`, laid out as every other latency histogram so it adds exactly. */
export function decodeHistogram(base64: string): LatencyHistogram {
  const out = emptyLatencyHistogram();
  addEncoded(out, base64);
  return out;
}

/** Adds the values of `encodeHistogram()`'s `base64` to `into`. */
export function addEncoded(into: LatencyHistogram, base64: string): void {
  if (base64 === '') return;
  hdr ??= require('hdr-histogram-js') as typeof Hdr;
  into.add(hdr.decodeFromCompressedBase64(base64));
}
