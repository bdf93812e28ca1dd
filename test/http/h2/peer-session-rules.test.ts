import { describe, expect, it } from 'vitest';
import { closeAfterEach, fails, peerPool, send } from '../../support/h2-peer-client.js';
import { ErrorCode, FrameType } from '../../support/h2-peer.js';

/**
 * Rules of the connection that decide whether a request may go again (RFC 9113 8.7, 6.8), against a server that
 * writes whatever frames the test says (test/support/h2-peer.ts).
 */

closeAfterEach();

describe('REFUSED_STREAM and GOAWAY', () => {
  it('fails a request maybe applied, and never sends it again, when REFUSED_STREAM comes after the answer began', async () => {
    const { peer, pool } = await peerPool({ connections: 2 });
    const pending = send(pool, { method: 'POST', path: '/increment', body: Buffer.from('{}') });
    const c = await peer.accept();
    const r = await c.request();
    c.headers(r.id, [[':status', '200']]);
    c.data(r.id, 'par');
    c.rst(r.id, ErrorCode.RefusedStream);
    const err = await fails(pending);
    expect(err.failure).toBe('reset');
    expect(err.maybeApplied).toBe(true);
    // Sent once: no second HEADERS on this connection or a new one.
    const next = send(pool, { method: 'GET', path: '/next' });
    const seen = await c.request();
    expect(seen.headers[':path']).toBe('/next');
    c.respond(seen.id, 200, 'ok');
    expect((await next).status).toBe(200);
    expect(peer.connections).toHaveLength(1);
  });

  it('still sends a request again when REFUSED_STREAM comes before any answer', async () => {
    const { peer, pool } = await peerPool();
    const pending = send(pool, { method: 'GET', path: '/again' });
    const c = await peer.accept();
    const r = await c.request();
    c.rst(r.id, ErrorCode.RefusedStream);
    const r2 = await c.request();
    expect(r2.headers[':path']).toBe('/again');
    c.respond(r2.id, 200, 'ok');
    expect((await pending).status).toBe(200);
  });

  it('takes a GOAWAY whose last stream id rises above an earlier one as a protocol error', async () => {
    const { peer, pool } = await peerPool();
    const first = send(pool, { method: 'GET', path: '/one' });
    const second = send(pool, { method: 'GET', path: '/two' });
    const c = await peer.accept();
    const r1 = await c.request();
    const r2 = await c.request();
    c.goaway(r2.id, ErrorCode.NoError);
    c.goaway(r2.id + 2, ErrorCode.NoError);
    const err = await fails(first);
    expect(err.detail).toBe('H2_PROTOCOL_ERROR');
    expect(await c.whenGoaway()).toEqual({ lastStreamId: 0, code: ErrorCode.ProtocolError });
    await fails(second);
    expect(c.frames.filter((f) => f.type === FrameType.Headers).map((f) => f.streamId)).toEqual([r1.id, r2.id]);
  });
});
