import { join } from 'node:path';
import { existsSync } from 'node:fs';
import * as hdr from 'hdr-histogram-js';
import { describe, expect, it } from 'vitest';
import { startDocumentServer } from '../../src/simulator/document-api/document-server.js';
import { Feeder, feed, resolveWorkers } from '../../src/feed/feeder.js';
import { routeId, workerOf } from '../../src/feed/workers/route.js';
import { packBatch, unpackBatch } from '../../src/feed/workers/batch.js';
import { FeedStats } from '../../src/feed/stats.js';
import type { OperationResult } from '../../src/feed/options.js';
import {
  expectNothingLost,
  failureLines,
  failureReasons,
  mixedOperations,
  quickRetries,
  storeMap,
  writeJsonl,
  type Op,
} from '../faults/harness.js';
import { expectedStore, useFeedFixtures } from './helpers.js';

/** `feed --workers N` over loopback against the simulator: one feed, whatever N. */
describe('feed with worker threads', () => {
  const { server, dir, later } = useFeedFixtures();

  /** Per id: a put, then assigns of n = 1..k spread through the input; the store keeps only the last if order holds. */
  function sequencedOperations(ids: number, k: number): Op[] {
    const ops: Op[] = [];
    for (let i = 0; i < ids; i++) ops.push({ put: `id:ns:music::s${i}`, fields: { n: 0 } });
    for (let step = 1; step <= k; step++)
      for (let i = 0; i < ids; i++) ops.push({ update: `id:ns:music::s${i}`, fields: { n: { assign: step } } });
    return ops;
  }

  it('workers 1, 2 and 3 give the same store and the same counts; histograms merged: response count = sum of the histogram', async () => {
    const ops = [...mixedOperations(3000, 'w'), ...sequencedOperations(200, 6)];
    const path = writeJsonl(join(dir(), 'in.jsonl'), ops);
    const summaries = [];
    for (const workers of [1, 2, 3]) {
      const s = await server();
      const feeder = new Feeder({ endpoint: s.url, workers });
      expect(feeder.workers).toBe(workers);
      const outcome = await feeder.run(path);
      const sum = outcome.summary;
      expect(sum.ok, `workers ${workers}`).toBe(ops.length);
      expect(storeMap(s)).toEqual(expectedStore(ops));
      // Merged exactly: every answer is in the merged histogram once.
      const snap = feeder.snapshot();
      expect(snap.latencyUs.totalCount).toBe(sum.responses);
      expect(sum.responseLatencyByCode['200'].count).toBe(ops.length);
      summaries.push(sum);
    }
    for (const key of ['operations', 'ok', 'errors', 'requests', 'responses', 'skipped'] as const) {
      expect(
        summaries.map((s) => s[key]),
        key,
      ).toEqual(Array(3).fill(summaries[0][key]));
    }
  });

  it('keeps per-id order across workers: 20 assigns per id, the last one wins for every id', async () => {
    const s = await server({ latencyMs: 1 });
    const ops = sequencedOperations(500, 20);
    const path = writeJsonl(join(dir(), 'in.jsonl'), ops);
    const summary = await feed(path, { endpoint: s.url, workers: 3 });
    expect(summary.ok).toBe(ops.length);
    const store = storeMap(s);
    for (let i = 0; i < 500; i++) expect(store.get(`id:ns:music::s${i}`)).toEqual({ n: 20 });
  });

  it('failures from several workers land in one failure output, with reasons numbered in step; onResult gets them', async () => {
    const s = await server({ errorRate: 0.05, errorStatuses: [503] });
    const d = dir();
    const ops = mixedOperations(4000, 'x');
    const path = writeJsonl(join(d, 'in.jsonl'), ops);
    const failures = join(d, 'failed.jsonl');
    const results: OperationResult[] = [];
    const feeder = new Feeder({
      endpoint: s.url,
      workers: 3,
      maxRetries: 0,
      retryPolicy: quickRetries,
      failures,
      onResult: (r) => results.push(r),
      onResultOnlyFailed: true,
    });
    const outcome = await feeder.run(path);
    const failed = outcome.summary.errors;
    expect(failed).toBeGreaterThan(0);
    expect(outcome.failuresFile).toBe(failures);
    expect(failureLines(failures).length).toBe(failed);
    const reasons = failureReasons(failures);
    expect(reasons.map((r) => r.line)).toEqual(Array.from({ length: failed }, (_, i) => i + 1));
    expect(reasons.every((r) => r.status === 503)).toBe(true);
    // From more than one worker: ids of several routes failed.
    expect(new Set(reasons.map((r) => workerOf(r.id as string, 3))).size).toBeGreaterThan(1);
    expect(results.length).toBe(failed);
    expect(results.every((r) => !r.ok)).toBe(true);
    expectNothingLost(s, ops, outcome.summary.ok, failures);
  });

  it('a stop mid-feed writes one checkpoint; resuming it with workers loses nothing', async () => {
    const s = await server({ maxOpsPerSecond: 5000 });
    const d = dir();
    const ops = mixedOperations(8000, 'c');
    const path = writeJsonl(join(d, 'in.jsonl'), ops);
    const controller = new AbortController();
    const stopAt = Math.floor(ops.length * (0.1 + 0.6 * Math.random()));
    const why = `stopped after ${stopAt} results`;
    let seen = 0;
    const checkpoint = join(d, 'cp.json');
    const first = await new Feeder({
      endpoint: s.url,
      workers: 2,
      signal: controller.signal,
      checkpoint,
      failures: join(d, 'f1.jsonl'),
      onResult: () => {
        if (++seen >= stopAt) controller.abort();
      },
    }).run(path);
    expect(first.stopped, why).toBe('interrupted');
    expect(first.checkpointFile, why).toBe(checkpoint);
    expect(existsSync(checkpoint)).toBe(true);
    const s1 = first.summary;
    // Every operation read is accounted for: succeeded, failed, or abandoned behind the checkpoint.
    expect(s1.ok + s1.errors, why).toBeLessThan(ops.length);
    const second = await new Feeder({
      endpoint: s.url,
      workers: 2,
      resume: checkpoint,
      checkpoint,
      failures: join(d, 'f2.jsonl'),
    }).run(path);
    expect(second.stopped).toBeUndefined();
    const s2 = second.summary;
    expect(s2.skipped + s2.ok, why).toBe(ops.length);
    expect(s2.skipped, why).toBeLessThanOrEqual(s1.ok);
    expectNothingLost(s, ops, ops.length, join(d, 'f2.jsonl'));
  });

  it('stops every worker when the credentials are refused (401/403), with a checkpoint', async () => {
    const s = await startDocumentServer({ port: 0, token: 'right' });
    later(() => s.close());
    const d = dir();
    const path = writeJsonl(join(d, 'in.jsonl'), mixedOperations(3000, 'a'));
    const outcome = await new Feeder({
      endpoint: s.url,
      workers: 2,
      headers: { authorization: 'Bearer wrong' },
      checkpoint: join(d, 'cp.json'),
    }).run(path);
    expect(outcome.stopped).toBe('unauthorized');
    expect([401, 403]).toContain(outcome.authStatus);
    expect(outcome.checkpointFile).toBe(join(d, 'cp.json'));
    expect(outcome.summary.ok).toBe(0);
  });

  it('fails fast when nothing answers (VB_UNREACHABLE), as one thread does', async () => {
    const d = dir();
    const path = writeJsonl(join(d, 'in.jsonl'), mixedOperations(500, 'u'));
    await expect(feed(path, { endpoint: 'http://127.0.0.1:1', workers: 2 })).rejects.toMatchObject({
      code: 'VB_UNREACHABLE',
    });
  });
});

