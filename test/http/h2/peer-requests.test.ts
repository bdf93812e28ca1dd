import { describe, expect, it } from 'vitest';
import { Http2Transport as Http2Pool } from '../../../src/http/h2/h2-transport.js';
import { closeAfterEach, fails, later, send } from '../../support/h2-peer-client.js';
import { FrameType, Peer, Setting, type PeerConnection } from '../../support/h2-peer.js';

/**
 * What the client puts on the wire for a request, read back frame by frame by a peer of the test's own
 * (test/support/h2-peer.ts): headers as the caller has them at the time of each request, and nothing it may
 * not send (RFC 9113 §8.2.1, §8.3.1).
 */

closeAfterEach();

/** A pool with its one connection open (a first request answered). */
async function setup(): Promise<{ pool: Http2Pool; c: PeerConnection }> {
  const peer = await Peer.start();
  later(() => peer.close());
  const pool = new Http2Pool(peer.url, { connections: 1, timeoutMs: 30_000 });
  later(() => pool.destroy());
  const warm = send(pool, { method: 'GET', path: '/warm' });
  const c = await peer.accept();
  c.respond((await c.request()).id, 200, 'ok');
  await warm;
  return { pool, c };
}

/** Sends a request, answers it 200, and returns the headers it arrived with. */
async function roundTrip(pool: Http2Pool, c: PeerConnection, headers: string[]): Promise<Record<string, string>> {
  const pending = send(pool, { method: 'POST', path: '/h', headers, body: Buffer.from('{}') });
  const r = await c.request();
  c.respond(r.id, 200, 'ok');
  await pending;
  return r.headers;
}

// A transport takes headers as flat arrays only (TransportRequest.headers): objects are made into one per kind of
// request by their callers, so an array changed in place is what there is to follow.
describe('header lists the caller changes between requests', () => {
  it('sends the values a flat array has at each request', async () => {
    const { pool, c } = await setup();
    const headers = ['authorization', 'Bearer one', 'content-type', 'application/json'];
    expect((await roundTrip(pool, c, headers)).authorization).toBe('Bearer one');
    expect((await roundTrip(pool, c, headers)).authorization).toBe('Bearer one');
    headers[1] = 'Bearer two';
    expect((await roundTrip(pool, c, headers)).authorization).toBe('Bearer two');
    headers.push('x-added', 'yes');
    expect((await roundTrip(pool, c, headers))['x-added']).toBe('yes');
  });
});

describe('what may not be sent is refused before sending', () => {
  it.each([
    ['a header value with CR LF (a header injected)', { path: '/ok', headers: ['x-a', 'a\r\nx-injected: 1'] }],
    ['a header value with LF', { path: '/ok', headers: ['x-a', 'a\nb'] }],
    ['a header value with NUL', { path: '/ok', headers: ['x-a', 'a\0b'] }],
    ['a header value with leading whitespace', { path: '/ok', headers: ['x-a', ' a'] }],
    ['a header value beyond latin1 (it would go out as another byte)', { path: '/ok', headers: ['x-a', 'caf\u0151'] }],
    ['a header name with a space', { path: '/ok', headers: ['x a', 'b'] }],
    ['a path with CR LF', { path: '/a\r\nb', headers: [] }],
    ['a path with a space', { path: '/a b', headers: [] }],
    [
      'a path beyond latin1 (ő would go out as Q, another document)',
      { path: '/document/v1/ns/t/docid/\u0151', headers: [] },
    ],
    ['an empty path', { path: '', headers: [] }],
  ] as const)('%s: that request fails, nothing of it is sent, the connection goes on', async (_what, req) => {
    const { pool, c } = await setup();
    await roundTrip(pool, c, ['x-warm', '1']);
    const err = await fails(
      send(pool, { method: 'POST', path: req.path, headers: req.headers, body: Buffer.from('{}') }),
    );
    expect(err.detail).toBe('H2_INVALID_REQUEST');
    const after = await roundTrip(pool, c, ['x-after', '1']);
    expect(after['x-after']).toBe('1');
    // Three requests reached the server: the first, the warm one and the one after.
    expect(c.frames.filter((f) => f.type === 0x1)).toHaveLength(3);
    expect(c.frames.filter((f) => f.type === 0x3)).toHaveLength(0);
  });
});

describe('a server that takes no streams', () => {
  it('fails a request waiting for room once its headers bound has passed, as never sent', async () => {
    const peer = await Peer.start();
    later(() => peer.close());
    const pool = new Http2Pool(peer.url, { connections: 1, timeoutMs: 300 });
    later(() => pool.destroy());
    const pending = send(pool, { method: 'GET', path: '/never' });
    const c = await peer.accept([[Setting.MaxConcurrentStreams, 0]]);
    const err = await fails(pending);
    expect(err.failure).toBe('refused');
    expect(err.maybeApplied).toBe(false);
    expect(err.message).toContain('took the request');
    // Nothing of it reached the wire.
    expect(c.frames.some((f) => f.type === FrameType.Headers)).toBe(false);
    expect(pool.stats.waiting).toBe(0);
  });

  it('sends a waiting request once the server allows streams again, before its bound', async () => {
    const peer = await Peer.start();
    later(() => peer.close());
    const pool = new Http2Pool(peer.url, { connections: 1, timeoutMs: 30_000 });
    later(() => pool.destroy());
    const pending = send(pool, { method: 'GET', path: '/later' });
    const c = await peer.accept([[Setting.MaxConcurrentStreams, 0]]);
    c.settings([[Setting.MaxConcurrentStreams, 10]]);
    const r = await c.request();
    expect(r.headers[':path']).toBe('/later');
    c.respond(r.id, 200, 'ok');
    expect((await pending).status).toBe(200);
  });
});
