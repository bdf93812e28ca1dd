import { describe, expect, it } from 'vitest';
import { AdaptiveLimit, type LimitChange, type LimitSample, mergeQueueReadings } from '../../src/limit/limit-search.js';
import { feedSearchSettings } from '../../src/feed/throttle.js';

/**
 * The adaptive search alone, fed one window at a time what `rate` gives for the limit: the documents/s (as `cluster`
 * gives them), or a whole sample with its latencies; every window held.
 */
function drive(
  search: AdaptiveLimit,
  rate: (limit: number, window: number) => number | Omit<LimitSample, 'held'>,
  windows: number,
): { limits: number[]; changes: LimitChange[] } {
  const limits: number[] = [];
  const changes: LimitChange[] = [];
  for (let w = 0; w < windows; w++) {
    const r = rate(search.limit, w);
    const change = search.observe({ ...(typeof r === 'number' ? { documentsPerSecond: r } : r), held: true });
    if (change !== undefined) changes.push(change);
    limits.push(search.limit);
  }
  return { limits, changes };
}

/**
 * A cluster of `lanes` visitor threads: each chain in flight adds `perChain` documents/s until the lanes are all
 * busy, then nothing (as the simulator's visit cost does).
 */
const cluster =
  (lanes: number, perChain = 1000) =>
  (limit: number): number =>
    Math.min(limit, lanes) * perChain;

/** The climb against 64 lanes from 4: doubling up to 128, which is no better than 64. */
const climbFrom4To128 = ['grow 8', 'grow 16', 'grow 32', 'grow 64', 'grow 128'];

