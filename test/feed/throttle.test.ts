import { describe, expect, it } from 'vitest';
import { AdaptiveThrottle, createThrottle, FixedThrottle } from '../../src/feed/throttle.js';

/**
 * A fluid model of a feed against a cluster, one 100 ms sample at a time. The cluster runs at most `slots`
 * operations at once for `serviceMs` each (0 slots: as many as come, a cluster so large that only latency bounds
 * it); the client adds `roundTripMs` and can send at most `clientRate` operations/s (its CPU). Beyond what they
 * serve, operations wait: at the service up to `queueLimit` (then 429), or in the client's buffers. By Little's
 * law, throughput is what is in flight over the latency.
 */
interface Cluster {
  slots?: number;
  serviceMs: number;
  roundTripMs?: number;
  /** The client's own ceiling, ops/s; a function of the limit for a client whose cost per operation falls as it batches more. */
  clientRate?: number | ((limit: number) => number);
  queueLimit?: number;
  /** Relative noise on each sample's throughput (a seeded walk in ±noise). */
  noise?: number;
  /**
   * A proxy in front that holds at most this many requests (nginx's worker_connections): beyond it, requests are
   * answered at once with its error page, which the feed takes as a 429.
   */
  proxyLimit?: number;
}

function simulate(cluster: Cluster | ((second: number) => Cluster), seconds: number, throttle: AdaptiveThrottle) {
  const sampleMs = 100;
  let ok = 0;
  let throttledTotal = 0;
  const rates: number[] = [];
  const limits: number[] = [];
  const latencies: number[] = [];
  const refusals: number[] = [];
  let seed = 11;
  // The first answers of a window waited as long as the queue was when it began (at the start, none).
  let latencyBefore = 0;
  const random = (): number => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  for (let t = sampleMs; t <= seconds * 1000; t += sampleMs) {
    const c = typeof cluster === 'function' ? cluster(t / 1000) : cluster;
    const limit = throttle.limit;
    const base = c.serviceMs + (c.roundTripMs ?? 0.5);
    const serviceRate = c.slots ? (c.slots * 1000) / c.serviceMs : Infinity;
    const rate = Math.min(serviceRate, clientRateOf(c, limit));
    // In flight beyond what the service and the client turn over at the base latency waits; what waits at the
    // service beyond its queue is refused.
    const waiting = Math.max(0, limit - (rate * base) / 1000);
    const atService = rate === serviceRate ? waiting : 0;
    const refusedByProxy = Math.max(0, limit - (c.proxyLimit ?? Infinity));
    const rejected = Math.max(0, atService - (c.queueLimit ?? 256), refusedByProxy);
    const accepted = limit - rejected;
    const latencyMs = Math.max(base, (accepted / rate) * 1000);
    const noise = 1 + (random() * 2 - 1) * (c.noise ?? 0);
    const served = ((accepted * 1000) / latencyMs) * (sampleMs / 1000) * noise;
    const throttled = rejected > 0 ? Math.ceil((rejected * sampleMs) / latencyMs) : 0;
    ok += served;
    throttledTotal += throttled;
    rates.push(served * (1000 / sampleMs));
    limits.push(limit);
    latencies.push(latencyMs);
    refusals.push(throttled);
    const minLatencyMs = Math.max(base, Math.min(latencyMs, latencyBefore));
    latencyBefore = latencyMs;
    throttle.sample(t, { ok: served, throttled, peakInflight: limit, latencyMs, minLatencyMs, answers: served });
  }
  const tail = (xs: number[], share = 0.5) => xs.slice(Math.floor(xs.length * (1 - share)));
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  return {
    ok,
    throttledShare: throttledTotal / (ok + throttledTotal),
    rates,
    limits,
    latencies,
    /** Mean throughput over the last half. */
    tailRate: mean(tail(rates)),
    tailLatency: mean(tail(latencies)),
    /** The first second at which the throughput reached `x`. */
    secondsTo: (x: number) => (rates.findIndex((r) => r >= x) + 1) / 10,
    /** The 429s (or proxy pages) after the first `seconds`. */
    refusedAfter: (seconds: number) => refusals.slice(seconds * 10).reduce((a, b) => a + b, 0),
    /** The longest latency of the first `seconds`. */
    worstLatencyIn: (seconds: number) => Math.max(...latencies.slice(0, seconds * 10)),
  };
}

