import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Http1Pool } from '../../src/http/http1-pool.js';
import { send } from '../../src/http/transport.js';

/** The HTTP/1.1 pool against node:http, which (like the container) answers each connection's requests in order. */
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

async function server(delayMs: number): Promise<{ url: string; connections: Set<Socket>; busiest: () => number }> {
  const connections = new Set<Socket>();
  const active = new Map<Socket, number>();
  let busiest = 0;
  const s: Server = createServer((req, res) => {
    const n = (active.get(req.socket) ?? 0) + 1;
    active.set(req.socket, n);
    busiest = Math.max(busiest, n);
    req.resume();
    req.on('end', () =>
      setTimeout(() => {
        active.set(req.socket, (active.get(req.socket) ?? 1) - 1);
        res.setHeader('content-type', 'application/json');
        res.end('{}');
      }, delayMs),
    );
  });
  s.on('connection', (socket: Socket) => connections.add(socket));
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  closers.push(() => new Promise<void>((r) => (s.closeAllConnections(), s.close(() => r()))));
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, connections, busiest: () => busiest };
}

describe('Http1Pool', () => {
  it('opens connections as the requests at once need them, never more than maxConnecting at a time', async () => {
    const { url, connections } = await server(20);
    const pool = new Http1Pool(url, { connections: 64, pipelining: 1, maxConnecting: 8 });
    closers.push(() => pool.close());
    const all = Array.from({ length: 40 }, (_, i) => send(pool, { method: 'POST', path: `/${i}`, body: '{}' }));
    // In the turn the 40 were asked for: 8 connections on their way, the other 32 requests waiting for them.
    expect(pool.stats.connections).toBe(8);
    expect(pool.stats.waiting).toBe(32);
    const results = await Promise.all(all);
    expect(results.every((r) => r.status === 200)).toBe(true);
    // As the first connected, more were opened for the waiting requests, up to one per request at once.
    expect(connections.size).toBeGreaterThan(8);
    expect(connections.size).toBeLessThanOrEqual(40);
  });

  it('keeps one request per connection with pipelining 1, and reuses idle connections', async () => {
    const { url, connections, busiest } = await server(2);
    const pool = new Http1Pool(url, { connections: 4, pipelining: 1 });
    closers.push(() => pool.close());
    for (let round = 0; round < 3; round++) await Promise.all(Array.from({ length: 12 }, () => send(pool, { method: 'GET', path: '/' })));
    expect(busiest()).toBe(1);
    expect(connections.size).toBe(4);
  });

  it('gives a request that must not be repeated a connection of its own, even with pipelining', async () => {
    const { url } = await server(10);
    const pool = new Http1Pool(url, { connections: 2, pipelining: 4 });
    closers.push(() => pool.close());
    const first = send(pool, { method: 'POST', path: '/a', body: '{}' });
    const unsafe = send(pool, { method: 'PUT', path: '/u', body: '{}', idempotent: false });
    const after = send(pool, { method: 'POST', path: '/b', body: '{}' });
    // The first connection already carries /a: /u goes alone on the second, /b piles onto the first.
    expect(pool.stats.running).toEqual([2, 1]);
    await Promise.all([first, unsafe, after]);
    expect(pool.stats.running).toEqual([0, 0]);
  });
});