describe('the adaptive in-flight search', () => {
  it('doubles from the start while documents/s grows, undoes the first step that does not pay, and ends near the lanes there are', () => {
    for (const lanes of [1, 2, 4, 16, 64, 200]) {
      const search = new AdaptiveLimit({ start: 4, max: 256 });
      const { limits } = drive(search, cluster(lanes), 400);
      const end = limits.at(-1)!;
      // At the lanes, or within one probe step of them (a probe a quarter up or a fifth down is undone again).
      expect(end, `${lanes} lanes`).toBeGreaterThanOrEqual(Math.min(lanes, 4) === lanes ? 1 : Math.floor(lanes * 0.8));
      expect(end, `${lanes} lanes`).toBeLessThanOrEqual(Math.max(Math.ceil(lanes * 1.25), lanes + 1));
    }
  });

  it('climbs by doubling: 4, 8, 16, 32, 64 against 64 lanes, one settle and one measured window a step', () => {
    const search = new AdaptiveLimit({ start: 4, max: 256 });
    const { limits, changes } = drive(search, cluster(64), 12);
    expect(changes.slice(0, 5).map((c) => `${c.reason} ${c.limit}`)).toEqual(climbFrom4To128);
    // 128 is no better than 64: undone.
    expect(limits).toEqual([4, 8, 8, 16, 16, 32, 32, 64, 64, 128, 128, 64]);
    expect(changes.at(-1)).toMatchObject({ reason: 'undo', limit: 64 });
    expect(search.isGrowing).toBe(false);
  });

  it('never leaves its bounds', () => {
    const search = new AdaptiveLimit({ start: 4, max: 6 });
    const { limits } = drive(search, cluster(1000), 200);
    expect(Math.max(...limits)).toBe(6);
    const low = new AdaptiveLimit({ start: 1, max: 256 });
    expect(Math.min(...drive(low, cluster(1), 300).limits)).toBe(1);
  });

  it('counts no window that did not hold the limit or delivered nothing', () => {
    const search = new AdaptiveLimit({ start: 4, max: 256 });
    // The settle window, then nothing measurable: no decision.
    for (let i = 0; i < 20; i++)
      expect(search.observe({ documentsPerSecond: i === 0 ? 100 : 0, held: true })).toBeUndefined();
    for (let i = 0; i < 20; i++) expect(search.observe({ documentsPerSecond: 4000, held: false })).toBeUndefined();
    expect(search.limit).toBe(4);
    expect(search.observe({ documentsPerSecond: 4000, held: true })).toMatchObject({ reason: 'grow', limit: 8 });
  });

  it('steps back to fewer chains when they give the same documents/s (after an overshoot)', () => {
    // 40 lanes: 32 -> 64 is worth 25 % (more than 2^0.3 = 23 %), so 64 is kept (128 is tried and undone); the
    // probes down then find 40-ish.
    const search = new AdaptiveLimit({ start: 4, max: 256 });
    const { limits, changes } = drive(search, cluster(40), 600);
    expect(changes.filter((c) => c.reason === 'grow').map((c) => c.limit)).toEqual([8, 16, 32, 64, 128]);
    expect(limits[12]).toBe(64);
    expect(changes.some((c) => c.reason === 'probe-down')).toBe(true);
    expect(limits.at(-1)).toBeLessThanOrEqual(50);
    expect(limits.at(-1)).toBeGreaterThanOrEqual(32);
  });

  it('holds longer after each probe that was undone, so a settled visit rarely leaves its level', () => {
    const search = new AdaptiveLimit({ start: 16, max: 256 });
    const { changes } = drive(search, cluster(16), 1000);
    const late = changes.filter((c) => c.reason !== 'undo').length;
    // 1000 windows at 4 windows a probe would be some 150 probes; with the hold doubling up to 32, far fewer.
    expect(late).toBeLessThan(40);
  });

  it('keeps its level under noise of a few percent (what a window of real documents/s looks like)', () => {
    let seed = 7;
    const noise = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return 1 + ((seed / 2 ** 31) * 2 - 1) * 0.08;
    };
    const search = new AdaptiveLimit({ start: 4, max: 256 });
    const { limits } = drive(search, (limit) => cluster(24)(limit) * noise(), 500);
    const late = limits.slice(100);
    expect(Math.min(...late)).toBeGreaterThanOrEqual(12);
    expect(Math.max(...late)).toBeLessThanOrEqual(48);
  });

  it('with climbGain, measures a step that did not pay once more, and climbs on when the second window pays', () => {
    const search = new AdaptiveLimit({ start: 4, max: 256, climbGain: 0.1 });
    // 8 is slow in its first window (the process warming up), as fast as its lanes in the second.
    let slowOnce = true;
    const { changes } = drive(
      search,
      (limit) => {
        if (limit === 8 && slowOnce) {
          slowOnce = false;
          return 4000;
        }
        return cluster(64)(limit);
      },
      14,
    );
    expect(changes.slice(0, 5).map((c) => `${c.reason} ${c.limit}`)).toEqual(climbFrom4To128);
  });

  it('with climbGain, climbs on while a doubling raises throughput by that much and ends at its best level by the objective', () => {
    // Each doubling from 16 on brings 15 %: less than the objective's 23 %, more than the 10 % asked.
    const rate = (limit: number): number => (limit <= 16 ? limit * 1000 : 16_000 * 1.15 ** Math.log2(limit / 16));
    const search = new AdaptiveLimit({ start: 4, max: 256, climbGain: 0.1 });
    const { changes } = drive(search, rate, 30);
    expect(changes.filter((c) => c.reason === 'grow').map((c) => c.limit)).toEqual([8, 16, 32, 64, 128, 256]);
    // At the maximum the climb ends; the best level by the objective is 16, where doubling stopped paying 23 %.
    const end = changes.find((c) => c.reason !== 'grow');
    expect(end).toMatchObject({ reason: 'undo', limit: 16 });
    expect(search.isGrowing).toBe(false);
  });

  it('with climbGain, ends the climb when a step fails twice, back at the level before it', () => {
    const search = new AdaptiveLimit({ start: 4, max: 256, climbGain: 0.1 });
    const { limits, changes } = drive(search, cluster(16), 12);
    expect(changes.map((c) => `${c.reason} ${c.limit}`).slice(0, 4)).toEqual([
      'grow 8',
      'grow 16',
      'grow 32',
      'undo 16',
    ]);
    // 32 is measured in two windows after its settle window before the undo.
    expect(limits.slice(0, 9)).toEqual([4, 8, 8, 16, 16, 32, 32, 32, 16]);
  });

  it('with maxDownLoss, keeps no probe down that costs more throughput than that, whatever the objective allows', () => {
    // Throughput falls off gently below 64: a fifth fewer costs 5 %, which the objective (6.5 %) would keep.
    const gentle = (limit: number): number => 64_000 * Math.min(1, (limit / 64) ** 0.23);
    const loose = drive(new AdaptiveLimit({ start: 64, max: 64, momentum: true }), gentle, 300).limits;
    const strict = drive(
      new AdaptiveLimit({ start: 64, max: 64, momentum: true, maxDownLoss: 0.03 }),
      gentle,
      300,
    ).limits;
    expect(Math.min(...loose.slice(100))).toBeLessThan(52);
    expect(Math.min(...strict.slice(100))).toBeGreaterThanOrEqual(51);
    expect(strict.at(-1)).toBe(64);
  });

  it("counts the climb's end as no failed probe: the first probe after it comes after the first hold of 4 windows", () => {
    const search = new AdaptiveLimit({ start: 4, max: 256 });
    const { changes, limits } = drive(search, cluster(16), 40);
    // grow 8, 16, 32; 32 undone (window 6); settle, base, 4 windows held; then the first probe.
    expect(changes.slice(0, 4).map((c) => c.reason)).toEqual(['grow', 'grow', 'grow', 'undo']);
    const undoneAt = limits.indexOf(16, 6);
    const probeAt = limits.findIndex((l, i) => i > undoneAt && l !== 16);
    expect(probeAt - undoneAt).toBe(6);
  });

  it('with confirmDown, probes down that one lucky window made look better are mostly undone: less drift down', () => {
    // Throughput that falls by a tenth for a fifth fewer in flight (more than maxDownLoss allows), each window 15 %
    // lucky or unlucky at random (seeded): one lucky window at a fifth fewer looks like no loss.
    const windowsBelow = (confirmDown: boolean, seed: number) => {
      let x = seed;
      const lucky = () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0) < 2 ** 31;
      const search = new AdaptiveLimit({ start: 100, max: 100, maxDownLoss: 0.03, confirmDown });
      const rate = (limit: number) => 10_000 * Math.sqrt(limit / 100) * (lucky() ? 1.15 : 0.85);
      return drive(search, rate, 300).limits.filter((l) => l < 100).length;
    };
    for (const seed of [1, 3])
      expect(windowsBelow(true, seed) * 2, `seed ${seed}`).toBeLessThan(windowsBelow(false, seed));
  });
});

