import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { Feeder } from '../../src/feed/feeder.js';
import { type OperationResult } from '../../src/feed/operation-result.js';
import { startRecordingServer } from '../http/recording-server.js';
import { tempDir } from './helpers.js';

describe('feeder stop', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });

  it('abandons what is still in flight after the grace period: not failed, covered by the checkpoint', async () => {
    // doc-0..doc-4 are answered; every later operation hangs until the feeder gives up on it.
    const server = await startRecordingServer((req, res) => {
      if (/\/doc-[0-4](\?|$)/.test(req.url)) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"id":"x"}');
      }
    });
    cleanups.push(server.close);
    const tmp = tempDir();
    cleanups.push(tmp.cleanup);
    const ops = Array.from({ length: 20 }, (_, i) => ({ put: `id:ns:t::doc-${i}`, fields: { n: i } }));
    const results: OperationResult[] = [];
    const abort = new AbortController();
    const checkpoint = join(tmp.dir, 'cp.json');
    const feeder = new Feeder({
      endpoint: server.url,
      // Room for all 20 at once (the adaptive limit starts at 8).
      inflight: 32,
      signal: abort.signal,
      stopGraceMs: 50,
      checkpoint,
      failures: join(tmp.dir, 'failures.jsonl'),
      onResult: (r) => {
        results.push(r);
      },
    });
    const running = feeder.run(ops);
    // Each connection carries operations in input order, so doc-0..4 never wait behind a hanging one.
    while (results.length < 5) await new Promise((r) => setTimeout(r, 5));
    abort.abort();
    const outcome = await running;

    expect(outcome.stopped).toBe('interrupted');
    expect(results.map((r) => r.ok)).toEqual([true, true, true, true, true]);
    expect(outcome.summary.ok).toBe(5);
    expect(outcome.summary.errors).toBe(0);
    expect(outcome.summary.abandoned).toBe(15);
    // All 15 were on the wire when the pool was destroyed: each ended in a transport error, none as a failure.
    expect(outcome.summary.exceptions).toBe(15);
    expect(outcome.failuresFile).toBeUndefined();
    expect(JSON.parse(readFileSync(checkpoint, 'utf8')).position).toMatchObject({ input: 0, line: 6 });
  });
});
