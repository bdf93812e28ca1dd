import { afterEach, describe, expect, it } from 'vitest';
import { gunzipSync } from 'node:zlib';
import { feed } from '../../src/feed/feeder.js';
import { type OperationResult } from '../../src/feed/operation-result.js';
import { startRecordingServer, type RecordedRequest } from './recording-server.js';

// Retry-After is capped by maxDelayMs, so the cap stays above the 0.2 s the server asks for.
const fast = { baseDelayMs: 1, maxDelayMs: 1000, factor: 1 };

/** What the feeder puts on the wire, seen by a plain node:http server. */
describe('feeder requests', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });

  it('sends flags and operation parameters as query parameters, headers, and gzip when asked', async () => {
    const server = await startRecordingServer();
    cleanups.push(server.close);
    const big = 'y'.repeat(600);
    await feed(
      [
        { put: 'id:ns:t::small', fields: { a: 1 } },
        { put: 'id:ns:t::big', fields: { big } },
        { update: 'id:ns:t::u', create: true, condition: 't.a == 1', fields: { a: { assign: 2 } } },
        { remove: 'id:ns:t::r' },
      ],
      {
        endpoint: `${server.url}/base`,
        route: 'default',
        tracelevel: 3,
        dryRun: true,
        deadlineMs: 30_000,
        compression: 'gzip',
        headers: { authorization: 'Bearer secret' },
        failures: false,
      },
    );
    const byPath = (id: string) => server.requests.find((r) => r.url.includes(`/docid/${id}?`))!;
    const small = byPath('small');
    expect(small.url).toMatch(
      /^\/base\/document\/v1\/ns\/t\/docid\/small\?route=default&tracelevel=3&dryRun=true&timeout=\d+ms$/,
    );
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(small.body.toString()).toBe('{"fields":{"a":1}}');
    expect(small.headers.authorization).toBe('Bearer secret');
    const bigReq = byPath('big');
    expect(bigReq.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(gunzipSync(bigReq.body).toString())).toEqual({ fields: { big } });
    const up = byPath('u');
    expect(up.method).toBe('PUT');
    expect(up.url).toContain('&condition=t.a%20%3D%3D%201&create=true');
    const rm = byPath('r');
    expect(rm.method).toBe('DELETE');
    expect(rm.body.length).toBe(0);
  });

  it('does not gzip on loopback with compression auto', async () => {
    const server = await startRecordingServer();
    cleanups.push(server.close);
    await feed([{ put: 'id:ns:t::big', fields: { big: 'z'.repeat(2000) } }], { endpoint: server.url, failures: false });
    expect(server.requests[0].headers['content-encoding']).toBeUndefined();
  });

  it('retries 504 only for operations safe to repeat, honours Retry-After, and makes other 4xx final', async () => {
    const seen = new Map<string, number>();
    const server = await startRecordingServer((req: RecordedRequest, res) => {
      const key = `${req.method} ${req.url}`;
      const n = (seen.get(key) ?? 0) + 1;
      seen.set(key, n);
      const path = req.url.split('?')[0];
      let status = 200;
      let headers: Record<string, string> = {};
      if (path.endsWith('/t504') && n === 1) status = 504;
      if (path.endsWith('/inc504')) status = 504;
      if (path.endsWith('/t429') && n === 1) {
        status = 429;
        headers = { 'retry-after': '0.2' };
      }
      if (path.endsWith('/t400')) status = 400;
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify({ pathId: path, ...(status !== 200 ? { message: `status ${status}` } : { id: 'x' }) }));
    });
    cleanups.push(server.close);
    const results: OperationResult[] = [];
    const t0 = performance.now();
    let retryAt = 0;
    await feed(
      [
        { put: 'id:ns:t::t504', fields: {} },
        { update: 'id:ns:t::inc504', fields: { n: { increment: 1 } } },
        { put: 'id:ns:t::t429', fields: {} },
        { put: 'id:ns:t::t400', fields: {} },
      ],
      {
        endpoint: server.url,
        failures: false,
        retryPolicy: fast,
        onResult: (r) => {
          results.push(r);
          if (r.id === 'id:ns:t::t429') retryAt = performance.now() - t0;
        },
      },
    );
    const get = (id: string) => results.find((r) => r.id === `id:ns:t::${id}`)!;
    expect(get('t504')).toMatchObject({ ok: true, attempts: 2 });
    expect(get('inc504')).toMatchObject({
      ok: false,
      status: 504,
      attempts: 1,
      message: expect.stringMatching(/^status 504; not sent again: it may have been applied/),
    });
    expect(get('t429')).toMatchObject({ ok: true, attempts: 2 });
    // Retry-After 0.2 s outweighs the 1-5 ms backoff.
    expect(retryAt).toBeGreaterThanOrEqual(190);
    expect(get('t400')).toMatchObject({ ok: false, status: 400, attempts: 1 });
  });

  it('does not resend an unsafe operation whose connection broke after sending, but resends a put', async () => {
    const seen = new Map<string, number>();
    const server = await startRecordingServer((req, res) => {
      const n = (seen.get(req.url) ?? 0) + 1;
      seen.set(req.url, n);
      if (n === 1) {
        res.socket?.destroy();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
    cleanups.push(server.close);
    const results: OperationResult[] = [];
    await feed(
      [
        { put: 'id:ns:t::p', fields: {} },
        { update: 'id:ns:t::inc', fields: { n: { increment: 1 } } },
      ],
      { endpoint: server.url, failures: false, retryPolicy: fast, inflight: 1, onResult: (r) => results.push(r) },
    );
    expect(results.find((r) => r.id === 'id:ns:t::p')).toMatchObject({ ok: true, attempts: 2 });
    expect(results.find((r) => r.id === 'id:ns:t::inc')).toMatchObject({ ok: false, attempts: 1 });
    expect(seen.get('/document/v1/ns/t/docid/inc')).toBe(1);
  });

  it('never pipelines an unsafe update behind another request, so a cut connection cannot make undici resend it', async () => {
    const arrivals = new Map<string, number>();
    let cuts = 0;
    const server = await startRecordingServer((req, res) => {
      const path = req.url.split('?')[0];
      arrivals.set(path, (arrivals.get(path) ?? 0) + 1);
      if (path.endsWith('/cut') && cuts++ === 0) {
        // Answer nothing and cut the connection once whatever was pipelined behind has arrived.
        setTimeout(() => res.socket?.destroy(), 50);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
    cleanups.push(server.close);
    const results: OperationResult[] = [];
    await feed(
      [
        { put: 'id:ns:t::cut', fields: {} },
        { update: 'id:ns:t::inc', fields: { n: { increment: 1 } } },
        { put: 'id:ns:t::after', fields: {} },
      ],
      {
        endpoint: server.url,
        failures: false,
        connections: 1,
        pipelining: 8,
        retryPolicy: fast,
        onResult: (r) => results.push(r),
      },
    );
    expect(arrivals.get('/document/v1/ns/t/docid/inc')).toBe(1);
    expect(results.every((r) => r.ok)).toBe(true);
  });

  it('sends operations on one id one at a time, in input order', async () => {
    let inFlight = new Map<string, number>();
    let overlap = false;
    const order: string[] = [];
    const server = await startRecordingServer((req, res) => {
      const path = req.url.split('?')[0];
      const n = (inFlight.get(path) ?? 0) + 1;
      inFlight.set(path, n);
      if (n > 1) overlap = true;
      order.push(`${path} ${req.body.toString()}`);
      setTimeout(() => {
        inFlight.set(path, inFlight.get(path)! - 1);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      }, 2);
    });
    cleanups.push(server.close);
    const ops = [];
    for (let v = 0; v < 10; v++) for (let d = 0; d < 5; d++) ops.push({ put: `id:ns:t::d${d}`, fields: { v } });
    await feed(ops, { endpoint: server.url, failures: false, connections: 4, pipelining: 4 });
    expect(overlap).toBe(false);
    for (let d = 0; d < 5; d++) {
      const vs = order
        .filter((o) => o.startsWith(`/document/v1/ns/t/docid/d${d} `))
        .map((o) => JSON.parse(o.split(' ')[1]).fields.v);
      expect(vs).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    }
    inFlight = new Map();
  });
});

describe('circuit breaker in the feeder', () => {
  it('probes with one request at a time while only failures come back, then opens up again', async () => {
    let outstanding = 0;
    let arrivals = 0;
    const concurrencyAtArrival: number[] = [];
    const server = await startRecordingServer((_req, res) => {
      arrivals++;
      outstanding++;
      concurrencyAtArrival.push(outstanding);
      const fail = arrivals <= 150;
      // 30 ms an answer: the first burst's connections all open and send before its first answer, even on a loaded
      // machine (at 3 ms a late connect looked like a lone probe, and the rest of the burst like a breach after it).
      setTimeout(() => {
        outstanding--;
        res.writeHead(fail ? 503 : 200, { 'content-type': 'application/json' });
        res.end(fail ? '{"message":"unavailable"}' : '{}');
      }, 30);
    });
    const ops = Array.from({ length: 100 }, (_, i) => ({ put: `id:ns:t::h${i}`, fields: {} }));
    try {
      const summary = await feed(ops, {
        endpoint: server.url,
        failures: false,
        halfOpenSeconds: 0,
        maxRetries: 1000,
        retryPolicy: { baseDelayMs: 1, maxDelayMs: 2 },
        connections: 4,
        pipelining: 16,
      });
      expect(summary.ok).toBe(100);
    } finally {
      await server.close();
    }
    // The first burst went out before any answer; every later request while failing was alone on the wire.
    const firstBurst = concurrencyAtArrival.findIndex((c, i) => i > 0 && c === 1);
    expect(Math.max(...concurrencyAtArrival.slice(0, firstBurst))).toBeGreaterThan(1);
    expect(Math.max(...concurrencyAtArrival.slice(firstBurst, 150))).toBe(1);
  });
});
