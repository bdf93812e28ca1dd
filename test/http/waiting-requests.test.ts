import http from 'node:http';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createTransport } from '../../src/http/create-transport.js';
import { send } from '../../src/http/exchange.js';
import type { Transport, WireProtocol } from '../../src/http/transport.js';
import { TransportError } from '../../src/http/transport-error.js';

/**
 * A request that waits for room on a connection means the same on both protocols: its wait counts against its
 * headers bound (past it, it fails as `refused`, never sent), and an abort while it waits ends it at once, never sent.
 */
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

/** Answers every path but /hang..., which is never answered; `seen` lists the paths that reached it. */
async function serve(protocol: WireProtocol): Promise<{ url: string; seen: string[] }> {
  const seen: string[] = [];
  const handle = (
    req: http.IncomingMessage | http2.Http2ServerRequest,
    res: http.ServerResponse | http2.Http2ServerResponse,
  ): void => {
    seen.push(req.url!);
    req.resume();
    if (req.url!.startsWith('/hang')) return;
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  };
  let server: http.Server | http2.Http2Server;
  if (protocol === 'h2') {
    const h2 = http2.createServer(handle);
    const sessions = new Set<http2.ServerHttp2Session>();
    h2.on('session', (s) => sessions.add(s));
    cleanups.push(() => {
      for (const s of sessions) s.destroy();
    });
    server = h2;
  } else {
    const h1 = http.createServer(handle);
    cleanups.push(() => h1.closeAllConnections());
    server = h1;
  }
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

/** One connection with room for one request: a second one waits. */
function oneAtATime(url: string, protocol: WireProtocol): Transport {
  const transport = createTransport({ origin: url, protocol, connections: 1, maxStreams: 1, pipelining: 1 });
  cleanups.unshift(() => transport.destroy());
  return transport;
}

async function failureOf(p: Promise<unknown>): Promise<TransportError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TransportError);
  return err as TransportError;
}

describe.each(['h2', 'http1.1'] as const)('a request waiting for room, over %s', (protocol) => {
  it('fails as refused, never sent, once its wait outlasts its headers bound', async () => {
    const { url, seen } = await serve(protocol);
    const transport = oneAtATime(url, protocol);
    const hanging = send(transport, { method: 'GET', path: '/hang', timeoutMs: 0 });
    hanging.catch(() => undefined);
    while (seen.length === 0) await new Promise((r) => setTimeout(r, 5));
    const waiting = send(transport, { method: 'POST', path: '/second', body: Buffer.from('{}'), timeoutMs: 100 });
    const err = await failureOf(waiting);
    expect(err.failure).toBe('refused');
    expect(err.maybeApplied).toBe(false);
    expect(transport.stats.waiting).toBe(0);
    expect(seen).toEqual(['/hang']);
  });

  it('ends at once, never sent, when aborted while it waits, and takes no connection afterwards', async () => {
    const { url, seen } = await serve(protocol);
    const transport = oneAtATime(url, protocol);
    const first = new AbortController();
    const hanging = send(transport, { method: 'GET', path: '/hang', timeoutMs: 0, signal: first.signal });
    hanging.catch(() => undefined);
    while (seen.length === 0) await new Promise((r) => setTimeout(r, 5));
    const abort = new AbortController();
    let settled = false;
    const waiting = send(transport, {
      method: 'POST',
      path: '/second',
      body: Buffer.from('{}'),
      timeoutMs: 0,
      signal: abort.signal,
    });
    void waiting.then(
      () => (settled = true),
      () => (settled = true),
    );
    expect(transport.stats.waiting).toBe(1);
    abort.abort();
    // Told in the abort's own turn, with the first request still hanging on the only connection.
    await new Promise((r) => setImmediate(r));
    expect(settled).toBe(true);
    const err = await failureOf(waiting);
    expect(err.failure).toBe('aborted');
    expect(err.maybeApplied).toBe(false);
    // The HTTP/2 pool drops it from its queue only when its turn comes (and then sends nothing).
    if (protocol === 'http1.1') expect(transport.stats.waiting).toBe(0);
    // The connection freed goes to the next request, not to the aborted one.
    first.abort();
    const third = await send(transport, { method: 'GET', path: '/third' });
    expect(third.status).toBe(200);
    expect(seen).not.toContain('/second');
  });
});