describe('the knee rule (kneeLoss)', () => {
  /** The feed's settings of the search (src/feed/throttle.ts), at a start of `start`. */
  const knee = (start: number) => new AdaptiveLimit({ start, max: 1024, ...feedSearchSettings });

  /** 16 slots of 10 ms (1,600/s): beyond 16 in flight, each more waits; the shortest answer is 10 ms. */
  const slots16 = (limit: number) => ({
    documentsPerSecond: Math.min(limit, 16) * 100,
    latencyMs: 10 * Math.max(1, limit / 16),
    minLatencyMs: 10,
  });

  it('keeps no step down while the caller warms up, however fast its window was', () => {
    // Each window faster than the one before, at any limit, from a third of the cluster's rate to all of it over 40
    // windows: a process compiling its code as it goes. A step down measured then looks like it cost nothing.
    const { changes } = drive(
      knee(16),
      (limit, w) => {
        const s = slots16(limit);
        return { ...s, documentsPerSecond: s.documentsPerSecond * Math.min(1, 0.33 + w / 60), warming: true };
      },
      60,
    );
    const kept = changes.filter((c, i) => c.reason === 'probe-down' && changes[i + 1]?.reason !== 'undo');
    expect(kept).toEqual([]);
    expect(Math.min(...changes.map((c) => c.limit))).toBeGreaterThanOrEqual(16);
  });

  it('while the caller warms up, holds one window between probes up, not four or more', () => {
    const { changes } = drive(knee(16), (limit) => ({ ...slots16(limit), warming: true }), 40);
    // Each probe up (undone: 16 slots) then takes a settle, two windows, the undo's settle and base, and one held.
    expect(changes.filter((c) => c.reason === 'probe-up').length).toBeGreaterThanOrEqual(5);
  });

  it('after a climb undone for its queue, holds there: its first probe goes up, not below where the climb came from', () => {
    const search = knee(8);
    const { changes } = drive(search, slots16, 20);
    expect(changes.slice(0, 4).map((c) => `${c.reason} ${c.limit}`)).toEqual([
      'grow 16',
      'grow 32',
      'undo 16',
      'probe-up 20',
    ]);
  });

  it('undoes a doubling whose answers took twice as long, though the warm-up paid for it meanwhile', () => {
    // 8 slots of 100 ms (an application that embeds at feed time): at 16 in flight, 200 ms answers. The first
    // window at 8 came while the process warmed up (68 a second), so 16 looked like 17 % more.
    const search = knee(8);
    const slots8 = (limit: number, first: boolean) => ({
      documentsPerSecond: first ? 68 : Math.min(limit, 8) * 10,
      latencyMs: 100 * Math.max(1, limit / 8),
      minLatencyMs: 100,
    });
    const { changes } = drive(search, (limit, w) => slots8(limit, w < 2), 8);
    expect(changes.map((c) => `${c.reason} ${c.limit}`)).toEqual(['grow 16', 'undo 8']);
  });

  it('holds a doubling that paid a tenth though its latency rose by four fifths (a cluster near its knee)', () => {
    // 16 nodes of one slot behind a balancer (the sweep: 32 in flight 3,212/s in 9.9 ms, 64 3,543/s in 17.9 ms,
    // 16 2,379/s in 6.7 ms): 64 is the knee, 32 gives 0.89 of it.
    const sweep: Record<number, [number, number]> = {
      8: [1300, 6.1],
      16: [2379, 6.7],
      32: [3212, 9.9],
      64: [3543, 17.9],
    };
    const search = knee(8);
    const { changes } = drive(
      search,
      (limit) => {
        const [documentsPerSecond, latencyMs] = sweep[limit] ?? [3600, 36];
        return { documentsPerSecond, latencyMs, minLatencyMs: 4.5 };
      },
      10,
    );
    expect(changes.map((c) => `${c.reason} ${c.limit}`)).toEqual(['grow 16', 'grow 32', 'grow 64']);
    expect(search.limit).toBe(64);
  });

  it('while warming up over a queue the climb could not see, probes nothing; then down first', () => {
    // 8 slots of 100 ms. At 8, the first answers took 161 ms and came 51 a second (the process warming up), so 16
    // (200 ms, 80 a second) looked like a doubling that paid with a latency a quarter up: the climb ends at 16.
    const search = knee(8);
    const changes: Array<LimitChange & { warming: boolean }> = [];
    for (let w = 0; w < 30; w++) {
      const warming = w < 12;
      const first = w < 2;
      const c = search.observe({
        documentsPerSecond: first ? 51 : Math.min(search.limit, 8) * 10,
        latencyMs: first ? 161 : 100 * Math.max(1, search.limit / 8),
        minLatencyMs: 100,
        held: true,
        warming,
      });
      if (c !== undefined) changes.push({ ...c, warming });
    }
    expect(changes[0]).toMatchObject({ reason: 'grow', limit: 16 });
    expect(changes.filter((c) => c.warming).length).toBe(1);
    expect(changes[1]).toMatchObject({ reason: 'probe-down', warming: false });
  });

  it('keeps a step down whose latency fell by all of it, though its count came under a lucky best', () => {
    // 8 slots of 100 ms: 16 in flight held a lucky 82 a second, 13 counts 78 (4.9 % under), in 162 ms instead of 200.
    const search = knee(16);
    search.noteRtt({ minLatencyMs: 100 });
    const { changes } = drive(
      search,
      (limit) => ({
        documentsPerSecond: limit >= 16 ? 82 : 78,
        latencyMs: 100 * Math.max(1, limit / 8) + (limit === 13 ? -0.5 : 0),
        minLatencyMs: 100,
      }),
      40,
    );
    const down = changes.findIndex((c) => c.reason === 'probe-down' && c.limit === 13);
    expect(down).toBeGreaterThanOrEqual(0);
    expect(changes[down + 1]?.reason).not.toBe('undo');
  });

  it('judges a step measured twice by both windows latency, not the second alone', () => {
    // A bounded container of 32 slots of 2 ms: from 40 in flight on, 14,000/s, each more waits. 120 to 96 in
    // flight: the two windows' latencies 6.6 and 7.6 ms against 8.6, a fall of 17 % for a step of 20 % (a queue
    // given back); the second alone fell 12 %, which read as throughput lost, and the step was undone.
    const at96 = [
      { documentsPerSecond: 14_000, latencyMs: 6.7 },
      { documentsPerSecond: 14_300, latencyMs: 6.6 },
      { documentsPerSecond: 13_800, latencyMs: 7.6 },
    ];
    let windowsAt96 = 0;
    const { changes } = drive(
      knee(120),
      (limit) => ({
        documentsPerSecond: (Math.min(limit, 40) / 40) * 14_000,
        latencyMs: Math.max(2.9, limit / 14),
        ...(limit === 96 ? at96[windowsAt96++] : undefined),
        minLatencyMs: 2.2,
      }),
      40,
    );
    const down = changes.findIndex((c) => c.reason === 'probe-down' && c.limit === 96);
    expect(down).toBeGreaterThanOrEqual(0);
    expect(changes[down + 1]?.reason).not.toBe('undo');
  });

  it('from a level with a queue standing (a start set high), the first probe from the hold goes down', () => {
    // 1,000 in flight against 16 slots of 10 ms: 625 ms answers where the shortest is 10.
    const search = knee(1000);
    search.noteRtt({ minLatencyMs: 10 });
    const { changes } = drive(search, slots16, 40);
    const firstProbe = changes.find((c) => c.reason.startsWith('probe'));
    expect(firstProbe?.reason).toBe('probe-down');
    expect(changes.at(-1)!.limit).toBeLessThan(100);
  });
});

describe('mergeQueueReadings', () => {
  it('takes the shortest round trip of any and adds up the waiting, skipping those without a reading', () => {
    expect(
      mergeQueueReadings([{ minRttMs: 4, queueEstimate: 10 }, undefined, { minRttMs: 2.5, queueEstimate: 6 }]),
    ).toEqual({ minRttMs: 2.5, queueEstimate: 16 });
    expect(mergeQueueReadings([undefined, undefined])).toBeUndefined();
  });
});