function clientRateOf(c: Cluster, limit: number): number {
  return typeof c.clientRate === 'function' ? c.clientRate(limit) : (c.clientRate ?? Infinity);
}

/**
 * What a sweep of fixed limits finds in the model: the best throughput, and the knee (the fewest in flight that
 * reach 0.95 of it) with its latency. The goal is stated against these.
 */
function sweep(c: Cluster): { best: number; knee: number; kneeLatencyMs: number } {
  const at = (limit: number) => {
    const base = c.serviceMs + (c.roundTripMs ?? 0.5);
    const rate = Math.min(c.slots ? (c.slots * 1000) / c.serviceMs : Infinity, clientRateOf(c, limit));
    const latencyMs = Math.max(base, (limit / rate) * 1000);
    return { rate: (limit * 1000) / latencyMs, latencyMs };
  };
  const levels = Array.from({ length: 1024 }, (_, i) => i + 1);
  const best = Math.max(...levels.map((l) => at(l).rate));
  const knee = levels.find((l) => at(l).rate >= 0.95 * best)!;
  return { best, knee, kneeLatencyMs: at(knee).latencyMs };
}

describe('AdaptiveThrottle', () => {
  it('a client warming up while it climbs does not read its own gains as capacity: no overshoot into the queue', () => {
    // 32 slots of 2 ms (16,000/s); the client starts at a fifth of its 40,000/s and is warm after 2 s. Each doubling
    // of the climb gains throughput from the warm-up, while its latency doubles in the service's queue.
    const warming = (s: number): Cluster => ({
      slots: 32,
      serviceMs: 2,
      clientRate: 40_000 * Math.min(1, 0.2 + 0.4 * s),
    });
    const r = simulate(warming, 30, new AdaptiveThrottle());
    const { best, kneeLatencyMs } = sweep(warming(10));
    expect(Math.max(...r.limits)).toBeLessThanOrEqual(128);
    expect(r.throttledShare).toBe(0);
    expect(r.tailRate).toBeGreaterThan(0.95 * best);
    expect(r.tailLatency).toBeLessThanOrEqual(1.5 * kneeLatencyMs);
  });

  it('an application that embeds at feed time (8 slots of 100 ms, a queue of 64): comes down to its slots, not the queue', () => {
    const c: Cluster = { slots: 8, serviceMs: 100, queueLimit: 64, noise: 0.03 };
    const r = simulate(c, 120, new AdaptiveThrottle());
    const { best, kneeLatencyMs } = sweep(c);
    expect(r.tailRate).toBeGreaterThan(0.95 * best);
    // Below the lowest limit of the established feeders (16, twice the slots): a queue of its own at the service.
    expect(r.tailLatency).toBeLessThanOrEqual(1.5 * kneeLatencyMs);
    expect(Math.max(...r.limits.slice(600))).toBeLessThan(16);
    // The start: the first answers came in 100 ms, so a start at 16 is seen to queue, and the climb never begins.
    expect(r.worstLatencyIn(10)).toBeLessThanOrEqual(3 * kneeLatencyMs);
    expect(r.throttledShare).toBe(0);
  });

  it('an application that embeds at feed time, its answers counted coarsely (8 a sample): still at its slots', () => {
    // 80 answers a second are 8 a sample and 32 a window: each count is off by a few answers, up to 25 % a sample
    // here, and lucky windows kept probes up into the queue (1.4-1.6 x the knee's latency, as 10 and 12 in flight
    // gave against Jetty).
    const c: Cluster = { slots: 8, serviceMs: 100, queueLimit: 64, noise: 0.25 };
    const { best, kneeLatencyMs } = sweep(c);
    for (const seconds of [60, 90]) {
      const r = simulate(c, seconds, new AdaptiveThrottle());
      expect(r.tailRate).toBeGreaterThan(0.95 * best);
      expect(r.tailLatency).toBeLessThanOrEqual(1.1 * kneeLatencyMs);
    }
  });

  it('a bounded container sharing its cores (the objective held 3 x the knee): sits at the knee, not above it', () => {
    // Throughput creeps up past the knee (more in flight saves the client CPU that the container then uses): 0.95
    // of the best at 48, the best at 128 and beyond. The objective kept what every step down cost (3 % or more).
    const c: Cluster = {
      slots: 32,
      serviceMs: 2,
      clientRate: (limit) => Math.min(14_500, 13_775 * (limit / 48) ** 0.0523),
      noise: 0.02,
    };
    const r = simulate(c, 90, new AdaptiveThrottle());
    const { best, kneeLatencyMs } = sweep(c);
    // Short of 0.95: where a quarter more in flight pays 1 %, the search never sees the best (at 3 x the knee)
    // and sits where the queue starts, at about 0.93 of it.
    expect(r.tailRate).toBeGreaterThan(0.92 * best);
    expect(r.tailLatency).toBeLessThanOrEqual(1.25 * kneeLatencyMs);
    expect(r.throttledShare).toBe(0);
  });

  it('stays below a proxy in front that holds 300 requests: cut on its error pages, then held below', () => {
    const c: Cluster = { serviceMs: 10, clientRate: 60_000, proxyLimit: 300, noise: 0.03 };
    const t = new AdaptiveThrottle();
    const r = simulate(c, 60, t);
    expect(r.tailRate).toBeGreaterThan((0.9 * (300 * 1000)) / 10.5);
    expect(Math.max(...r.limits.slice(100))).toBeLessThanOrEqual(300);
    // A refusal sets a ceiling below what was in flight: after the climb's overshoot and one probe into the wall,
    // the probes up stop short of it.
    expect(r.refusedAfter(5)).toBe(0);
  });

  it('follows a cluster that loses one node of six and gets it back', () => {
    const phases = (s: number): Cluster => ({ slots: s >= 20 && s < 40 ? 5 * 16 : 6 * 16, serviceMs: 10, noise: 0.03 });
    const r = simulate(phases, 60, new AdaptiveThrottle());
    const mean = (from: number, to: number, xs: number[]) =>
      xs.slice(from * 10, to * 10).reduce((a, b) => a + b, 0) / ((to - from) * 10);
    expect(mean(10, 20, r.rates)).toBeGreaterThan(0.93 * 9_600);
    // Down: the queue that the lost node leaves is given back within seconds, by latency, before any 429.
    expect(mean(28, 40, r.rates)).toBeGreaterThan(0.93 * 8_000);
    expect(mean(28, 40, r.latencies)).toBeLessThan(1.25 * 10.5);
    // Up again: the node's share is taken within seconds.
    expect(mean(50, 60, r.rates)).toBeGreaterThan(0.93 * 9_600);
    expect(r.throttledShare).toBe(0);
  });

  it('a client whose cost falls as it batches: settles near the knee the sweep of fixed limits finds', () => {
    // The client alone would do 10,000/s at 16 in flight, more with more (its batches grow), up to 30,000/s; the
    // cluster bounds it first: 32 slots of 2 ms, 16,000/s.
    const c: Cluster = {
      slots: 32,
      serviceMs: 2,
      clientRate: (limit) => Math.min(30_000, 10_000 * (limit / 16) ** 0.25),
      noise: 0.03,
    };
    const r = simulate(c, 60, new AdaptiveThrottle());
    const { best, kneeLatencyMs } = sweep(c);
    // Where throughput grows as the limit^0.25, the objective (throughput / limit^0.3) paid for no step up, and the
    // search held 0.89 of the best; the knee rule steps up while a quarter more pays 4 %.
    expect(r.tailRate).toBeGreaterThan(0.95 * best);
    expect(r.tailLatency).toBeLessThanOrEqual(1.25 * kneeLatencyMs);
    expect(r.throttledShare).toBe(0);
  });

  it('a bounded cluster (32 slots of 10 ms): its capacity, latency near the service time, no 429', () => {
    const r = simulate({ slots: 32, serviceMs: 10, noise: 0.05 }, 60, new AdaptiveThrottle());
    expect(r.tailRate).toBeGreaterThan(0.9 * 3200);
    expect(r.throttledShare).toBe(0);
    // More in flight than the slots only queues: the limit comes back to within a small multiple of them.
    expect(r.tailLatency).toBeLessThan(2 * 10.5);
  });

  it('a cluster only latency bounds, the client CPU the limit: near its rate, latency within a small multiple', () => {
    const r = simulate({ serviceMs: 10, clientRate: 25_000, noise: 0.05 }, 60, new AdaptiveThrottle());
    expect(r.secondsTo(0.9 * 25_000)).toBeLessThanOrEqual(3);
    expect(r.tailRate).toBeGreaterThan(0.9 * 25_000);
    expect(r.tailLatency).toBeLessThan(2 * 10.5);
    expect(Math.max(...r.limits.slice(100))).toBeLessThan(1024);
  });

  it('comes back down from far above the knee on latency alone, before any 429', () => {
    const r = simulate({ slots: 32, serviceMs: 10, queueLimit: 100_000 }, 20, new AdaptiveThrottle({ initial: 1000 }));
    expect(r.throttledShare).toBe(0);
    // 1,000 in flight against 32 slots is 300 ms of queue; within 10 s the queue is gone, throughput kept (over the
    // seconds after, less what the probes down below the slots cost).
    const mean = (xs: number[]) => xs.slice(100).reduce((a, b) => a + b, 0) / xs.slice(100).length;
    expect(mean(r.latencies)).toBeLessThan(1.5 * 10.5);
    expect(mean(r.rates)).toBeGreaterThan(0.9 * 3200);
  });

  it('a process warming up against a fast cluster: its first slow windows take it below the start, never', () => {
    // The client does a tenth of its 50,000/s at first and is warm after 3 s: its first answers are slow and every
    // later window faster, which a step down read as the step's gain (the limit went from 16 to 5 against serve).
    const warming = (s: number): Cluster => ({ serviceMs: 1, clientRate: 50_000 * Math.min(1, 0.1 + 0.3 * s) });
    const r = simulate(warming, 20, new AdaptiveThrottle());
    expect(Math.min(...r.limits.slice(0, 50))).toBeGreaterThanOrEqual(8);
    expect(r.tailRate).toBeGreaterThan(0.9 * 50_000);
  });

  it('grows while throughput grows: from 64 to a fast cluster in about a second', () => {
    const r = simulate({ serviceMs: 2, clientRate: 100_000 }, 10, new AdaptiveThrottle());
    expect(r.secondsTo(90_000)).toBeLessThanOrEqual(2);
  });

  it('follows a cluster that slows down and speeds up again, without collapsing', () => {
    const phases = (s: number): Cluster =>
      s < 20 || s >= 40 ? { slots: 64, serviceMs: 10 } : { slots: 64, serviceMs: 20 };
    const r = simulate(phases, 60, new AdaptiveThrottle());
    const window = (from: number, to: number) =>
      r.rates.slice(from * 10, to * 10).reduce((a, b) => a + b, 0) / ((to - from) * 10);
    expect(window(10, 20)).toBeGreaterThan(0.9 * 6400);
    expect(window(30, 40)).toBeGreaterThan(0.9 * 3200);
    expect(window(50, 60)).toBeGreaterThan(0.9 * 6400);
    expect(r.throttledShare).toBe(0);
  });

  it('ramps up and holds against a slow cluster too (400 ms round trips)', () => {
    const r = simulate({ slots: 800, serviceMs: 400, noise: 0.03 }, 90, new AdaptiveThrottle());
    expect(r.secondsTo(1_800)).toBeLessThanOrEqual(15);
    expect(r.tailRate).toBeGreaterThan(1_800);
    expect(r.throttledShare).toBe(0);
  });

  it('halves on 429, to below what was in flight, once a round trip, but not under the minimum', () => {
    const t = new AdaptiveThrottle({ min: 10, initial: 1000, max: 2000 });
    t.sample(100, { ok: 100, throttled: 5, peakInflight: 400, latencyMs: 5 });
    expect(t.limit).toBe(200);
    // Within the same round trip: the 429s were for requests sent before the cut.
    t.sample(150, { ok: 100, throttled: 5, peakInflight: 400, latencyMs: 80 });
    expect(t.limit).toBe(200);
    for (let i = 0; i < 20; i++) t.sample(300 + i * 100, { ok: 0, throttled: 1, peakInflight: t.limit, latencyMs: 5 });
    expect(t.limit).toBe(10);
    expect(t.changes.at(-1)?.reason).toBe('cut');
  });

  it('cuts at the first 429, not at the next sample, and once a round trip', () => {
    // Until the sample, each room the limit leaves above a small queue is a request answered 429 at once and sent
    // again: a storm of hundreds within one sample.
    const t = createThrottle({});
    t.sent(64);
    t.answered(800);
    t.tick(50, 64);
    const before = t.limit;
    t.sent(before);
    t.throttled(60);
    expect(t.limit).toBe(Math.floor(before / 2));
    t.throttled(61);
    t.throttled(62);
    t.tick(100, before);
    expect(t.limit).toBe(Math.floor(before / 2));
  });

  it('learns nothing when the limit was not what held throughput back', () => {
    const t = new AdaptiveThrottle({ initial: 64 });
    for (let i = 1; i <= 100; i++) t.sample(i * 100, { ok: 500, throttled: 0, peakInflight: 10, latencyMs: 5 });
    expect(t.limit).toBe(64);
  });

  it('climbs to the maximum against a cluster that never pushes back', () => {
    const t = new AdaptiveThrottle({ initial: 16, max: 512 });
    const r = simulate({ serviceMs: 2 }, 20, t);
    // At the maximum, but for the probes down that throughput undoes.
    const late = r.limits.slice(100);
    expect(late.filter((l) => l === 512).length).toBeGreaterThan(0.8 * late.length);
    expect(r.throttledShare).toBe(0);
  });

  it('reads a window that let go a backlog (a cluster after a pause) as no measurement of the limit', () => {
    // A saturated cluster: 12,800/s at any limit, 5 ms answers at 64 in flight. Every 2 s it pauses, and what it held
    // comes at once in one sample: twice the answers, 100 ms each. By Little's law that sample held 2,560 in flight,
    // not 64; counted, it made a probe up look paid and a held level look faster than it is.
    const t = new AdaptiveThrottle({ initial: 64 });
    for (let now = 50; now <= 30_000; now += 50) {
      const backlog = now % 2000 === 0;
      const latencyMs = backlog ? 100 : (5 * t.limit) / 64;
      const ok = backlog ? 1280 : 640;
      t.sample(now, { ok, throttled: 0, peakInflight: t.limit, latencyMs, minLatencyMs: 2.5, answers: ok });
    }
    for (const c of t.changes) expect(c.documentsPerSecond).toBeLessThan(1.05 * 12_800);
    expect(Math.max(...t.changes.slice(2).map((c) => c.limit))).toBeLessThanOrEqual(80);
  });

  it('fixed limit stays fixed', () => {
    const t = new FixedThrottle(64);
    t.sample();
    expect(t.limit).toBe(64);
  });
});
