import { describe, expect, it } from 'vitest';
import { FifoQueue } from '../../src/structures/fifo-queue.js';

describe('FifoQueue', () => {
  it('gives items back in the order they were pushed, and undefined when empty', () => {
    const q = new FifoQueue<string>();
    expect(q.shift()).toBeUndefined();
    q.push('a');
    q.push('b');
    expect(q.length).toBe(2);
    expect(q.shift()).toBe('a');
    q.push('c');
    expect([q.shift(), q.shift(), q.shift()]).toEqual(['b', 'c', undefined]);
    expect(q.length).toBe(0);
  });

  it('keeps order and length across its compaction, with pushes and shifts interleaved', () => {
    const q = new FifoQueue<number>();
    const model: number[] = [];
    let next = 0;
    // Deterministic mix, long enough to pass the compaction point (head > 1024) several times.
    for (let step = 0; step < 20_000; step++) {
      if (step % 3 !== 2) {
        q.push(next);
        model.push(next++);
      } else {
        expect(q.shift()).toBe(model.shift());
      }
      if (step % 997 === 0) expect(q.length).toBe(model.length);
    }
    while (model.length > 0) expect(q.shift()).toBe(model.shift());
    expect(q.shift()).toBeUndefined();
  });

  it('is empty after clear and usable again', () => {
    const q = new FifoQueue<number>();
    for (let i = 0; i < 2000; i++) q.push(i);
    for (let i = 0; i < 1500; i++) q.shift();
    q.clear();
    expect(q.length).toBe(0);
    expect(q.shift()).toBeUndefined();
    q.push(7);
    expect(q.length).toBe(1);
    expect(q.shift()).toBe(7);
  });
});
