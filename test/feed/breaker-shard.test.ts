import { describe, expect, it } from 'vitest';
import { CircuitBreaker } from '../../src/feed/breaker.js';
import { fnv1a, inShard, parseShard, shardOf } from '../../src/feed/shard.js';

describe('CircuitBreaker', () => {
  it('half-opens after 10 s of only failures, opens after the configured time, closes on a success', () => {
    const b = new CircuitBreaker({ halfOpenAfterMs: 10_000, openAfterMs: 30_000 });
    expect(b.state(0)).toBe('closed');
    b.failure(1000);
    b.failure(5000);
    expect(b.state(10_999)).toBe('closed');
    expect(b.state(11_000)).toBe('half-open');
    expect(b.state(31_000)).toBe('open');
    b.success();
    expect(b.state(31_000)).toBe('closed');
  });

  it('never opens with openAfterMs 0', () => {
    const b = new CircuitBreaker({ openAfterMs: 0 });
    b.failure(0);
    expect(b.state(1e9)).toBe('half-open');
  });
});

describe('shard', () => {
  it('parses i/N and refuses nonsense', () => {
    expect(parseShard('1/4')).toEqual({ index: 1, count: 4 });
    expect(() => parseShard('4/4')).toThrow(/0 <= i < N/);
    expect(() => parseShard('x')).toThrow(/expected i\/N/);
  });

  it('splits ids into disjoint, covering, roughly even shards, the same for non-ASCII ids', () => {
    const ids = Array.from({ length: 4000 }, (_, i) => `id:ns:t::doc-${i}${i % 7 === 0 ? 'é' : ''}`);
    const counts = [0, 0, 0, 0];
    for (const id of ids) {
      const owners = [0, 1, 2, 3].filter((i) => inShard(id, { index: i, count: 4 }));
      expect(owners).toHaveLength(1);
      counts[owners[0]]++;
    }
    for (const c of counts) expect(c).toBeGreaterThan(800);
    expect(shardOf('id:ns:t::x', 4)).toBe(shardOf('id:ns:t::x', 4));
    // FNV-1a 32-bit reference value for "a".
    expect(fnv1a('a')).toBe(0xe40c292c);
  });
});
