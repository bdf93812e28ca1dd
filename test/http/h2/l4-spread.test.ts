import http2, { type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createTransport, defaultH2Connections } from '../../../src/http/create-transport.js';
import { exchange, send } from '../../../src/http/exchange.js';
import type { Transport } from '../../../src/http/transport.js';
import { TransportError, toTransportError } from '../../../src/http/transport-error.js';
import { startL4Balancer, type L4Balancer } from '../../support/l4-balancer.js';
import { until } from '../../support/until.js';

/**
 * The HTTP/2 pool behind a layer-4 balancer of our own (test/support/l4-balancer.ts), round-robin over node:http2
 * backends on loopback: every node reached, the load moved away from a slow one, a killed node given traffic again
 * by renewal once it is back, and no request lost or answered twice through it all. Conditions are waited for;
 * nothing asserts a duration.
 */

interface Backend {
  port: number;
  /** Requests answered. */
  served: number;
  /** Arrivals per request path: the same path twice is a request sent twice. */
  arrivals: Map<string, number>;
  delayMs: number;
  /** Answer with this stream handler instead. */
  onStream?: (stream: ServerHttp2Stream) => void;
  close(): Promise<void>;
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function backend(delayMs = 0): Promise<Backend> {
  const server = http2.createServer();
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (s) => {
    sessions.add(s);
    s.on('close', () => sessions.delete(s));
    s.on('error', () => undefined);
  });
  const b: Backend = {
    port: 0,
    served: 0,
    arrivals: new Map(),
    delayMs,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sessions) s.destroy();
        server.close(() => r());
      }),
  };
  server.on('stream', (stream, headers) => {
    stream.on('error', () => undefined);
    if (b.onStream !== undefined) {
      b.onStream(stream);
      return;
    }
    const path = headers[':path']!;
    b.arrivals.set(path, (b.arrivals.get(path) ?? 0) + 1);
    stream.resume();
    stream.on('end', () => {
      const answer = () => {
        if (stream.destroyed || stream.closed) return;
        b.served++;
        stream.respond({ ':status': 200, 'content-type': 'application/json' });
        stream.end('{}');
      };
      if (b.delayMs > 0) setTimeout(answer, b.delayMs);
      else setImmediate(answer);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  b.port = (server.address() as AddressInfo).port;
  cleanups.push(() => b.close());
  return b;
}

async function cluster(n: number, delays: number[] = []): Promise<{ backends: Backend[]; lb: L4Balancer }> {
  const backends: Backend[] = [];
  for (let i = 0; i < n; i++) backends.push(await backend(delays[i] ?? 0));
  const lb = await startL4Balancer(backends.map((b) => b.port));
  cleanups.push(() => lb.close());
  return { backends, lb };
}

function track(t: Transport): Transport {
  cleanups.push(() => t.destroy());
  return t;
}

/** What a closed loop of requests saw: answers per request, and the transport errors the caller retried. */
interface LoadResult {
  answered: Map<string, number>;
  retried: Map<string, number>;
}

/**
 * Keeps `inflight` requests out until `done()` says stop (checked before each new request), `total` at most.
 * A request that fails in transport is sent again, as the feeder's retry rules do; any other failure fails the
 * run. Each request has its own path, so the backends can tell a repeat.
 */
async function closedLoop(
  transport: Transport,
  inflight: number,
  total: number,
  done: () => boolean = () => false,
): Promise<LoadResult> {
  const result: LoadResult = { answered: new Map(), retried: new Map() };
  let started = 0;
  const worker = async () => {
    while (started < total && !done()) {
      const path = `/document/v1/ns/t/docid/${started++}`;
      for (;;) {
        try {
          const res = await send(transport, { method: 'POST', path, body: Buffer.from('{"fields":{}}') });
          expect(res.status).toBe(200);
          result.answered.set(path, (result.answered.get(path) ?? 0) + 1);
          break;
        } catch (err) {
          if (!(err instanceof TransportError)) throw err;
          result.retried.set(path, (result.retried.get(path) ?? 0) + 1);
        }
      }
    }
  };
  await Promise.all(Array.from({ length: inflight }, worker));
  return result;
}

function inProgress(b: Backend): number {
  let arrived = 0;
  for (const n of b.arrivals.values()) arrived += n;
  return arrived - b.served;
}

/** Every request answered exactly once; a request that reached a backend more than once was retried after a failure. */
function expectNoneLostOrDoubled(result: LoadResult, backends: Backend[], count: number): void {
  expect(result.answered.size).toBe(count);
  for (const n of result.answered.values()) expect(n).toBe(1);
  const arrivals = new Map<string, number>();
  for (const b of backends) for (const [path, n] of b.arrivals) arrivals.set(path, (arrivals.get(path) ?? 0) + n);
  for (const [path, n] of arrivals) if (n > 1) expect(result.retried.get(path) ?? 0).toBeGreaterThanOrEqual(n - 1);
}

describe('HTTP/2 behind a layer-4 balancer', () => {
  it('with the defaults, reaches every node with connections and requests', async () => {
    const { backends, lb } = await cluster(6);
    const transport = track(createTransport({ origin: lb.url, protocol: 'h2', concurrency: 1024 }));
    // Until every node has answered some (the last connections open a few round trips after the first), or far more
    // requests than that takes.
    const result = await closedLoop(transport, 64, 20_000, () => backends.every((b) => b.served >= 20));
    expectNoneLostOrDoubled(result, backends, result.answered.size);
    // As many as the default (more only if a renewal came on a very slow machine).
    expect(lb.placed.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(defaultH2Connections);
    for (let i = 0; i < backends.length; i++) {
      expect(lb.placed[i]).toBeGreaterThan(0);
      expect(backends[i].served).toBeGreaterThan(0);
    }
  });

  it('connections: N opens exactly N, however few requests each would need', async () => {
    const { backends, lb } = await cluster(3);
    const transport = track(createTransport({ origin: lb.url, protocol: 'h2', connections: 5, maxConnectionAgeMs: 0 }));
    await closedLoop(transport, 32, 1000);
    expect(transport.stats.connections).toBe(5);
    expect(lb.placed).toEqual([2, 2, 1]);
    for (const b of backends) expect(b.served).toBeGreaterThan(0);
  });

  it('keeps one connection for one request at a time, whatever the number allowed', async () => {
    const { lb } = await cluster(3);
    const transport = track(createTransport({ origin: lb.url, protocol: 'h2', connections: 8 }));
    await closedLoop(transport, 1, 50);
    expect(lb.placed.reduce((a, b) => a + b, 0)).toBe(1);
  });

  it('gives a slow node fewer requests than the fast ones', async () => {
    const { backends, lb } = await cluster(3, [0, 0, 150]);
    const transport = track(createTransport({ origin: lb.url, protocol: 'h2', connections: 6, maxConnectionAgeMs: 0 }));
    await closedLoop(transport, 12, 2000);
    expect(lb.placed).toEqual([2, 2, 2]);
    const [fast1, fast2, slow] = backends.map((b) => b.served);
    expect(slow).toBeLessThan(fast1 / 2);
    expect(slow).toBeLessThan(fast2 / 2);
  });

  it('after a node is killed and started again, renewal brings requests back to it; none lost or answered twice', async () => {
    const { backends, lb } = await cluster(3);
    const transport = track(
      createTransport({ origin: lb.url, protocol: 'h2', connections: 6, maxConnectionAgeMs: 400 }),
    );
    let stop = false;
    const running = closedLoop(transport, 16, 1_000_000, () => stop);
    await until(() => backends[1].served > 50);
    // Its answers held back for a moment, so that requests are surely on its connections when it dies.
    backends[1].delayMs = 60_000;
    await until(() => inProgress(backends[1]) >= 2);
    lb.kill(1);
    backends[1].delayMs = 0;
    // The others carry the load meanwhile, on the connections that replaced the lost ones.
    const atKill = backends[0].served + backends[2].served;
    await until(() => backends[0].served + backends[2].served > atKill + 300);
    const before = backends[1].served;
    const placedBefore = lb.placed[1];
    lb.revive(1);
    await until(() => lb.placed[1] > placedBefore && backends[1].served > before + 50);
    stop = true;
    const result = await running;
    expectNoneLostOrDoubled(result, backends, result.answered.size);
    // Requests did fail with the killed node's connections, and were sent again.
    expect(result.retried.size).toBeGreaterThan(0);
  });

  it('lets a long answer on a connection being renewed run to its end', async () => {
    const b = await backend();
    const chunks = 20;
    let sent = 0;
    let next: () => void = () => undefined;
    b.onStream = (stream) => {
      stream.respond({ ':status': 200, 'content-type': 'application/jsonl' });
      // One line each time the test says so, so that the answer outlives the connection's age for sure.
      next = () => {
        if (sent === chunks) return;
        stream.write(`{"n":${sent++}}\n`);
        if (sent === chunks) stream.end();
      };
      next();
    };
    const lb = await startL4Balancer([b.port]);
    cleanups.push(() => lb.close());
    const transport = track(
      createTransport({ origin: lb.url, protocol: 'h2', connections: 1, maxConnectionAgeMs: 50 }),
    );
    const res = await exchange(transport, { method: 'GET', path: '/document/v1/?stream=true' });
    let lines = '';
    for await (const c of res.chunks()) {
      lines += c.toString();
      // Another line only once the connection has been replaced: the answer goes on on the old one.
      if (sent === 1) await until(() => lb.placed[0] > 1);
      next();
    }
    expect(lines.trim().split('\n')).toHaveLength(chunks);
    expect(lb.placed[0]).toBeGreaterThan(1);
  });

  it('ends a drain whose streams make no progress within the request timeout, failing them as a closed connection', async () => {
    const b = await backend();
    b.onStream = () => undefined; // Never answers.
    const lb = await startL4Balancer([b.port]);
    cleanups.push(() => lb.close());
    const transport = track(
      createTransport({ origin: lb.url, protocol: 'h2', connections: 1, maxConnectionAgeMs: 50, timeoutMs: 300 }),
    );
    // No bound of its own: only the drain's watch can end it.
    const err = toTransportError(
      await send(transport, { method: 'GET', path: '/silent', timeoutMs: 0 }).catch((e: unknown) => e),
    );
    expect(err.failure).toBe('closed');
    expect(err.maybeApplied).toBe(true);
    expect(err.message).toMatch(/being replaced/);
  });
});
