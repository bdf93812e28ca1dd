import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { feed } from '../../src/index.js';
import { startDocumentServer } from '../../src/simulator/document-api/document-server.js';
import { startL4Balancer } from '../support/l4-balancer.js';
import { expectSpoke, overProtocols } from '../support/protocols.js';
import { until } from '../support/until.js';
import { failureLines, quickRetries, tempDir, writeJsonl, type Op } from './harness.js';

/**
 * A connection that stops answering mid-feed, neither closed nor reset (a container's GC pause of minutes, a
 * black-holed path behind a balancer): the feed goes on over the other connections and loses nothing. Over HTTP/2
 * the connection is found dead by its liveness PING (h2/liveness.ts) within seconds: the requests it never sent
 * go elsewhere at once, the sent ones (puts, safe to repeat) are sent again; none waits for its deadline, which
 * here is far beyond the test's own time-out. Over HTTP/1.1 nothing is queued behind a request in flight (no
 * pipelining), and the request on the silent connection is bounded by its request timeout: there is no PING in
 * HTTP/1.1.
 */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const documents = 3_000;

describe.each(overProtocols)('a feed over $protocol with one connection gone silent', ({ protocol }) => {
  it('moves its work to the other connections and loses nothing', { timeout: 120_000 }, async () => {
    const server = await startDocumentServer({ port: 0 });
    cleanups.push(() => server.close());
    const port = Number(new URL(server.url).port);
    // Two "nodes" that are one simulator: the connections placed on node 1 are the ones silenced.
    const balancer = await startL4Balancer([port, port]);
    cleanups.push(() => balancer.close());
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const ops: Op[] = Array.from({ length: documents }, (_, i) => ({
      put: `id:ns:music::s${i}`,
      fields: { title: `t${i}`, n: i },
    }));
    const failures = join(dir, 'failures.jsonl');
    let silenced = false;
    const running = feed(writeJsonl(join(dir, 'in.jsonl'), ops), {
      endpoint: balancer.url,
      protocol,
      connections: 2,
      inflight: 32,
      // Far beyond the test's time-out: an operation that waited for it would fail the test.
      deadlineMs: 600_000,
      ...(protocol === 'http1.1' && { requestTimeoutMs: 3_000 }),
      retryPolicy: quickRetries,
      failures,
      onResult: () => {
        if (!silenced && server.store.size() >= 500) {
          silenced = true;
          balancer.silence(1);
        }
      },
    });
    const summary = await running;
    expectSpoke(summary, protocol);
    expect(silenced).toBe(true);
    expect(balancer.placed[1]).toBeGreaterThan(0);
    expect(failureLines(failures)).toEqual([]);
    expect(summary.ok).toBe(documents);
    expect(summary.errors).toBe(0);
    await until(() => server.store.size() === documents);
  });
});
