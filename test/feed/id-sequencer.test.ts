import { describe, expect, it } from 'vitest';
import { IdSequencer, sequencerHash } from '../../src/feed/id-sequencer.js';
import { workerOf } from '../../src/feed/workers/route.js';
import { fnv1a } from '../../src/feed/shard.js';

describe('IdSequencer', () => {
  it('lets the first operation on an id go and holds later ones until it is released, in input order', () => {
    const s = new IdSequencer<string>();
    expect(s.admit('a', 'a1')).toBe(true);
    expect(s.admit('a', 'a2')).toBe(false);
    expect(s.admit('a', 'a3')).toBe(false);
    expect(s.release('a')).toBe('a2');
    expect(s.release('a')).toBe('a3');
    expect(s.release('a')).toBeUndefined();
    expect(s.size).toBe(0);
  });

  it('does not hold operations on other ids', () => {
    const s = new IdSequencer<string>();
    expect(s.admit('a', 'a1')).toBe(true);
    expect(s.admit('b', 'b1')).toBe(true);
    expect(s.admit('a', 'a2')).toBe(false);
    expect(s.size).toBe(2);
    expect(s.release('b')).toBeUndefined();
    expect(s.admit('b', 'b2')).toBe(true);
    expect(s.release('a')).toBe('a2');
  });

  it('keeps an id busy while the released next one is under way, and frees it after the last', () => {
    const s = new IdSequencer<number>();
    s.admit('x', 1);
    s.admit('x', 2);
    expect(s.release('x')).toBe(2);
    // 2 is under way now: a new one on x waits behind it rather than going at once.
    expect(s.admit('x', 3)).toBe(false);
    expect(s.release('x')).toBe(3);
    expect(s.release('x')).toBeUndefined();
    expect(s.admit('x', 4)).toBe(true);
  });

  it.each([
    ['8 ids', 8, 5000],
    // More ids under way than the table's first size: it grows, probes collide and deletions shift entries back.
    ['3,000 ids', 3000, 40000],
  ])(
    'lets through every operation exactly once, one at a time per id, in input order (property, %s)',
    (_name, ids, steps) => {
      const s = new IdSequencer<{ id: string; n: number }>();
      let seed = 12345;
      const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
      const underWay: { id: string; n: number }[] = [];
      const sent: { id: string; n: number }[] = [];
      const busy = new Set<string>();
      const start = (op: { id: string; n: number }) => {
        expect(busy.has(op.id)).toBe(false);
        busy.add(op.id);
        underWay.push(op);
        sent.push(op);
      };
      let n = 0;
      for (let step = 0; step < steps; step++) {
        if (rand() < 0.55) {
          const op = { id: `id:ns:music::doc-${Math.floor(rand() * ids)}`, n: n++ };
          if (s.admit(op.id, op)) start(op);
        } else if (underWay.length > 0) {
          const [done] = underWay.splice(Math.floor(rand() * underWay.length), 1);
          busy.delete(done.id);
          const next = s.release(done.id);
          if (next !== undefined) start(next);
        }
      }
      while (underWay.length > 0) {
        const done = underWay.shift()!;
        busy.delete(done.id);
        const next = s.release(done.id);
        if (next !== undefined) start(next);
      }
      expect(sent.length).toBe(n);
      expect(s.size).toBe(0);
      expect(busy.size).toBe(0);
      const byId = new Map<string, number[]>();
      for (const op of sent) byId.set(op.id, [...(byId.get(op.id) ?? []), op.n]);
      for (const ns of byId.values()) expect(ns).toEqual([...ns].sort((a, b) => a - b));
    },
  );

  it('spreads the ids of one worker of 16, and of one shard of 16, over the whole table (not into a sixteenth of it)', () => {
    const ids = Array.from({ length: 20_000 }, (_, i) => `id:ns:music::doc-${i}`);
    const regions = (picked: string[]) => new Set(picked.map((id) => sequencerHash(id) >>> 28)).size;
    expect(regions(ids.filter((id) => workerOf(id, 16) === 3))).toBe(16);
    expect(regions(ids.filter((id) => fnv1a(id) % 16 === 5))).toBe(16);
  });
});
