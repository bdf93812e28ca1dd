import { describe, expect, it } from 'vitest';
import { AdaptiveThrottle, FixedThrottle } from '../../src/feed/throttle.js';

/**
 * A fluid model of a cluster: it serves `rate` ops/s with `baseLatencyMs` when idle; up to `queueLimit`
 * operations wait in its queue, and whatever is sent beyond what it serves plus its queue is answered 429.
 */
function simulate(opts: { rate: number; baseLatencyMs: number; queueLimit: number; seconds: number; throttle: AdaptiveThrottle }) {
  const windowMs = 100;
  const capacity = (opts.rate * opts.baseLatencyMs) / 1000; // in service at once
  let ok = 0;
  let throttledTotal = 0;
  const rates: number[] = [];
  for (let t = windowMs; t <= opts.seconds * 1000; t += windowMs) {
    const limit = opts.throttle.limit;
    const accepted = Math.min(limit, capacity + opts.queueLimit);
    const rejected = limit - accepted;
    // Little's law: throughput = accepted / latency, latency grows once the queue holds work.
    const latencyMs = Math.max(opts.baseLatencyMs, (accepted / opts.rate) * 1000);
    const served = Math.min(opts.rate, (accepted * 1000) / latencyMs) * (windowMs / 1000);
    const throttled = rejected > 0 ? Math.ceil((rejected * windowMs) / latencyMs) : 0;
    ok += served;
    throttledTotal += throttled;
    rates.push(served * (1000 / windowMs));
    opts.throttle.sample(t, { ok: served, throttled, peakInflight: limit, latencyMs });
  }
  return { ok, throttledTotal, rates };
}

describe('AdaptiveThrottle', () => {
  it('reaches 90% of the cluster rate within 2 s and holds with under 5% throttled', () => {
    const throttle = new AdaptiveThrottle({ min: 8, max: 4096, initial: 32 });
    const r = simulate({ rate: 20_000, baseLatencyMs: 5, queueLimit: 64, seconds: 30, throttle });
    const firstFast = r.rates.findIndex((x) => x >= 18_000);
    expect(firstFast).toBeGreaterThanOrEqual(0);
    expect((firstFast + 1) * 100).toBeLessThanOrEqual(2000);
    expect(r.throttledTotal / (r.ok + r.throttledTotal)).toBeLessThan(0.05);
    const tail = r.rates.slice(-100);
    expect(tail.reduce((a, b) => a + b, 0) / tail.length).toBeGreaterThan(18_000);
    // Near the knee: what the cluster serves plus its queue, not the maximum.
    expect(throttle.limit).toBeLessThanOrEqual(100 + 64);
  });

  it('ramps up and holds against a slow cluster too (400 ms round trips)', () => {
    const throttle = new AdaptiveThrottle({ min: 8, max: 4096, initial: 32 });
    const r = simulate({ rate: 2_000, baseLatencyMs: 400, queueLimit: 256, seconds: 60, throttle });
    const firstFast = r.rates.findIndex((x) => x >= 1_800);
    expect(firstFast).toBeGreaterThanOrEqual(0);
    expect((firstFast + 1) * 100).toBeLessThanOrEqual(6000);
    expect(r.throttledTotal / (r.ok + r.throttledTotal)).toBeLessThan(0.05);
    const tail = r.rates.slice(-200);
    expect(tail.reduce((a, b) => a + b, 0) / tail.length).toBeGreaterThan(1_800);
  });

  it('cuts multiplicatively on 429, to below what was in flight, but not under the minimum', () => {
    const t = new AdaptiveThrottle({ min: 10, initial: 1000, max: 2000 });
    t.sample(100, { ok: 100, throttled: 5, peakInflight: 400 });
    expect(t.limit).toBe(280);
    for (let i = 0; i < 20; i++) t.sample(200 + i * 100, { ok: 0, throttled: 1, peakInflight: t.limit });
    expect(t.limit).toBe(10);
  });

  it('does not grow when the limit was not what held throughput back', () => {
    const t = new AdaptiveThrottle({ initial: 64 });
    for (let i = 1; i <= 50; i++) t.sample(i * 100, { ok: 500, throttled: 0, peakInflight: 10 });
    expect(t.limit).toBe(64);
  });

  it('climbs to the maximum against a cluster that never pushes back', () => {
    const t = new AdaptiveThrottle({ initial: 16, max: 512 });
    const r = simulate({ rate: 1e9, baseLatencyMs: 2, queueLimit: 1e9, seconds: 3, throttle: t });
    expect(t.limit).toBe(512);
    expect(r.throttledTotal).toBe(0);
  });

  it('fixed limit stays fixed', () => {
    const t = new FixedThrottle(64);
    t.sample();
    expect(t.limit).toBe(64);
  });
});
