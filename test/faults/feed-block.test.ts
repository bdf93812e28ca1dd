import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { feed } from '../../src/feed/index.js';
import { startDocumentServer } from '../../src/simulator/document-api/document-server.js';
import { expectNothingLost, mixedOperations, okOf, tempDir, writeJsonl } from './harness.js';

/** In a file of its own: it takes its minute, and runs beside the other fault tests. */
describe('feed survives a feed block', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('507 for a minute, then clear: the feed waits and completes', { timeout: 120_000 }, async () => {
    const server = await startDocumentServer({ port: 0, faults: { feedBlock: true } });
    cleanups.push(() => server.close());
    const tmp = tempDir();
    cleanups.push(tmp.cleanup);
    const ops = mixedOperations(1500, 'block');
    const failures = join(tmp.dir, 'failures.jsonl');
    let storedWhenCleared = -1;
    const clear = setTimeout(() => {
      storedWhenCleared = server.store.size();
      server.faults.set({ feedBlock: false });
    }, 60_000);
    cleanups.push(() => clearTimeout(clear));
    // The default backoff for 507 grows to 60 s between tries; capped lower here so the test ends soon after.
    const summary = await feed(writeJsonl(join(tmp.dir, 'in.jsonl'), ops), {
      endpoint: server.url,
      failures,
      retryPolicy: { feedBlockMaxDelayMs: 5_000 },
    });
    expect(storedWhenCleared).toBe(0);
    expect(server.faults.injected()['feed-block']).toBeGreaterThan(ops.length);
    expect(summary['http.response.code.counts']['507']).toBeGreaterThan(0);
    expect(summary['feeder.retry.count']).toBeGreaterThan(0);
    expect(expectNothingLost(server, ops, okOf(summary), failures).failed).toBe(0);
  });
});
