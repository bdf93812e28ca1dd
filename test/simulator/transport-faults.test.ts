import http2 from 'node:http2';
import net from 'node:net';
import { PassThrough } from 'node:stream';
import { Client } from 'undici';
import { describe, expect, it } from 'vitest';
import { startDocumentServer } from '../../src/simulator/document-api/document-server.js';
import { useDocumentServer } from './document-server-fixture.js';

const sim = useDocumentServer({ visitChunkDocuments: 7 }, 8);

const { call } = sim;

describe('HTTP/1.1', () => {
  it('answers pipelined requests on one connection in order', async () => {
    const socket = net.connect(sim.server.port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const body = '{"fields":{"n":1}}';
    let batch = '';
    for (let i = 0; i < 5; i++)
      batch += `POST /document/v1/ns/t/docid/p${i} HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    batch += 'GET /document/v1/ns/t/docid/p3 HTTP/1.1\r\nHost: x\r\n\r\n';
    batch += 'GET /document/v1/ns/t/docid/missing HTTP/1.1\r\nHost: x\r\n\r\n';
    socket.write(batch);
    let received = '';
    await new Promise<void>((resolve, reject) => {
      socket.on('data', (d) => {
        received += d.toString();
        if ((received.match(/HTTP\/1\.1 /g) ?? []).length === 7 && received.endsWith('}')) resolve();
      });
      socket.on('error', reject);
    });
    socket.destroy();
    const statuses = [...received.matchAll(/HTTP\/1\.1 (\d+)/g)].map((m) => Number(m[1]));
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 404]);
    const pathIds = [...received.matchAll(/"pathId":"([^"]+)"/g)].map((m) => m[1]);
    expect(pathIds).toEqual(
      [0, 1, 2, 3, 4]
        .map((i) => `/document/v1/ns/t/docid/p${i}`)
        .concat(['/document/v1/ns/t/docid/p3', '/document/v1/ns/t/docid/missing']),
    );
    expect(received).toContain('"fields":{"n":1}');
  });

  it('keeps connections alive across requests', async () => {
    const client = new Client(sim.server.url, { pipelining: 4 });
    const connections = new Set<unknown>();
    client.on('connect', (origin) => connections.add(origin));
    const results = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const r = await client.request({
          method: 'POST',
          path: `/document/v1/ns/t/docid/k${i}`,
          body: '{"fields":{}}',
        });
        await r.body.text();
        return r.statusCode;
      }),
    );
    expect(results.every((s) => s === 200)).toBe(true);
    expect(connections.size).toBe(1);
    await client.close();
  });
});

describe('HTTP/2 cleartext with prior knowledge', () => {
  it('serves document operations over h2c on the same port', async () => {
    const session = http2.connect(sim.server.url);
    const exchange = (headers: http2.OutgoingHttpHeaders, body?: string) =>
      new Promise<{ status: number; text: string; contentType: string | undefined }>((resolve, reject) => {
        const stream = session.request(headers);
        let status = 0;
        let contentType: string | undefined;
        let text = '';
        stream.on('response', (h) => {
          status = Number(h[':status']);
          contentType = h['content-type'];
        });
        stream.setEncoding('utf8');
        stream.on('data', (d) => (text += d));
        stream.on('end', () => resolve({ status, text, contentType }));
        stream.on('error', reject);
        stream.end(body);
      });
    const puts = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        exchange(
          { ':method': 'POST', ':path': `/document/v1/ns/t/docid/h${i}`, 'content-type': 'application/json' },
          `{"fields":{"i":${i}}}`,
        ),
      ),
    );
    expect(puts.map((p) => p.status)).toEqual(Array(10).fill(200));
    expect(JSON.parse(puts[3].text)).toEqual({ pathId: '/document/v1/ns/t/docid/h3', id: 'id:ns:t::h3' });
    const got = await exchange({ ':method': 'GET', ':path': '/document/v1/ns/t/docid/h3' });
    expect(got.status).toBe(200);
    expect(got.contentType).toBe('application/json; charset=UTF-8');
    expect(JSON.parse(got.text).fields).toEqual({ i: 3 });
    const visit = await exchange({
      ':method': 'GET',
      ':path': '/document/v1/ns/t/docid/?stream=true',
      accept: 'application/jsonl',
    });
    expect(visit.text.split('\n').filter((l) => l.startsWith('{"put"'))).toHaveLength(10);
    session.close();
    // HTTP/1.1 still works afterwards.
    expect((await call('GET', '/document/v1/ns/t/docid/h3')).status).toBe(200);
  });
});

describe('faults', () => {
  it('answers injected storage errors with the id, and 503 without', async () => {
    sim.server.faults.set({ errorRate: 1, errorStatuses: [507] });
    const r = await call('POST', '/document/v1/ns/t/docid/e', { fields: {} });
    expect(r.status).toBe(507);
    expect(Object.keys(r.json)).toEqual(['pathId', 'id', 'message']);
    expect(sim.server.store.size()).toBe(0);
    sim.server.faults.set({ errorStatuses: [503] });
    const u = await call('POST', '/document/v1/ns/t/docid/e', { fields: {} });
    expect(u.status).toBe(503);
    expect(Object.keys(u.json)).toEqual(['pathId', 'message']);
    sim.server.faults.set({ errorStatuses: [429] });
    const visit = await call('GET', '/document/v1/ns/t/docid/');
    expect(visit.status).toBe(429);
    expect(Object.keys(visit.json)).toEqual(['pathId', 'message']);
    // The admin path is never subject to faults.
    expect((await call('GET', '/_sim/faults')).status).toBe(200);
  });

  it('injects errors at the configured share, deterministically', async () => {
    sim.server.faults.set({ errorRate: 0.5, errorStatuses: [429], seed: 99 });
    const run = async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 40; i++)
        statuses.push((await call('POST', `/document/v1/ns/t/docid/r${i}`, { fields: {} })).status);
      return statuses;
    };
    const first = await run();
    expect(first.filter((s) => s === 429).length).toBeGreaterThan(5);
    expect(first.filter((s) => s === 200).length).toBeGreaterThan(5);
    sim.server.faults.set({ seed: 99 });
    expect(await run()).toEqual(first);
  });

  it('blocks puts and updates with 507 while feedBlock is on, and not reads or removes (they free space)', async () => {
    sim.server.store.put('id:ns:t::b', { a: 1 });
    sim.server.faults.set({ feedBlock: true });
    for (const [method, body] of [
      ['POST', { fields: {} }],
      ['PUT', { fields: { a: { assign: 2 } } }],
    ] as const) {
      const r = await call(method, '/document/v1/ns/t/docid/b', body);
      expect(r.status).toBe(507);
      expect(r.json.id).toBe('id:ns:t::b');
      expect(r.json.message).toEqual(expect.any(String));
    }
    expect((await call('GET', '/document/v1/ns/t/docid/b')).status).toBe(200);
    expect((await call('DELETE', '/document/v1/ns/t/docid/b')).status).toBe(200);
    expect(sim.server.store.size()).toBe(0);
    sim.server.faults.set({ feedBlock: false });
  });

  it('answers 504 when latency exceeds the timeout, without applying the operation', async () => {
    sim.server.faults.set({ latencyMs: 300 });
    const r = await call('POST', '/document/v1/ns/t/docid/slow?timeout=50ms', { fields: {} });
    expect(r.status).toBe(504);
    expect(r.json).toEqual({ pathId: '/document/v1/ns/t/docid/slow', message: 'Timeout after 50ms' });
    expect(sim.server.store.size()).toBe(0);
    sim.server.faults.set({ latencyMs: 20 });
    expect((await call('POST', '/document/v1/ns/t/docid/slow', { fields: {} })).status).toBe(200);
    expect(sim.server.store.size()).toBe(1);
  });

  it('queues at the service rate and answers 429 beyond the queue limit', async () => {
    sim.server.faults.set({ maxOpsPerSecond: 50, queueLimit: 3 });
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => call('POST', `/document/v1/ns/t/docid/q${i}`, { fields: {} })),
    );
    const rejected = results.filter((r) => r.status === 429);
    const accepted = results.filter((r) => r.status === 200);
    expect(rejected.length).toBeGreaterThan(0);
    expect(accepted.length).toBeGreaterThan(0);
    expect(rejected.length + accepted.length).toBe(12);
    expect(rejected[0].json).toEqual({
      pathId: expect.stringMatching(/^\/document\/v1\/ns\/t\/docid\/q\d+$/),
      message: 'Rejecting execution due to overload: 3 requests already enqueued',
    });
    expect(sim.server.store.size()).toBe(accepted.length);
  });

  it('cuts the connection after applying the operation at closeRate', async () => {
    sim.server.faults.set({ closeRate: 1 });
    const client = new Client(sim.server.url);
    await expect(
      (async () => {
        const r = await client.request({
          method: 'POST',
          path: '/document/v1/ns/t/docid/cut',
          body: '{"fields":{"a":1}}',
        });
        await r.body.text();
      })(),
    ).rejects.toThrow();
    await client.close().catch(() => {});
    expect(sim.server.store.get('id:ns:t::cut')?.fields).toEqual({ a: 1 });
    sim.server.faults.set({ closeRate: 0 });
    expect((await call('GET', '/document/v1/ns/t/docid/cut')).status).toBe(200);
  });

  it('cuts streamed visits after N documents; resuming from the last continuation line re-sends the rest', async () => {
    sim.server.store.seed(Array.from({ length: 25 }, (_, i) => ({ id: `id:ns:t::s${i}`, fields: { i } })));
    sim.server.faults.set({ cutStreamAfterDocuments: 10 });
    const client = new Client(sim.server.url);
    let text = '';
    await expect(
      (async () => {
        const r = await client.request({
          method: 'GET',
          path: '/document/v1/ns/t/docid/?stream=true',
          headers: { accept: 'application/jsonl' },
        });
        for await (const chunk of r.body) text += chunk.toString();
      })(),
    ).rejects.toThrow();
    await client.close().catch(() => {});
    const lines = text.split('\n').filter((l) => l.startsWith('{'));
    const firstPart = lines.map((l) => JSON.parse(l));
    expect(firstPart.filter((o) => o.put)).toHaveLength(10);
    expect(firstPart.some((o) => o.sessionStats)).toBe(false);
    const tokenIndex = firstPart.findIndex((o) => o.continuation?.token);
    expect(tokenIndex).toBe(7); // after the 7th document
    const token = firstPart[tokenIndex].continuation.token;

    sim.server.faults.set({ cutStreamAfterDocuments: 0 });
    const rest = await call(
      'GET',
      `/document/v1/ns/t/docid/?stream=true&continuation=${encodeURIComponent(token)}`,
      undefined,
      {
        accept: 'application/jsonl',
      },
    );
    const after = rest.text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((o) => o.put)
      .map((o) => o.put);
    const before = firstPart.slice(0, tokenIndex).map((o) => o.put);
    expect(after).toHaveLength(18);
    expect(new Set([...before, ...after]).size).toBe(25);
    // Documents 8-10 of the cut stream came after the last continuation line, so they come again.
    for (const o of firstPart.slice(tokenIndex + 1)) expect(after).toContain(o.put);
  });
});

describe('request log', () => {
  it('writes one line per request to the given stream', async () => {
    const log = new PassThrough();
    let text = '';
    log.on('data', (d) => (text += d.toString()));
    const logged = await startDocumentServer({ port: 0, requestLog: log });
    try {
      const client = new Client(logged.url);
      const r = await client.request({
        method: 'POST',
        path: '/document/v1/ns/t/docid/l?timeout=5s',
        body: '{"fields":{}}',
      });
      await r.body.text();
      const g = await client.request({ method: 'GET', path: '/document/v1/ns/t/docid/none' });
      await g.body.text();
      await client.close();
      const lines = text.trim().split('\n');
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(/ POST \/document\/v1\/ns\/t\/docid\/l\?timeout=5s 200$/);
      expect(lines[1]).toMatch(/ GET \/document\/v1\/ns\/t\/docid\/none 404$/);
    } finally {
      await logged.close();
    }
  });
});
