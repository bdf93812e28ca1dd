import { describe, expect, it } from 'vitest';
import type * as Hdr from 'hdr-histogram-js';
import {
  decodeHistogram,
  emptyLatencyHistogram,
  encodeHistogram,
  latencyIndex,
  recordAt,
  valueAtPercentile,
} from '../../src/feed/latency-histogram.js';
import { FeedStats } from '../../src/feed/stats.js';

describe('latencyIndex', () => {
  it("is hdr-histogram-js's own counts index for every size of latency", () => {
    const h = emptyLatencyHistogram() as Hdr.JsHistogram;
    const values: number[] = [];
    for (let v = 1; v < 5000; v++) values.push(v);
    // Every power of two and its neighbours up to 2^31, where the buckets change.
    for (let e = 12; e < 31; e++) for (const d of [-1, 0, 1, 7]) values.push(2 ** e + d);
    for (let i = 0; i < 2000; i++) values.push(1 + Math.floor(Math.random() * 2_000_000_000));
    for (const v of values) expect(latencyIndex(v), `value ${v}`).toBe(h.countsArrayIndex(v));
  });

  it('leaves values past 2^31 µs to recordValue, which still counts them', () => {
    expect(latencyIndex(2 ** 31)).toBe(-1);
    const h = emptyLatencyHistogram();
    recordAt(h, 3_000_000_000, latencyIndex(3_000_000_000));
    recordAt(h, 10, latencyIndex(10));
    expect(h.totalCount).toBe(2);
    expect(h.maxValue).toBeGreaterThanOrEqual(2_999_000_000);
    expect(h.minNonZeroValue).toBe(10);
  });

  it('records as recordValue does: the same percentiles, extremes and count', () => {
    const a = emptyLatencyHistogram();
    const b = emptyLatencyHistogram();
    for (let i = 0; i < 5000; i++) {
      const v = 1 + Math.floor(Math.random() ** 3 * 60_000_000);
      a.recordValue(v);
      recordAt(b, v, latencyIndex(v));
    }
    for (const p of [0, 1, 50, 90, 99, 99.9, 100]) expect(b.getValueAtPercentile(p)).toBe(a.getValueAtPercentile(p));
    expect([b.totalCount, b.minNonZeroValue, b.maxValue]).toEqual([a.totalCount, a.minNonZeroValue, a.maxValue]);
  });
});

describe('valueAtPercentile', () => {
  const percentiles = [0, 0.1, 1, 25, 50, 90, 99, 99.9, 99.99, 100, 150];

  it("is hdr-histogram-js's getValueAtPercentile for histograms of every shape", () => {
    const shapes: (() => number)[] = [
      () => 1 + Math.floor(Math.random() ** 3 * 60_000_000),
      () => 80_000 + Math.floor(Math.random() * 10),
      () => 1 + Math.floor(Math.random() * 3),
      () => 2 ** (1 + Math.floor(Math.random() * 34)),
    ];
    for (const shape of shapes)
      for (const n of [1, 2, 3, 10, 1000]) {
        const h = emptyLatencyHistogram();
        for (let i = 0; i < n; i++) h.recordValue(shape());
        for (const p of percentiles) expect(valueAtPercentile(h, p), `n ${n}, p ${p}`).toBe(h.getValueAtPercentile(p));
      }
  });

  it('counts a value of 0, which sets no minimum, and a histogram added from its encoding', () => {
    const h = emptyLatencyHistogram();
    h.recordValue(0);
    h.recordValue(0);
    h.recordValue(5000);
    for (const p of percentiles) expect(valueAtPercentile(h, p), `p ${p}`).toBe(h.getValueAtPercentile(p));
    expect(valueAtPercentile(h, 50)).toBe(0);
    const merged = decodeHistogram(encodeHistogram(h));
    merged.recordValue(70);
    for (const p of percentiles) expect(valueAtPercentile(merged, p), `p ${p}`).toBe(merged.getValueAtPercentile(p));
  });

  it('is 0 for an empty histogram, as the library says', () => {
    const h = emptyLatencyHistogram();
    for (const p of percentiles) expect(valueAtPercentile(h, p)).toBe(h.getValueAtPercentile(p));
  });
});

describe('FeedStats.response', () => {
  it('counts one answer in its status and in the whole, with the same latency in both', () => {
    const s = new FeedStats(0);
    s.response(200, 10, 1500.4);
    s.response(200, 10, 0.2);
    s.response(429, 5, 80_000);
    const latency = s.snapshot().latencyUs;
    expect(latency.totalCount).toBe(3);
    expect(latency.minNonZeroValue).toBe(1);
    expect(latency.maxValue).toBeGreaterThanOrEqual(79_990);
    expect(s.answersWith(200)).toBe(2);
    expect(s.answersWith(429)).toBe(1);
  });
});
