import { describe, expect, it } from 'vitest';
import {
  chooseConnection,
  latencyDecayMs,
  latencySample,
  loadOf,
  lossSpeedup,
  lossWindowAges,
  nextTypical,
  observeLatency,
  retireAfterMs,
  type Choosable,
} from '../../../src/http/h2/connection-choice.js';

/** The choice's policy alone: no socket, no clock but the one given. */

/** A deterministic Math.random: the same draws every run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Fake extends Choosable {
  active: number;
  room: number;
  name: string;
}

const conn = (name: string, cost: number, active = 0, room = 100, sampledAt = 0, unansweredSince = Infinity): Fake => ({
  name,
  cost,
  active,
  room,
  sampledAt,
  unansweredSince,
});

describe('peak-EWMA latency', () => {
  it('takes a slower sample at once and a faster one by its time weight', () => {
    const c = conn('a', 10);
    observeLatency(c, 50, 1);
    expect(c.cost).toBe(50);
    // A faster sample right after moves it little; the same sample after a long gap moves it most of the way.
    const soon = { ...c };
    observeLatency(soon, 10, 1 + 10);
    const late = { ...c };
    observeLatency(late, 10, 1 + 3 * latencyDecayMs);
    expect(soon.cost).toBeLessThan(50);
    expect(soon.cost).toBeGreaterThan(49);
    expect(late.cost).toBeLessThan(13);
    expect(late.cost).toBeGreaterThan(10);
  });

  it('scores (streams + 1) × cost, the cost read as decaying toward 0 while no sample comes', () => {
    const c = conn('a', 20, 3, 100, 0);
    expect(loadOf(c, 0)).toBeCloseTo(4 * 20, 1);
    expect(loadOf(c, latencyDecayMs)).toBeCloseTo((4 * 20) / Math.E, 1);
    // Without any sample, connections are still told apart by their streams.
    expect(loadOf(conn('b', 0, 1), 0)).toBeLessThan(loadOf(conn('c', 0, 2), 0));
  });

  it('does not decay the cost of a connection whose oldest request waits longer than its estimate: the wait grows its cost', () => {
    // Answered at 20 ms, then silent: requests sent at 0 still wait a minute later.
    const silent = conn('silent', 20, 3, 100, 0, 0);
    const quiet = conn('quiet', 20, 3, 100, 0);
    expect(loadOf(silent, 60_000)).toBeGreaterThan(loadOf(silent, 1_000));
    expect(loadOf(silent, 1_000)).toBeGreaterThan(loadOf(silent, 0));
    expect(loadOf(silent, 60_000)).toBeGreaterThan(loadOf(quiet, 60_000));
    // A wait within the estimate is no sign of trouble: the cost reads as without one.
    expect(loadOf(conn('busy', 20, 3, 100, 0, 95), 100)).toBeCloseTo(loadOf(quiet, 100), 6);
    // And the choice leaves it for a healthy connection with as many streams, however long the silence.
    const healthy = conn('healthy', 20, 3, 100, 59_990);
    for (let i = 0; i < 20; i++) expect(chooseConnection([silent, healthy], 60_000, Math.random)?.name).toBe('healthy');
  });

  it('counts an overloaded answer as no faster than twice the typical latency', () => {
    expect(latencySample(200, 3, 10)).toBe(3);
    expect(latencySample(429, 3, 10)).toBe(20);
    expect(latencySample(503, 30, 10)).toBe(30);
    expect(nextTypical(0, 8)).toBe(8);
    expect(nextTypical(8, 40)).toBe(9);
  });
});

describe('power of two choices', () => {
  it('picks nothing when no connection has room, and the one there is otherwise', () => {
    const random = seeded(1);
    expect(chooseConnection([], 0, random)).toBeUndefined();
    expect(chooseConnection([conn('a', 1, 5, 0)], 0, random)).toBeUndefined();
    const only = conn('a', 1);
    expect(chooseConnection([only], 0, random)).toBe(only);
    // The two drawn full: the least loaded one with room, wherever it is.
    const full = [conn('a', 1, 9, 0), conn('b', 1, 9, 0), conn('c', 5, 3), conn('d', 1, 9, 0), conn('e', 2, 1)];
    for (let i = 0; i < 50; i++) expect(['c', 'e']).toContain(chooseConnection(full, 0, random)!.name);
  });

  it('spreads requests over connections alike, filling none first', () => {
    const random = seeded(2);
    const conns = Array.from({ length: 16 }, (_, i) => conn(`c${i}`, 4));
    for (let i = 0; i < 320; i++) chooseConnection(conns, 0, random)!.active++;
    const counts = conns.map((c) => c.active);
    // 20 each on average; two choices keep every one within a few of it.
    expect(Math.min(...counts)).toBeGreaterThanOrEqual(15);
    expect(Math.max(...counts)).toBeLessThanOrEqual(25);
  });

  it('gives a connection to a slow node less than half what a fast one gets, and still some', () => {
    const random = seeded(3);
    const fast = [conn('f1', 2), conn('f2', 2), conn('f3', 2)];
    const slow = conn('slow', 20);
    const all = [fast[0], slow, fast[1], fast[2]];
    // Requests that stay open (a load that builds up): each choice sees the streams the earlier ones opened.
    for (let i = 0; i < 400; i++) chooseConnection(all, 0, random)!.active++;
    for (const f of fast) expect(slow.active).toBeLessThan(f.active / 2);
    expect(slow.active).toBeGreaterThan(0);
  });

  it('tries a connection that was slow once again after a while without samples', () => {
    const random = seeded(4);
    const fast = conn('fast', 2, 0, 100, 0);
    const once = conn('once', 40, 0, 100, 0);
    const wins = (now: number) => {
      let n = 0;
      for (let i = 0; i < 100; i++) if (chooseConnection([fast, once], now, random) === once) n++;
      return n;
    };
    expect(wins(0)).toBe(0);
    // The fast one sampled just now, the other not for a minute: its peak has faded.
    fast.sampledAt = 60_000;
    expect(wins(60_000)).toBe(100);
  });
});

describe('renewal schedule', () => {
  it('renews between half the age and the age, spread at random; never with no age', () => {
    const random = seeded(5);
    const ages = Array.from({ length: 1000 }, () => retireAfterMs(60_000, Infinity, random));
    expect(Math.min(...ages)).toBeGreaterThan(30_000);
    expect(Math.max(...ages)).toBeLessThanOrEqual(60_000);
    // Spread over the range, not bunched: each sixth of it has some.
    for (let k = 0; k < 6; k++)
      expect(ages.filter((a) => a > 30_000 + k * 5000 && a <= 35_000 + k * 5000).length).toBeGreaterThan(100);
    expect(retireAfterMs(0, Infinity, random)).toBe(Infinity);
  });

  it('renews faster for a while after a connection was lost', () => {
    const random = seeded(6);
    const age = 60_000;
    for (let i = 0; i < 100; i++) {
      const soon = retireAfterMs(age, 1_000, random);
      expect(soon).toBeLessThanOrEqual(age / lossSpeedup);
      expect(soon).toBeGreaterThan(age / lossSpeedup / 2);
    }
    expect(retireAfterMs(age, lossWindowAges * age, random)).toBeGreaterThan(age / 2);
  });
});
