import { describe, expect, it } from 'vitest';
import { closeAfterEach, fails, later, peerPool, send } from '../../support/h2-peer-client.js';
import { ErrorCode, FrameType, Peer, type PeerConnection } from '../../support/h2-peer.js';
import { until } from '../../support/until.js';
import { createTransport } from '../../../src/http/create-transport.js';
import { send as sendNow } from '../../../src/http/exchange.js';
import { toTransportError } from '../../../src/http/transport-error.js';

/**
 * The pool's connections through their lives, against a server that writes whatever frames the test says: a
 * connection that dies before it is ready (its requests were never sent), the start (the work shared by the
 * connections as they open), a GOAWAY (no longer counted as ready; a graceful one is no lost node), and close().
 */

closeAfterEach();

const requestsOn = (c: PeerConnection): number => c.frames.filter((f) => f.type === FrameType.Headers).length;

const ok = (c: PeerConnection, id: number): void => {
  c.headers(id, [[':status', '200']], { endStream: true });
};

/** Answers every request on `c` as it comes, until the connection closes. */
function answerAll(c: PeerConnection): void {
  void (async () => {
    for (;;) {
      const r = await c.request().catch(() => undefined);
      if (r === undefined) return;
      ok(c, r.id);
    }
  })();
}

/** The pool's view of its lost nodes, white-box: when a connection in use was last lost (-Infinity: never). */
const lostAt = (pool: object): number => (pool as { lostAt: number }).lostAt;

describe('a connection that dies before it is ready', () => {
  it('fails its waiting requests as never sent (not maybe applied) when no other connection can take them', async () => {
    const { peer, pool } = await peerPool();
    const posts = [1, 2, 3].map((i) =>
      send(pool, { method: 'POST', path: `/increment/${i}`, body: Buffer.from('{"fields":{"n":{"increment":1}}}') }),
    );
    const c = await peer.next();
    await c.take((f) => f.type === FrameType.Settings);
    c.socket.destroy();
    for (const p of posts) {
      const err = await fails(p);
      expect(err.maybeApplied).toBe(false);
    }
  });

  it('moves its waiting requests to a connection that is ready: all answered, none failed', async () => {
    const { peer, pool } = await peerPool({ connections: 2 });
    const first = send(pool, { method: 'GET', path: '/first' });
    const a = await peer.accept();
    ok(a, (await a.request()).id);
    await first;
    answerAll(a);
    const posts = Array.from({ length: 8 }, (_, i) =>
      send(pool, { method: 'POST', path: `/increment/${i}`, body: Buffer.from('{}') }),
    );
    // The second connection the pool opens closes before its SETTINGS.
    const b = await peer.next();
    b.socket.destroy();
    for (const p of posts) expect((await p).status).toBe(200);
    expect(requestsOn(b)).toBe(0);
  });

  it('protocol auto: the requests waiting on the first connection fail as never sent when it dies before its SETTINGS', async () => {
    const peer = await Peer.start();
    later(() => peer.close());
    const transport = createTransport({ origin: peer.url, protocol: 'auto', timeoutMs: 30_000 });
    later(() => transport.destroy());
    const posts = [1, 2].map((i) =>
      sendNow(transport, { method: 'POST', path: `/increment/${i}`, body: Buffer.from('{}') }).then(
        () => undefined,
        (err: unknown) => toTransportError(err),
      ),
    );
    const c = await peer.next();
    await c.take((f) => f.type === FrameType.Settings);
    // A few bytes of a frame and the close: not the silent close of an HTTP/1.1-only server.
    c.write(Buffer.from([0, 0, 6]));
    c.socket.end();
    for (const p of posts) {
      const err = await p;
      expect(err?.maybeApplied).toBe(false);
    }
  });
});

describe('the start', () => {
  it('shares what waits among the connections as they open, rather than piling it on the first one ready', async () => {
    const { peer, pool } = await peerPool({ connections: 4 });
    const slices = Array.from({ length: 16 }, (_, i) => send(pool, { method: 'GET', path: `/visit/${i}` }));
    // Only the first connection is ready (the peer answers a connection's handshake at accept()): the other three
    // are opening, so it takes its share, 17 / 4 rounded up (h2-transport.ts's pick()). Before, it took all 16.
    const first = await peer.accept();
    await until(() => requestsOn(first) > 0);
    // Its share goes out in the turn it came ready: a PING answered after it proves that turn is over.
    const data = Buffer.alloc(8, 7);
    first.ping(data);
    await first.take((f) => f.type === FrameType.Ping && f.payload.equals(data));
    expect(requestsOn(first)).toBe(5);
    // Once all are open, what is left goes out on the others.
    const conns = [first];
    for (let i = 0; i < 3; i++) conns.push(await peer.accept());
    await until(() => conns.reduce((n, c) => n + requestsOn(c), 0) === 16);
    for (const c of conns) answerAll(c);
    for (const s of slices) expect((await s).status).toBe(200);
  });
});

describe('GOAWAY', () => {
  it('a connection that said GOAWAY with a long stream on it no longer counts as ready: a replacement opens', async () => {
    const { peer, pool } = await peerPool({ connections: 1 });
    const long = send(pool, { method: 'GET', path: '/long' });
    const a = await peer.accept();
    const r = await a.request();
    a.headers(r.id, [[':status', '200']]);
    a.data(r.id, 'part of a long answer');
    a.goaway(r.id, ErrorCode.NoError);
    await until(() => a.frames.some((f) => f.type === FrameType.Settings));
    const next = send(pool, { method: 'GET', path: '/next' });
    const b = await peer.accept();
    ok(b, (await b.request()).id);
    expect((await next).status).toBe(200);
    a.data(r.id, ' and its end', { endStream: true });
    expect((await long).status).toBe(200);
    // Graceful: no node lost.
    expect(lostAt(pool)).toBe(-Infinity);
  });

  it('a graceful GOAWAY and an idle close are no lost node; a close that cuts streams is', async () => {
    const { peer, pool } = await peerPool({ connections: 1 });
    const first = send(pool, { method: 'GET', path: '/1' });
    const a = await peer.accept();
    ok(a, (await a.request()).id);
    await first;
    a.goaway(1, ErrorCode.NoError);
    await a.whenClosed;
    const second = send(pool, { method: 'GET', path: '/2' });
    const b = await peer.accept();
    ok(b, (await b.request()).id);
    await second;
    b.socket.destroy();
    await b.whenClosed;
    await until(() => pool.stats.connections === 0);
    expect(lostAt(pool)).toBe(-Infinity);
    const cut = send(pool, { method: 'POST', path: '/3', body: Buffer.from('{}') });
    const c = await peer.accept();
    await c.request();
    c.socket.destroy();
    expect((await fails(cut)).maybeApplied).toBe(true);
    expect(lostAt(pool)).toBeGreaterThan(-Infinity);
  });

  it('after close(), a request a GOAWAY refused goes on a connection opened for it, and close() resolves once it is answered', async () => {
    const { peer, pool } = await peerPool({ connections: 1 });
    const pending = send(pool, { method: 'POST', path: '/refused', body: Buffer.from('{}') });
    const a = await peer.accept();
    await a.request();
    const closed = pool.close();
    a.goaway(0, ErrorCode.NoError);
    const b = await peer.accept();
    ok(b, (await b.request()).id);
    expect((await pending).status).toBe(200);
    await closed;
  });
});
