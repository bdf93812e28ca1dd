import { describe, expect, it } from 'vitest';
import { closeAfterEach, fails, h2Cause, peerPool, send } from '../../support/h2-peer-client.js';
import { ErrorCode, Flag, FrameType, Setting, literalBlock } from '../../support/h2-peer.js';

/**
 * Floods of frames that cost the server nothing and the client something (RFC 9113 10.5), against a server that
 * writes whatever frames the test says (test/support/h2-peer.ts): empty CONTINUATION frames (CVE-2024-28182),
 * empty DATA frames and interim answers that would keep a stream open past its timeouts, and PINGs: a server
 * that pings with every answer and reads what it is sent is no flood.
 */

closeAfterEach();

const turn = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 20));

/** Calls `sendOne` once a turn until `pending` settles, at most 1,000 times; the times it was called. */
async function sendUntilSettled(pending: Promise<unknown>, sendOne: () => void): Promise<number> {
  let settled = false;
  pending.then(
    () => (settled = true),
    () => (settled = true),
  );
  let sent = 0;
  for (; sent < 1000 && !settled; sent++) {
    sendOne();
    await turn();
  }
  return sent;
}

describe('floods of empty frames', () => {
  it('closes a connection whose server sends endless empty CONTINUATION frames (ENHANCE_YOUR_CALM)', async () => {
    const { peer, pool } = await peerPool({ connections: 2 });
    const pending = send(pool, { method: 'GET', path: '/empty-continuations' });
    const c = await peer.accept();
    const r = await c.request();
    c.headers(r.id, literalBlock([[':status', '200']]), { endHeaders: false });
    // Empty frames add nothing to the block's bytes: only a bound on their count ends this.
    let sent = 0;
    while (!c.closed && c.goawaySent() === undefined && sent < 20_000) {
      for (let i = 0; i < 100; i++) c.continuation(r.id, Buffer.alloc(0), false);
      sent += 100;
      await new Promise((resolve) => setImmediate(resolve));
    }
    const err = await fails(pending);
    expect(err.detail).toBe('H2_FLOOD');
    expect(await c.whenGoaway()).toEqual({ lastStreamId: 0, code: ErrorCode.EnhanceYourCalm });
    expect(sent).toBeLessThan(20_000);
    // The next request goes on a new connection.
    const next = send(pool, { method: 'GET', path: '/next' });
    const c2 = await peer.accept();
    c2.respond((await c2.request()).id, 200, 'ok');
    expect((await next).status).toBe(200);
  });

  it('fails a stream on its body timeout although its server keeps sending empty DATA frames', async () => {
    const { peer, pool } = await peerPool({ timeoutMs: 300 });
    const pending = send(pool, { method: 'GET', path: '/empty-data' });
    const c = await peer.accept();
    const r = await c.request();
    c.headers(r.id, [[':status', '200']]);
    c.data(r.id, 'a');
    // Empty frames, and frames of padding alone, until the request ends (a client they keep alive never ends it).
    const sent = await sendUntilSettled(pending, () => {
      c.data(r.id, Buffer.alloc(0));
      c.data(r.id, Buffer.alloc(0), { pad: 4 });
    });
    expect((await fails(pending)).detail).toBe('H2_BODY_TIMEOUT');
    // It ended while the frames still came.
    expect(sent).toBeLessThan(1000);
  });

  it('fails a stream on its headers timeout although its server keeps sending interim (1xx) answers', async () => {
    const { peer, pool } = await peerPool({ timeoutMs: 300 });
    const pending = send(pool, { method: 'GET', path: '/interim' });
    const c = await peer.accept();
    const r = await c.request();
    const sent = await sendUntilSettled(pending, () => c.headers(r.id, [[':status', '103']]));
    expect((await fails(pending)).detail).toBe('H2_HEADERS_TIMEOUT');
    expect(sent).toBeLessThan(1000);
  });
});

describe('PINGs', () => {
  it('is no flood: a server that pings with every answer while the client writes more than its socket takes at once', async () => {
    const { peer, pool } = await peerPool({ maxStreams: 64 });
    const body = Buffer.alloc(24 * 1024, 0x61);
    const count = 1500;
    const results = Array.from({ length: count }, (_, i) =>
      send(pool, { method: 'POST', path: `/doc/${i}`, body }).then(
        (res) => res.status,
        (err: unknown) => h2Cause(err)?.code ?? String(err),
      ),
    );
    const c = await peer.accept([[Setting.InitialWindowSize, 1 << 20]]);
    c.windowUpdate(0, 2 ** 31 - 1 - 65_535);
    // Each request's body read to its end is answered, a PING before the answer (gRPC's bandwidth probe does so).
    for (let answered = 0; answered < count && !c.closed; answered++) {
      const end = await c
        .take((f) => f.type === FrameType.Data && (f.flags & Flag.EndStream) !== 0)
        .catch(() => undefined);
      if (end === undefined) break;
      c.ping(Buffer.alloc(8, answered & 0xff));
      c.headers(end.streamId, [[':status', '200']], { endStream: true });
    }
    const statuses = await Promise.all(results);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    expect(c.goawaySent()).toBeUndefined();
  });
});
