import { join } from 'node:path';
import { describe, it } from 'vitest';
import { feed } from '../../src/feed/feeder.js';
import { startDocumentServer } from '../../src/simulator/document-api/document-server.js';
import { expectSpoke, overProtocols } from '../support/protocols.js';
import { expectNothingLost, mixedOperations, okOf, runCli, tempDir, writeJsonl } from './harness.js';

/**
 * A block longer than the breaker's window (`maxFailureSeconds`, 60 s by default; 8 s here, so the test takes 12 s
 * rather than the minute it would with the default): 507 is the cluster asking to wait, not a failure, so the breaker
 * must not open. In a file of its own, beside the other fault tests. Over both protocols at once
 * (each against its own simulator): the feeds spend the minute waiting, so the second costs no time. Concurrent
 * tests take `expect` and `onTestFinished` from their own context: the global ones belong to whichever test ran last.
 */
describe.concurrent('feed survives a feed block', () => {
  it.for(overProtocols)(
    "over $protocol: 507 for longer than the breaker's window, then clear: the feed waits and completes",
    { timeout: 90_000 },
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
      }, 12_000);
      onTestFinished(() => clearTimeout(clear));
      // The default backoff for 507 grows to 60 s between tries; capped lower here so the test ends soon after.
      // Half-open after 2 s: the probing the breaker does while it sees only 507s is part of what is tested.
      const summary = await feed(writeJsonl(join(tmp.dir, 'in.jsonl'), ops), {
        endpoint: server.url,
        protocol,
        failures,
        retryPolicy: { feedBlockMaxDelayMs: 2_000 },
        maxFailureSeconds: 8,
        halfOpenSeconds: 2,
      });
      expectSpoke(summary, protocol);
      expect(storedWhenCleared).toBe(0);
      // The block is a state: the writes that met it wait together and one probes at a time, 1 s then 2 s apart.
      // Before, each write in flight and read ahead tried again at its own backoff: over 2,000 answers of 507 in 12 s.
      expect(server.faults.injected()['feed-block']).toBeGreaterThan(0);
      expect(server.faults.injected()['feed-block']).toBeLessThan(60);
      expect(summary.responseCodes['507']).toBeGreaterThan(0);
      expect(summary.feedBlockedSeconds).toBeGreaterThan(5);
      expect(summary.retries).toBeGreaterThan(0);
      expect(expectNothingLost(server, ops, okOf(summary), failures).failed).toBe(0);
    },
  );
});

describe('removes during a feed block', () => {
  it.for(overProtocols)(
    'over $protocol: go through, as Vespa lets them (they free space), while puts wait',
    async ({ protocol }, { expect, onTestFinished }) => {
      const server = await startDocumentServer({ port: 0 });
      onTestFinished(() => server.close());
      const tmp = tempDir();
      onTestFinished(tmp.cleanup);
      const ids = Array.from({ length: 300 }, (_, i) => `id:ns:music::r${i}`);
      const puts = await feed(
        ids.map((id) => ({ put: id, fields: { title: id } })),
        { endpoint: server.url, protocol, failures: false },
      );
      expect(puts.ok).toBe(ids.length);
      server.faults.set({ feedBlock: true });
      const removes = await feed(
        ids.map((id) => ({ remove: id })),
        { endpoint: server.url, protocol, failures: join(tmp.dir, 'f.jsonl') },
      );
      expectSpoke(removes, protocol);
      expect(removes.ok).toBe(ids.length);
      expect(removes.responseCodes['507']).toBeUndefined();
      expect(server.store.size()).toBe(0);
      // A put in the same block is refused with 507 (and waits: here, one try and its deadline).
      const put = await feed([{ put: 'id:ns:music::late', fields: {} }], {
        endpoint: server.url,
        protocol,
        failures: false,
        deadlineMs: 1_500,
        retryPolicy: { feedBlockBaseDelayMs: 200, feedBlockMaxDelayMs: 200 },
      });
      expect(put.ok).toBe(0);
      expect(put.responseCodes['507']).toBeGreaterThan(0);
    },
  );
});

describe('a feed block on the progress line', () => {
  it.for(overProtocols)(
    'over $protocol: the line says the cluster is feed-blocked while 507s come, and the feed completes once it lifts',
    async ({ protocol }, { expect, onTestFinished }) => {
      const server = await startDocumentServer({ port: 0, faults: { feedBlock: true } });
      onTestFinished(() => server.close());
      const tmp = tempDir();
      onTestFinished(tmp.cleanup);
      const ops = mixedOperations(200, 'line');
      writeJsonl(join(tmp.dir, 'in.jsonl'), ops);
      let blockedSeen = false;
      const run = await runCli(['feed', '-t', server.url, '--protocol', protocol, '--progress', '0.2', 'in.jsonl'], {
        cwd: tmp.dir,
        // Cleared once the line has said so: what is asserted is the line, then that nothing was lost.
        onStderr: (stderr) => {
          if (!blockedSeen && stderr.includes('cluster feed-blocked (507: resource limits)')) {
            blockedSeen = true;
            server.faults.set({ feedBlock: false });
          }
        },
      });
      expect(blockedSeen, run.stderr).toBe(true);
      expect(run.code, run.stderr).toBe(0);
      const summary = JSON.parse(run.stdout) as Record<string, unknown>;
      expect(summary).toMatchObject({ 'feeder.ok.count': ops.length, 'feeder.error.count': 0 });
      // And the end says it too, as does the summary, though the block lifted.
      expect(summary['feeder.feed.blocked.seconds']).toBeGreaterThan(0);
      expect(run.stderr).toMatch(/cluster feed-blocked: resource limits \(507\) for [\d.]+ s/);
    },
  );
});
