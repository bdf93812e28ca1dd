import { describe, expect, it } from 'vitest';
import { OpenOperations } from '../../src/feed/open-operations.js';

describe('OpenOperations', () => {
  it('lists the open operations in sequence order, whatever order they finish in', () => {
    const open = new OpenOperations<{ seq: number }>();
    const ops = Array.from({ length: 5 }, (_, seq) => ({ seq }));
    for (const op of ops) open.add(op);
    open.delete(ops[0]);
    open.delete(ops[3]);
    expect([...open.values()].map((o) => o.seq)).toEqual([1, 2, 4]);
    expect(open.size).toBe(3);
    open.delete(ops[3]);
    expect(open.size).toBe(3);
    for (const op of ops) open.delete(op);
    expect(open.size).toBe(0);
    expect([...open.values()]).toEqual([]);
  });

  it('keeps a long-open operation while thousands after it come and go (property: same as a Map)', () => {
    const open = new OpenOperations<{ seq: number }>();
    const model = new Map<number, { seq: number }>();
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    let seq = 0;
    const stuck = { seq: seq++ };
    open.add(stuck);
    model.set(stuck.seq, stuck);
    for (let step = 0; step < 30000; step++) {
      if (rand() < 0.52 || model.size === 1) {
        const op = { seq: seq++ };
        open.add(op);
        model.set(op.seq, op);
      } else {
        const keys = [...model.keys()].filter((k) => k !== stuck.seq);
        const k = keys[Math.floor(rand() * Math.min(keys.length, 50))];
        open.delete(model.get(k)!);
        model.delete(k);
      }
      if (step % 997 === 0) expect([...open.values()]).toEqual([...model.values()]);
    }
    expect(open.size).toBe(model.size);
    expect([...open.values()]).toEqual([...model.values()]);
    open.delete(stuck);
    model.delete(stuck.seq);
    expect([...open.values()]).toEqual([...model.values()]);
  });
});
