import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FeedBlock } from '../../src/feed/feed-block.js';
import { Feeder } from '../../src/feed/feeder.js';
import { startDocumentServer } from '../../src/simulator/document-api/document-server.js';
import { overProtocols } from '../support/protocols.js';
import { tempDir } from './helpers.js';

const write = (deadline: number) => ({ deadline });

describe('FeedBlock: the writes that met a feed block, waiting together', () => {
  it('starts the probes with the first write held, slows them down to the most, and sends the longest held first', () => {
    const block = new FeedBlock<{ deadline: number }>({ firstMs: 1000, maxMs: 3000 });
    const a = write(10_000);
    const b = write(10_000);
    expect(block.blocked).toBe(false);
    expect(block.hold(a, 0)).toBe(1000);
    // The probes are going already: no second timer.
    expect(block.hold(b, 10)).toBeUndefined();
    const first = block.fire(1000);
    expect(first).toEqual({ expired: [], probe: a, nextMs: 2000 });
    // The probe is out: no second one until it is answered.
    expect(block.fire(3000).probe).toBeUndefined();
    expect(block.answered(a)).toBe(true);
    expect(block.answered(b)).toBe(false);
    // Met the block again: held again, behind b.
    block.hold(a, 3100);
    expect(block.fire(6000)).toEqual({ expired: [], probe: b, nextMs: 3000 });
    expect(block.blocked).toBe(true);
  });

  it('lets the writes past their deadline go (they fail), and ends the block when nothing waits', () => {
    const block = new FeedBlock<{ deadline: number }>({ firstMs: 100, maxMs: 100 });
    const late = write(150);
    block.hold(late, 0);
    expect(block.fire(200)).toEqual({ expired: [late], probe: undefined, nextMs: undefined });
    expect(block.blocked).toBe(false);
    expect(block.blockedMs(500)).toBe(200);
  });

  it('lifts for every write at once, and counts the time it held', () => {
    const block = new FeedBlock<{ deadline: number }>({ firstMs: 100, maxMs: 100 });
    const held = [write(1e9), write(1e9), write(1e9)];
    for (const w of held) block.hold(w, 1000);
    block.fire(1100);
    expect(block.lift(4000)).toEqual(held.slice(1));
    expect(block.blocked).toBe(false);
    expect(block.blockedMs(9000)).toBe(3000);
  });
});

describe('a feed stopped while the cluster is feed-blocked', () => {
  it.for(overProtocols)(
    'over $protocol: stops at once, every write unfinished and in the checkpoint, none failed',
    async ({ protocol }, { expect, onTestFinished }) => {
      const server = await startDocumentServer({ port: 0, faults: { feedBlock: true } });
      onTestFinished(() => server.close());
      const tmp = tempDir();
      onTestFinished(tmp.cleanup);
      const ops = Array.from({ length: 400 }, (_, i) => ({ put: `id:ns:music::b${i}`, fields: { n: i } }));
      const abort = new AbortController();
      const feeder = new Feeder({
        endpoint: server.url,
        protocol,
        signal: abort.signal,
        checkpoint: join(tmp.dir, 'cp.json'),
        failures: join(tmp.dir, 'f.jsonl'),
      });
      const running = feeder.run(ops);
      // Until the block is met and the first probe has gone out (the default's first probe: 1 s after).
      while ((server.faults.injected()['feed-block'] ?? 0) < 9) await new Promise((r) => setTimeout(r, 20));
      abort.abort();
      const outcome = await running;
      expect(outcome.stopped).toBe('interrupted');
      expect(outcome.summary.ok).toBe(0);
      expect(outcome.summary.errors).toBe(0);
      // Those read ahead are abandoned, the rest never read: the checkpoint goes on from the first.
      expect(outcome.summary.abandoned).toBeGreaterThan(0);
      expect(outcome.summary.feedBlockedSeconds).toBeGreaterThan(0);
      expect(JSON.parse(readFileSync(join(tmp.dir, 'cp.json'), 'utf8')).position).toMatchObject({ input: 0, line: 1 });
    },
  );
});
