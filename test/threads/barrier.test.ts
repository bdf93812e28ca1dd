import { describe, expect, it } from 'vitest';
import { SnapshotBarrier } from '../../src/threads/barrier.js';

describe('SnapshotBarrier', () => {
  it('gathers every answer, holds what a worker sends after its answer until released, in order', async () => {
    const barrier = new SnapshotBarrier<string, number>();
    const asked: Array<[string, number]> = [];
    const delivered: string[] = [];
    const result = barrier.gather(['a', 'b'], (w, round) => asked.push([w, round]));
    expect(asked).toEqual([
      ['a', 1],
      ['b', 1],
    ]);
    expect(barrier.open).toBe(true);
    barrier.answer('a', 10);
    // a answered: its later messages wait; b has not: its messages go through (the cut is after them).
    barrier.admit('a', () => delivered.push('a1'));
    barrier.admit('b', () => delivered.push('b1'));
    const aPassed = barrier.passage('a').then(() => delivered.push('a2'));
    expect(delivered).toEqual(['b1']);
    expect(barrier.awaits('b')).toBe(true);
    barrier.answer('b', 20, 1);
    expect([...(await result)!.entries()]).toEqual([
      ['a', 10],
      ['b', 20],
    ]);
    barrier.admit('b', () => delivered.push('b2'));
    expect(delivered).toEqual(['b1']);
    barrier.release();
    await aPassed;
    expect(delivered).toEqual(['b1', 'a1', 'b2', 'a2']);
    expect(barrier.open).toBe(false);
    barrier.admit('a', () => delivered.push('a3'));
    expect(delivered.at(-1)).toBe('a3');
  });

  it('a worker that leaves is not waited for; a stale answer is ignored; cancel ends the round without answers', async () => {
    const barrier = new SnapshotBarrier<string, number>();
    const first = barrier.gather(['a', 'b'], () => {});
    expect(() => barrier.gather(['a'], () => {})).toThrow();
    barrier.answer('a', 1);
    barrier.leave('b');
    expect([...(await first)!.keys()]).toEqual(['a']);
    barrier.release();

    const second = barrier.gather(['a', 'b'], () => {});
    barrier.answer('a', 2, 1); // to round 1: stale
    expect(barrier.awaits('a')).toBe(true);
    barrier.answer('a', 3, 2);
    const held: string[] = [];
    barrier.admit('a', () => held.push('a'));
    barrier.cancel();
    expect(await second).toBeUndefined();
    expect(held).toEqual(['a']);
    expect(barrier.open).toBe(false);
    expect(await barrier.gather([], () => {})).toEqual(new Map());
  });
});
