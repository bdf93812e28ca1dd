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
  return h;
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