describe('worker routing and batches (pure)', () => {
  it('finds the id by keys only, in any key order; the same id always goes to the same worker, spread over all', () => {
    expect(routeId(Buffer.from('{"fields":{"a":[1,{"put":"x"}]},"put":"id:a:b::1"}'))).toBe('id:a:b::1');
    expect(routeId(Buffer.from('{"update":"id:a:b::\\u0032"}'))).toBe('id:a:b::2');
    expect(routeId(Buffer.from('{bad'))).toBeUndefined();
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 4000; i++) counts[workerOf(`id:ns:music::d${i}`, 4)]++;
    for (const c of counts) expect(c).toBeGreaterThan(800);
    expect(workerOf('id:ns:music::d7', 4)).toBe(workerOf('id:ns:music::d7', 4));
  });

  it('a shard of the ids still spreads over all workers', async () => {
    const { shardOf } = await import('../../src/feed/shard.js');
    const counts = [0, 0];
    for (let i = 0; i < 4000; i++) {
      const id = `id:ns:music::d${i}`;
      if (shardOf(id, 2) === 0) counts[workerOf(id, 2)]++;
    }
    expect(Math.min(...counts)).toBeGreaterThan(600);
  });

  it('packs items into one buffer and unpacks views on it with their lines and offsets', () => {
    const items = [
      { bytes: Buffer.from('{"put":"a"}'), line: 3, offset: 10 },
      { bytes: Buffer.from('{"put":"bb"}'), line: 9, offset: 2 ** 33 },
    ];
    const batch = packBatch(1, 0, 'in', items);
    const back = unpackBatch(batch);
    expect(back.map((i) => [i.bytes.toString(), i.line, i.offset])).toEqual([
      ['{"put":"a"}', 3, 10],
      ['{"put":"bb"}', 9, 2 ** 33],
    ]);
    expect(back[0].bytes.buffer).toBe(batch.bytes);
  });

  it('merges FeedStats exactly: counters add, percentiles from the added histograms', () => {
    const a = new FeedStats();
    const b = new FeedStats();
    for (let i = 1; i <= 100; i++) a.response(200, 10, i * 1000);
    for (let i = 101; i <= 200; i++) b.response(i % 2 ? 200 : 429, 10, i * 1000);
    const m = new FeedStats();
    m.merge(a.state());
    m.merge(b.state());
    const whole = hdr.build();
    for (let i = 1; i <= 200; i++) whole.recordValue(i * 1000);
    const s = m.summary(performance.now(), 0, 0);
    expect(s.responses).toBe(200);
    expect(s.responseCodes).toEqual({ 200: 150, 429: 50 });
    expect(s.responseLatencyP50Ms).toBeCloseTo(whole.getValueAtPercentile(50) / 1000, 1);
    expect(s.responseLatencyMaxMs).toBe(200);
  });

  it('feeds on one thread unless workers are asked for, and then over that many', () => {
    expect(resolveWorkers({})).toBe(1);
    expect(resolveWorkers({ workers: 1 })).toBe(1);
    expect(resolveWorkers({ workers: 3 })).toBe(3);
    expect(new Feeder({}).workers).toBe(1);
    expect(new Feeder({ workers: 3 }).workers).toBe(3);
  });
});
