import { afterEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { until } from '../support/until.js';

/** Two simulators in one process share nothing: each has its own fault sequence and its own queue. */
describe('per-instance simulator state', () => {
  const servers: DocumentServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  async function put(server: DocumentServer, n: number): Promise<{ status: number; contentType: string }> {
    const res = await request(`${server.url}/document/v1/ns/music/docid/d${n}`, {
      method: 'POST',
      body: '{"fields":{}}',
    });
    await res.body.text();
    return { status: res.statusCode, contentType: String(res.headers['content-type']) };
  }

  it('the garbage bodies take turns per server, not per process', async () => {
    const a = await startDocumentServer({ port: 0, faults: { garbageRate: 1 } });
    servers.push(a);
    const firstOfA = await put(a, 1);
    const b = await startDocumentServer({ port: 0, faults: { garbageRate: 1 } });
    servers.push(b);
    // b's first garbage body is the same as a's first, although a already used one.
    expect(await put(b, 1)).toEqual(firstOfA);
    expect((await put(a, 2)).contentType).not.toBe(firstOfA.contentType);
  });

  it('a full queue on one server does not refuse operations on another', async () => {
    // One content slot, held by a stalled operation, and room for one waiting operation.
    const a = await startDocumentServer({ port: 0, faults: { stallRate: 1, contentSlots: 1, queueLimit: 1 } });
    const b = await startDocumentServer({ port: 0, faults: { contentSlots: 1, queueLimit: 1 } });
    servers.push(a, b);
    const controller = new AbortController();
    const held = [0, 1].map((n) =>
      request(`${a.url}/document/v1/ns/music/docid/s${n}`, {
        method: 'POST',
        body: '{"fields":{}}',
        signal: controller.signal,
      }).catch(() => undefined),
    );
    await until(() => a.stats().queue.waiting === 1);
    // a's queue is full, so a third operation there is refused; b still takes them.
    expect((await put(a, 2)).status).toBe(429);
    expect((await put(b, 1)).status).toBe(200);
    controller.abort();
    await Promise.all(held);
  });
});
