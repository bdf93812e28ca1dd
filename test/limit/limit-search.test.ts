import { describe, expect, it } from 'vitest';
import { AdaptiveLimit, type LimitChange } from '../../src/limit/limit-search.js';

/**
 * The adaptive search alone, fed the documents/s a cluster of `lanes` visitor threads gives: each chain in flight
 * adds `perChain` documents/s until the lanes are all busy, then nothing (as the simulator's visit cost does).
 */
function drive(
  search: AdaptiveLimit,
  rate: (limit: number, window: number) => number,
  windows: number,
): { limits: number[]; changes: LimitChange[] } {
  const limits: number[] = [];
  const changes: LimitChange[] = [];
  for (let w = 0; w < windows; w++) {
    const change = search.observe({ documentsPerSecond: rate(search.limit, w), held: true });
    if (change !== undefined) changes.push(change);
    limits.push(search.limit);
  }
  return { limits, changes };
}

const cluster =
  (lanes: number, perChain = 1000) =>
  (limit: number): number =>
    Math.min(limit, lanes) * perChain;

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
    expect(changes.slice(0, 5).map((c) => `${c.reason} ${c.limit}`)).toEqual([
      'grow 8',
      'grow 16',
      'grow 32',
      'grow 64',
      'grow 128',
    ]);
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
});
