import { join } from 'node:path';
import { describe, it } from 'vitest';
import { feed } from '../../src/feed/feeder.js';
import { startDocumentServer } from '../../src/simulator/document-api/document-server.js';
import { expectSpoke, overProtocols } from '../support/protocols.js';
import { expectNothingLost, mixedOperations, okOf, tempDir, writeJsonl } from './harness.js';

/**
 * In a file of its own: it takes its minute, and runs beside the other fault tests. Over both protocols at once
 * (each against its own simulator): the feeds spend the minute waiting, so the second costs no time. Concurrent
 * tests take `expect` and `onTestFinished` from their own context: the global ones belong to whichever test ran last.
 */
describe.concurrent('feed survives a feed block', () => {
  it.for(overProtocols)(
    'over $protocol: 507 for a minute, then clear: the feed waits and completes',
    { timeout: 120_000 },
    async ({ protocol }, { expect, onTestFinished }) => {
      const server = await startDocumentServer({ port: 0, faults: { feedBlock: true } });
      onTestFinished(() => server.close());
      const tmp = tempDir();
      onTestFinished(tmp.cleanup);
      const ops = mixedOperations(1500, 'block');
      const failures = join(tmp.dir, 'failures.jsonl');
      let storedWhenCleared = -1;
      const clear = setTimeout(() => {
        storedWhenCleared = server.store.size();
        server.faults.set({ feedBlock: false });
      }, 60_000);
      onTestFinished(() => clearTimeout(clear));
      // The default backoff for 507 grows to 60 s between tries; capped lower here so the test ends soon after.
      const summary = await feed(writeJsonl(join(tmp.dir, 'in.jsonl'), ops), {
        endpoint: server.url,
        protocol,
        failures,
        retryPolicy: { feedBlockMaxDelayMs: 5_000 },
      });
      expectSpoke(summary, protocol);
      expect(storedWhenCleared).toBe(0);
      expect(server.faults.injected()['feed-block']).toBeGreaterThan(ops.length);
      expect(summary.responseCodes['507']).toBeGreaterThan(0);
      expect(summary.retries).toBeGreaterThan(0);
      expect(expectNothingLost(server, ops, okOf(summary), failures).failed).toBe(0);
    },
  );
});
