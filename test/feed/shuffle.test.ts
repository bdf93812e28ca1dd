import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Feeder } from '../../src/feed/feeder.js';
import { ShuffleBuffer } from '../../src/feed/shuffle-buffer.js';
import type { OperationResult } from '../../src/feed/options.js';
import { storeMap, writeJsonl, type Op } from '../faults/harness.js';
import { expectedStore, useFeedFixtures } from './helpers.js';

/** A seeded generator in [0, 1) (mulberry32). */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Per id: a put, then assigns n = 1..k; each id's operations consecutive, as an export groups them. */
function groupedOperations(ids: number, k: number): Op[] {
  const ops: Op[] = [];
  for (let i = 0; i < ids; i++) {
    ops.push({ put: `id:ns:music::s${i}`, fields: { n: 0 } });
    for (let step = 1; step <= k; step++) ops.push({ update: `id:ns:music::s${i}`, fields: { n: { assign: step } } });
  }
  return ops;
}

describe('ShuffleBuffer', () => {
  it('lets every value go once, those of one key in their order, the rest interleaved', () => {
    const buffer = new ShuffleBuffer<number>(seeded(7));
    const out: number[] = [];
    const keyOf = (v: number) => String(v % 13);
    for (let v = 0; v < 1000; v++) {
      buffer.add(keyOf(v), v);
      if (buffer.size > 64) out.push(buffer.take()!);
    }
    expect(buffer.size).toBe(64);
    out.push(...buffer.drain());
    expect([...out].sort((a, b) => a - b)).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    for (let k = 0; k < 13; k++) {
      const ofKey = out.filter((v) => v % 13 === k);
      expect(ofKey).toEqual([...ofKey].sort((a, b) => a - b));
    }
    // Interleaved: far from the input order.
    const inPlace = out.filter((v, i) => i > 0 && v === out[i - 1] + 1).length;
    expect(inPlace).toBeLessThan(200);
  });
});

describe('feed --shuffle', () => {
  const { server, dir } = useFeedFixtures();

  it('sends in another order than read, keeps each id in order, loses nothing', async () => {
    const s = await server();
    const ops = groupedOperations(40, 4);
    const path = writeJsonl(join(dir(), 'in.jsonl'), ops);
    const sent: number[] = [];
    // One in flight: the results come in the order the operations were sent.
    const outcome = await new Feeder({
      endpoint: s.url,
      inflight: 1,
      shuffle: true,
      shuffleBuffer: 30,
      onResult: (r: OperationResult) => sent.push(r.line),
    }).run(path);
    expect(outcome.summary.ok).toBe(ops.length);
    expect(storeMap(s)).toEqual(expectedStore(ops));
    expect([...sent].sort((a, b) => a - b)).toEqual(ops.map((_, i) => i + 1));
    expect(sent).not.toEqual([...sent].sort((a, b) => a - b));
    // The lines of one id (5 consecutive lines) were sent in their order.
    const byId = new Map<number, number[]>();
    for (const line of sent)
      byId.set(Math.floor((line - 1) / 5), [...(byId.get(Math.floor((line - 1) / 5)) ?? []), line]);
    for (const lines of byId.values()) expect(lines).toEqual([...lines].sort((a, b) => a - b));
  });

  it('a buffer larger than the read-ahead window still drains: every operation is fed', async () => {
    const s = await server();
    // Over 3/4 of the window with the buffer, and more operations than one read chunk holds (some 1,200).
    const ops = groupedOperations(500, 3);
    const path = writeJsonl(join(dir(), 'in.jsonl'), ops);
    const outcome = await new Feeder({ endpoint: s.url, inflight: 32, shuffle: true, shuffleBuffer: 1500 }).run(path);
    expect(outcome.summary.ok).toBe(ops.length);
    expect(storeMap(s)).toEqual(expectedStore(ops));
  });

  it('a stop leaves what the shuffle held in the checkpoint: the resumed feed completes the store', async () => {
    const s = await server({ latencyMs: 1 });
    const d = dir();
    const ops = groupedOperations(200, 4);
    const path = writeJsonl(join(d, 'in.jsonl'), ops);
    const checkpoint = join(d, 'cp.json');
    const abort = new AbortController();
    let done = 0;
    const first = await new Feeder({
      endpoint: s.url,
      shuffle: true,
      shuffleBuffer: 300,
      checkpoint,
      signal: abort.signal,
      onResult: () => {
        if (++done === 200) abort.abort();
      },
    }).run(path);
    expect(first.stopped).toBe('interrupted');
    expect(first.summary.ok).toBeLessThan(ops.length);
    const second = await new Feeder({ endpoint: s.url, shuffle: true, shuffleBuffer: 300, checkpoint }).run(path);
    expect(second.stopped).toBeUndefined();
    expect(first.summary.ok + second.summary.ok).toBeGreaterThanOrEqual(ops.length);
    expect(storeMap(s)).toEqual(expectedStore(ops));
  });
});
