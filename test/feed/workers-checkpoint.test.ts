import { existsSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Feeder, resolveWorkers } from '../../src/feed/feeder.js';
import type { FeedCheckpoint } from '../../src/feed/feed-checkpoint.js';
import { inShard, parseShard } from '../../src/feed/shard.js';
import { useFeedFixtures } from './helpers.js';
import { expectNothingLost, failureLines, mixedOperations, writeJsonl, type Op } from '../faults/harness.js';

/** Periodic checkpoints of `feed --workers N`: the same format as one thread's, so either resumes the other's. */
describe('workers and the periodic checkpoint', () => {
  const { server, dir } = useFeedFixtures();

  /** Mixed operations, every 50th with a key no operation may have: it fails at once, into the failure output. */
  function operations(n: number, prefix: string): Op[] {
    return mixedOperations(n, prefix).map((o, i) =>
      i % 50 === 7 ? { put: `id:ns:music::bad${prefix}${i}`, fields: { n: i }, bogus: true } : o,
    );
  }

  /** Runs `first` until the checkpoint file has been saved mid-feed at least twice, then stops it (as a crash would leave it). */
  async function stopAfterSaves(first: Feeder, input: string, checkpoint: string): Promise<FeedCheckpoint> {
    let saves = 0;
    let last = '';
    let saved: FeedCheckpoint | undefined;
    const poll = setInterval(() => {
      if (!existsSync(checkpoint)) return;
      const text = readFileSync(checkpoint, 'utf8');
      if (text === last) return;
      last = text;
      const c = JSON.parse(text) as FeedCheckpoint;
      if (c.reason !== 'running') return;
      saved = c;
      if (++saves >= 2) first.stop();
    }, 5);
    await first.run(input);
    clearInterval(poll);
    expect(saved, 'a periodic save mid-feed').toBeDefined();
    return saved!;
  }

  it('the default worker count applies beside a periodic checkpoint too', () => {
    expect(resolveWorkers({ checkpoint: 'cp.json', workers: 2 })).toBe(2);
    expect(resolveWorkers({ checkpoint: 'cp.json' })).toBe(1);
    expect(resolveWorkers({ checkpoint: 'cp.json', checkpointIntervalMs: 0, workers: 3 })).toBe(3);
  });

  for (const [from, to] of [
    [2, 1],
    [1, 2],
  ] as const) {
    it(`a periodic checkpoint of a ${from}-worker feed, with a shard, resumes in a ${to}-worker feed: nothing lost, no failure twice`, async () => {
      const s = await server({ maxOpsPerSecond: 3000 });
      const d = dir();
      const ops = operations(3000, `w${from}`);
      const input = writeJsonl(join(d, 'in.jsonl'), ops);
      const checkpoint = join(d, 'cp.json');
      const failures = join(d, 'failed.jsonl');
      const shard = parseShard('0/2');
      const common = { endpoint: s.url, checkpoint, failures, shard, checkpointIntervalMs: 100, stopGraceMs: 0 };
      const make = (workers: number) => new Feeder({ ...common, workers });

      // Kept as the file was at a periodic save, and the rest of the first run's work undone, as after a crash.
      const saved = await stopAfterSaves(make(from), input, checkpoint);
      expect(saved.shard).toBe('0/2');
      expect(saved.position).not.toBeNull();
      expect(saved.unfinished, 'the exact list of unfinished operations').toBeDefined();
      writeFileSync(checkpoint, JSON.stringify(saved));
      if (saved.failureMark !== undefined) {
        truncateSync(failures, saved.failureMark.bytes);
        truncateSync(`${failures}.reasons.jsonl`, saved.failureMark.reasonsBytes);
      }

      const second = await make(to).run(input);
      expect(second.stopped).toBeUndefined();
      // An operation that cannot be read has no id to shard by: every shard reports it.
      const mine = ops.filter((o) => 'bogus' in o || inShard(idOf(o), shard));
      const bad = mine.filter((o) => 'bogus' in o);
      // Every operation of the shard succeeded or is in the failure output, once.
      const failed = failureLines(failures);
      expect(failed.length).toBe(bad.length);
      expect(new Set(failed).size).toBe(failed.length);
      expectNothingLost(s, mine, mine.length - bad.length, failures);
      // Every line is accounted for (the summary counts the whole feed), and the rerun feeds only what the
      // checkpoint left open: the operations it lists unfinished and those after `readTo`.
      const s2 = second.summary;
      expect(s2.operations + s2.skipped).toBe(ops.length);
      expect(
        s2.runOperations,
        `${from} -> ${to} workers: checkpoint counted ${saved.ok} ok, ${saved.unfinished!.length} unfinished of ${saved.readTo!.line} read`,
      ).toBeLessThanOrEqual(saved.unfinished!.length + ops.length - saved.readTo!.line);
      const finished = JSON.parse(readFileSync(checkpoint, 'utf8')) as FeedCheckpoint;
      expect(finished.position).toBeNull();
    });
  }
});

function idOf(op: Op): string {
  const o = op as Record<string, unknown>;
  return String(o.put ?? o.update ?? o.remove);
}
