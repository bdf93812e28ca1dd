import http2 from 'node:http2';
import { afterEach, describe, expect, it } from 'vitest';
import { BucketLocks, type LockWaiter } from '../../src/simulator/bucket-locks.js';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { until } from '../support/until.js';
import { h2Request } from './h2-call.js';

describe('BucketLocks', () => {
  it('grants one bucket to one write at a time, in arrival order, passing over those that gave up', () => {
    const locks = new BucketLocks(8);
    const order: string[] = [];
    const waiter = (name: string, gaveUp = false): LockWaiter => ({
      granted: () => {
        if (gaveUp) return false;
        order.push(name);
        return true;
      },
    });
    expect(locks.bucketOf(0xff000000)).toBe(0xff);
    expect(locks.acquire(1, waiter('a'))).toBe(true);
    expect(locks.acquire(2, waiter('other bucket'))).toBe(true);
    expect(locks.acquire(1, waiter('b'))).toBe(false);
    expect(locks.acquire(1, waiter('gave up', true))).toBe(false);
    expect(locks.acquire(1, waiter('c'))).toBe(false);
    expect(locks.counts()).toEqual({ held: 2, waiting: 3, waits: 3, bucketBits: 8 });
    locks.release(1);
    expect(order).toEqual(['b']);
    locks.release(1);
    expect(order).toEqual(['b', 'c']);
    locks.release(1);
    locks.release(2);
    expect(locks.counts()).toEqual({ held: 0, waiting: 0, waits: 3, bucketBits: 8 });
  });
});

describe('the simulator serialises writes to one bucket', () => {
  const servers: DocumentServer[] = [];
  const sessions: http2.ClientHttp2Session[] = [];
  afterEach(async () => {
    for (const s of sessions.splice(0)) s.destroy();
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  it('a write waits while another to its bucket is processed; writes to other buckets and reads do not', async () => {
    // One bit: n=0.. in bucket 0, n=2^31.. in bucket 1.
    const server = await startDocumentServer({ port: 0, bucketBits: 1, faults: { latencyMs: 40 } });
    servers.push(server);
    const session = http2.connect(server.url);
    sessions.push(session);
    const put = (id: string) => h2Request(session, 'POST', `/document/v1/ns/t/number/${id}`, '{"fields":{"f":1}}');
    const answers = [
      put('0/a'),
      put('1/b'),
      put('2/c'),
      put('2147483648/d'),
      h2Request(session, 'GET', '/document/v1/ns/t/number/0/a'),
    ];
    // Two writes to bucket 0 wait behind the first; bucket 1's write and the read go on.
    await until(() => server.stats().bucketLocks.waiting === 2);
    expect(server.stats().bucketLocks).toMatchObject({ held: 2, waiting: 2, waits: 2 });
    const statuses = (await Promise.all(answers)).map((a) => a.status);
    expect(statuses).toEqual([200, 200, 200, 200, 404]);
    expect(server.stats().bucketLocks).toEqual({ held: 0, waiting: 0, waits: 2, bucketBits: 1 });
    expect(server.store.size()).toBe(4);
  });

  it('a write that times out waiting for its bucket is answered 504, not applied, and the next one goes', async () => {
    const server = await startDocumentServer({ port: 0, bucketBits: 1, faults: { latencyMs: 60 } });
    servers.push(server);
    const session = http2.connect(server.url);
    sessions.push(session);
    const first = h2Request(session, 'POST', '/document/v1/ns/t/number/0/a', '{"fields":{"f":1}}');
    await until(() => server.stats().bucketLocks.held === 1);
    // Its timeout is shorter than the first write's processing.
    const late = h2Request(session, 'POST', '/document/v1/ns/t/number/1/b?timeout=0.01', '{"fields":{"f":1}}');
    const third = h2Request(session, 'POST', '/document/v1/ns/t/number/2/c', '{"fields":{"f":1}}');
    expect((await late).status).toBe(504);
    expect([(await first).status, (await third).status]).toEqual([200, 200]);
    expect(
      server.store
        .all()
        .map((d) => d.id)
        .sort(),
    ).toEqual(['id:ns:t:n=0:a', 'id:ns:t:n=2:c']);
  });
});
