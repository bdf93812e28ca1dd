import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { bulkOperation } from '../../src/visit/bulk.js';

/** A bulk peer: the first chunk succeeds with a token, then every request gets 503. */
async function flakyBulkPeer() {
  const urls: string[] = [];
  const server = createServer((req, res) => {
    urls.push(req.url!);
    req.resume();
    res.setHeader('content-type', 'application/json');
    if (urls.length === 1) {
      res.end(JSON.stringify({ pathId: '/document/v1/ns/doc/docid/', documentCount: 3, continuation: 'tok1' }));
    } else {
      res.statusCode = 503;
      res.end(JSON.stringify({ pathId: '/document/v1/ns/doc/docid/', message: 'overloaded' }));
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    urls,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe('bulk operations against a scripted peer', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });

  it('a stop while waiting to retry ends the run at once and says where to continue', async () => {
    const peer = await flakyBulkPeer();
    cleanups.push(peer.close);
    const controller = new AbortController();
    const messages: string[] = [];
    const summary = await bulkOperation({
      endpoint: peer.url,
      kind: 'delete-where',
      namespace: 'ns',
      documentType: 'doc',
      selection: 'true',
      // Named, so the peer sees only the chunks (without it the client asks the service for its cluster first).
      cluster: 'content',
      // A wait far longer than any test: only the stop can end it.
      retry: { baseDelayMs: 600_000, maxDelayMs: 600_000, jitter: 0 },
      signal: controller.signal,
      onMessage: (m) => {
        messages.push(m);
        controller.abort();
      },
    });
    expect(summary).toMatchObject({ ok: false, error: 'stopped', requests: 2, documentCount: 3, continuation: 'tok1' });
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(/HTTP 503: overloaded; retrying in/);
    expect(new URL(peer.urls[1], 'http://x').searchParams.get('continuation')).toBe('tok1');
  });
});
