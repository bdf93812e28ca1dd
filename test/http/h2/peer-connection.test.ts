import { describe, expect, it } from 'vitest';
import { closeAfterEach, fails, h2Cause, peerPool, send } from '../../support/h2-peer-client.js';
import { type TransportError } from '../../../src/http/transport-error.js';
import type { RequestControl } from '../../../src/http/transport.js';
import type { H2Error } from '../../../src/http/h2/errors.js';
import {
  ErrorCode,
  Flag,
  FrameType,
  Setting,
  hpackInt,
  literalBlock,
  type PeerConnection,
} from '../../support/h2-peer.js';
import { until } from '../../support/until.js';

/**
 * The connection against a server that writes whatever frames the test says (test/support/h2-peer.ts): frame
 * sizes (RFC 9113 §4.2, §6), flow control in both directions (§5.2, §6.9), the header list bound against
 * CONTINUATION floods (§6.5.2, §10.5.1), floods of frames that need an answer (§10.5), the SETTINGS
 * acknowledgement (§6.5.3), and writes to a server that stops reading. A connection error is a GOAWAY naming
 * the last stream the client processed from the server (0: it takes none, push is off; §6.8), then the close.
 */

closeAfterEach();

const u32 = (...v: number[]): Buffer => {
  const b = Buffer.alloc(4 * v.length);
  v.forEach((x, i) => b.writeUInt32BE(x >>> 0, 4 * i));
  return b;
};

describe('frame sizes (RFC 9113, 4.2 and 6)', () => {
  const cases: [string, (c: PeerConnection, id: number) => void, number][] = [
    [
      'RST_STREAM of 3 bytes',
      (c, id) => c.frame(FrameType.RstStream, 0, id, Buffer.alloc(3)),
      ErrorCode.FrameSizeError,
    ],
    [
      'RST_STREAM of 5 bytes',
      (c, id) => c.frame(FrameType.RstStream, 0, id, Buffer.alloc(5)),
      ErrorCode.FrameSizeError,
    ],
    [
      'WINDOW_UPDATE of 3 bytes on the connection',
      (c) => c.frame(FrameType.WindowUpdate, 0, 0, Buffer.alloc(3)),
      ErrorCode.FrameSizeError,
    ],
    [
      'WINDOW_UPDATE of 5 bytes on a stream',
      (c, id) => c.frame(FrameType.WindowUpdate, 0, id, Buffer.from([0, 0, 0, 1, 0])),
      ErrorCode.FrameSizeError,
    ],
    ['PING of 7 bytes', (c) => c.frame(FrameType.Ping, 0, 0, Buffer.alloc(7)), ErrorCode.FrameSizeError],
    ['PING of 9 bytes', (c) => c.frame(FrameType.Ping, 0, 0, Buffer.alloc(9)), ErrorCode.FrameSizeError],
    ['SETTINGS of 5 bytes', (c) => c.frame(FrameType.Settings, 0, 0, Buffer.alloc(5)), ErrorCode.FrameSizeError],
    [
      'a SETTINGS ACK with a payload',
      (c) => c.frame(FrameType.Settings, Flag.Ack, 0, Buffer.alloc(6)),
      ErrorCode.FrameSizeError,
    ],
    ['GOAWAY of 7 bytes', (c) => c.frame(FrameType.Goaway, 0, 0, Buffer.alloc(7)), ErrorCode.FrameSizeError],
    [
      'a padded DATA frame with no room for its pad length',
      (c, id) => c.frame(FrameType.Data, Flag.Padded, id, Buffer.alloc(0)),
      ErrorCode.FrameSizeError,
    ],
    [
      'a padded HEADERS frame with no room for its pad length',
      (c, id) => c.frame(FrameType.Headers, Flag.Padded | Flag.EndHeaders, id, Buffer.alloc(0)),
      ErrorCode.FrameSizeError,
    ],
    [
      'HEADERS with PRIORITY and no room for it',
      (c, id) => c.frame(FrameType.Headers, Flag.Priority | Flag.EndHeaders, id, Buffer.alloc(4)),
      ErrorCode.FrameSizeError,
    ],
    ['a frame above SETTINGS_MAX_FRAME_SIZE', (c, id) => c.data(id, Buffer.alloc(16_385)), ErrorCode.FrameSizeError],
    [
      'DATA padding as long as the frame',
      (c, id) => c.frame(FrameType.Data, Flag.Padded, id, Buffer.from([3, 0, 0])),
      ErrorCode.ProtocolError,
    ],
    [
      'HEADERS padding longer than what is left',
      (c, id) => c.frame(FrameType.Headers, Flag.Padded | Flag.EndHeaders, id, Buffer.from([5, 0x88, 0, 0])),
      ErrorCode.ProtocolError,
    ],
    ['RST_STREAM on stream 0', (c) => c.rst(0, ErrorCode.Cancel), ErrorCode.ProtocolError],
    ['PING on a stream', (c, id) => c.frame(FrameType.Ping, 0, id, Buffer.alloc(8)), ErrorCode.ProtocolError],
    ['SETTINGS on a stream', (c, id) => c.frame(FrameType.Settings, 0, id, Buffer.alloc(0)), ErrorCode.ProtocolError],
    ['GOAWAY on a stream', (c, id) => c.frame(FrameType.Goaway, 0, id, Buffer.alloc(8)), ErrorCode.ProtocolError],
    ['PRIORITY on stream 0', (c) => c.frame(FrameType.Priority, 0, 0, Buffer.alloc(5)), ErrorCode.ProtocolError],
    [
      'CONTINUATION with no HEADERS before it',
      (c, id) => c.continuation(id, Buffer.from([0x88]), true),
      ErrorCode.ProtocolError,
    ],
    [
      'another frame inside a header block',
      (c, id) => (c.headers(id, [[':status', '200']], { endHeaders: false }), c.ping()),
      ErrorCode.ProtocolError,
    ],
    ['SETTINGS_ENABLE_PUSH 1 from a server', (c) => c.settings([[Setting.EnablePush, 1]]), ErrorCode.ProtocolError],
    [
      'SETTINGS_MAX_FRAME_SIZE below 16384',
      (c) => c.settings([[Setting.MaxFrameSize, 16_383]]),
      ErrorCode.ProtocolError,
    ],
    [
      'SETTINGS_INITIAL_WINDOW_SIZE above 2^31-1',
      (c) => c.settings([[Setting.InitialWindowSize, 2 ** 31]]),
      ErrorCode.FlowControlError,
    ],
  ];

  it.each(cases)(
    '%s: a connection error with the right code, GOAWAY naming stream 0, the open request failed',
    async (_what, write, code) => {
      const { peer, pool } = await peerPool();
      const pending = send(pool, { method: 'GET', path: '/open' });
      const c = await peer.accept();
      const r = await c.request();
      write(c, r.id);
      const err = await fails(pending);
      expect(err.detail).toBe('H2_PROTOCOL_ERROR');
      expect(h2Cause(err).h2Code).toBe(code);
      expect(await c.whenGoaway()).toEqual({ lastStreamId: 0, code });
      await c.whenClosed;
      // The next request goes on a new connection.
      const next = send(pool, { method: 'GET', path: '/next' });
      const c2 = await peer.accept();
      c2.respond((await c2.request()).id, 200, 'ok');
      expect((await next).status).toBe(200);
    },
  );

  it('resets a stream whose PRIORITY frame is not 5 bytes (FRAME_SIZE_ERROR), and the connection goes on', async () => {
    const { peer, pool } = await peerPool();
    const pending = send(pool, { method: 'GET', path: '/p' });
    const c = await peer.accept();
    const r = await c.request();
    c.frame(FrameType.Priority, 0, r.id, Buffer.alloc(4));
    expect(await c.reset(r.id)).toBe(ErrorCode.FrameSizeError);
    expect(h2Cause(await fails(pending)).h2Code).toBe(ErrorCode.FrameSizeError);
    const next = send(pool, { method: 'GET', path: '/q' });
    c.respond((await c.request()).id, 200, 'ok');
    expect((await next).status).toBe(200);
  });
});

describe('receive windows (RFC 9113, 6.9)', () => {
  it("resets a stream whose DATA goes past the stream's window (FLOW_CONTROL_ERROR)", async () => {
    const { peer, pool } = await peerPool({ streamWindow: 1000 });
    const pending = send(pool, { method: 'GET', path: '/big' });
    const c = await peer.accept();
    const r = await c.request();
    c.headers(r.id, [[':status', '200']]);
    c.data(r.id, Buffer.alloc(1001), { endStream: true });
    const err = await fails(pending);
    expect(h2Cause(err).h2Code).toBe(ErrorCode.FlowControlError);
    expect(await c.reset(r.id)).toBe(ErrorCode.FlowControlError);
    const next = send(pool, { method: 'GET', path: '/q' });
    c.respond((await c.request()).id, 200, 'ok');
    expect((await next).status).toBe(200);
  });

  it("closes the connection when DATA goes past the connection's window: what a paused reader holds is bounded by it", async () => {
    const { peer, pool } = await peerPool({ streamWindow: 1 << 20, connectionWindow: 65_535 });
    let received = 0;
    const failed = new Promise<Error>((resolve) => {
      let control: RequestControl;
      pool.dispatch(
        { method: 'GET', path: '/paused' },
        {
          onStart: (c) => (control = c),
          // The reader takes nothing: it holds all that comes until it resumes, which it never does.
          onHeaders: () => control.pause(),
          onData: (chunk: Buffer) => {
            received += chunk.length;
          },
          onComplete: () => {},
          onError: resolve,
        },
      );
    });
    const c = await peer.accept();
    const r = await c.request();
    c.headers(r.id, [[':status', '200']]);
    for (let i = 0; i < 8; i++) c.data(r.id, Buffer.alloc(16_384));
    const err = (await failed) as TransportError;
    expect([err.failure, err.detail]).toEqual(['protocol', 'H2_PROTOCOL_ERROR']);
    expect((err.cause as H2Error).h2Code).toBe(ErrorCode.FlowControlError);
    expect(await c.whenGoaway()).toEqual({ lastStreamId: 0, code: ErrorCode.FlowControlError });
    expect(received).toBeLessThanOrEqual(65_535);
  });

  it('takes DATA up to the window, padding counted, and opens it again as it is read', async () => {
    const { peer, pool } = await peerPool({ streamWindow: 1000, connectionWindow: 65_535 });
    const pending = send(pool, { method: 'GET', path: '/exact' });
    const c = await peer.accept();
    const r = await c.request();
    c.headers(r.id, [[':status', '200']]);
    // 1000 bytes of the window: 900 of data, a pad length byte and 99 of padding.
    c.data(r.id, Buffer.alloc(900, 0x61), { pad: 99 });
    const update = await c.take((f) => f.type === FrameType.WindowUpdate && f.streamId === r.id);
    expect(update.payload.readUInt32BE(0)).toBe(1000);
    c.data(r.id, Buffer.alloc(1000, 0x62), { endStream: true });
    expect((await pending).body.length).toBe(1900);
  });
});

describe('send windows (RFC 9113, 6.9.1 and 6.9.2)', () => {
  it('resets a stream whose window a WINDOW_UPDATE takes above 2^31-1 (FLOW_CONTROL_ERROR)', async () => {
    const { peer, pool } = await peerPool();
    const pending = send(pool, { method: 'GET', path: '/w' });
    const c = await peer.accept();
    const r = await c.request();
    c.windowUpdate(r.id, 2 ** 31 - 1);
    expect(await c.reset(r.id)).toBe(ErrorCode.FlowControlError);
    expect(h2Cause(await fails(pending)).h2Code).toBe(ErrorCode.FlowControlError);
    expect(c.goawaySent()).toBeUndefined();
  });

  it('closes the connection when a WINDOW_UPDATE takes its window above 2^31-1', async () => {
    const { peer, pool } = await peerPool();
    const pending = send(pool, { method: 'GET', path: '/w' });
    const c = await peer.accept();
    await c.request();
    c.windowUpdate(0, 2 ** 31 - 1);
    expect(h2Cause(await fails(pending)).h2Code).toBe(ErrorCode.FlowControlError);
    expect(await c.whenGoaway()).toEqual({ lastStreamId: 0, code: ErrorCode.FlowControlError });
  });

  it('closes the connection when a new SETTINGS_INITIAL_WINDOW_SIZE takes a stream window above 2^31-1', async () => {
    const { peer, pool } = await peerPool();
    const pending = send(pool, { method: 'GET', path: '/w' });
    const c = await peer.accept();
    const r = await c.request();
    // The stream's window is exactly 2^31-1, allowed; one more byte of initial window is not.
    c.windowUpdate(r.id, 2 ** 31 - 1 - 65_535);
    c.settings([[Setting.InitialWindowSize, 65_536]]);
    expect(h2Cause(await fails(pending)).h2Code).toBe(ErrorCode.FlowControlError);
    expect(await c.whenGoaway()).toEqual({ lastStreamId: 0, code: ErrorCode.FlowControlError });
  });

  it('treats a WINDOW_UPDATE of 0 on a stream as a stream error and on the connection as a connection error (PROTOCOL_ERROR)', async () => {
    const { peer, pool } = await peerPool();
    const a = send(pool, { method: 'GET', path: '/a' });
    const c = await peer.accept();
    const ra = await c.request();
    c.windowUpdate(ra.id, 0);
    expect(await c.reset(ra.id)).toBe(ErrorCode.ProtocolError);
    expect(h2Cause(await fails(a)).h2Code).toBe(ErrorCode.ProtocolError);
    const b = send(pool, { method: 'GET', path: '/b' });
    await c.request();
    c.windowUpdate(0, 0);
    expect(h2Cause(await fails(b)).h2Code).toBe(ErrorCode.ProtocolError);
    expect(await c.whenGoaway()).toEqual({ lastStreamId: 0, code: ErrorCode.ProtocolError });
  });
});

describe('header lists (RFC 9113, 6.5.2 and 10.5.1)', () => {
  it('advertises SETTINGS_MAX_HEADER_LIST_SIZE of 64 KiB', async () => {
    const { peer, pool } = await peerPool();
    void send(pool, { method: 'GET', path: '/' }).catch(() => undefined);
    const c = await peer.next();
    const settings = await c.handshake();
    const pairs = new Map<number, number>();
    for (let at = 0; at < settings.payload.length; at += 6)
      pairs.set(settings.payload.readUInt16BE(at), settings.payload.readUInt32BE(at + 2));
    expect(pairs.get(Setting.MaxHeaderListSize)).toBe(65_536);
    expect(pairs.get(Setting.EnablePush)).toBe(0);
  });

  it('closes a connection flooded with CONTINUATION frames (ENHANCE_YOUR_CALM) and sends the next request on a new one', async () => {
    const { peer, pool } = await peerPool({ connections: 2 });
    const pending = send(pool, { method: 'GET', path: '/flood' });
    const c = await peer.accept();
    const r = await c.request();
    c.headers(r.id, [[':status', '200']], { endHeaders: false });
    const chunk = literalBlock([['x-flood', 'y'.repeat(16_000)]]);
    // Until the client gives up on it, however long that takes: a client without a bound never does.
    let sent = 0;
    while (!c.closed && c.goawaySent() === undefined && sent < 4096) {
      c.continuation(r.id, chunk, false);
      sent++;
      await new Promise((resolve) => setImmediate(resolve));
    }
    const err = await fails(pending);
    expect(err.detail).toBe('H2_HEADERS_TOO_LARGE');
    expect(await c.whenGoaway()).toEqual({ lastStreamId: 0, code: ErrorCode.EnhanceYourCalm });
    // Well below the 4096 frames (64 MiB) the flood had ready.
    expect(sent).toBeLessThan(64);
    const next = send(pool, { method: 'GET', path: '/next' });
    const c2 = await peer.accept();
    c2.respond((await c2.request()).id, 200, 'ok');
    expect((await next).status).toBe(200);
  });

  it('bounds the decoded list too: a short block of references to a large table entry (ENHANCE_YOUR_CALM)', async () => {
    const { peer, pool } = await peerPool();
    const pending = send(pool, { method: 'GET', path: '/expand' });
    const c = await peer.accept();
    const r = await c.request();
    // One literal entered into the table (4 KiB with its overhead), then 20 one-byte references to it: 80 KiB.
    const name = Buffer.from('x-big');
    const value = Buffer.alloc(4000, 0x7a);
    const insert = Buffer.concat([
      Buffer.from([0x40]),
      hpackInt(name.length, 7),
      name,
      hpackInt(value.length, 7),
      value,
    ]);
    const refs = Buffer.alloc(20, 0x80 | 62);
    c.headers(r.id, Buffer.concat([Buffer.from([0x88]), insert, refs]), { endStream: true });
    expect((await fails(pending)).detail).toBe('H2_HEADERS_TOO_LARGE');
    expect(await c.whenGoaway()).toEqual({ lastStreamId: 0, code: ErrorCode.EnhanceYourCalm });
  });

  it('takes a header list just within the bound, over CONTINUATION frames', async () => {
    const { peer, pool } = await peerPool();
    const pending = send(pool, { method: 'GET', path: '/long' });
    const c = await peer.accept();
    const r = await c.request();
    const long = 'v'.repeat(60_000);
    const block = literalBlock([
      [':status', '200'],
      ['x-long', long],
    ]);
    c.headers(r.id, block.subarray(0, 16_000), { endHeaders: false });
    for (let at = 16_000; at < block.length; at += 16_000)
      c.continuation(r.id, block.subarray(at, at + 16_000), at + 16_000 >= block.length);
    c.data(r.id, 'ok', { endStream: true });
    const res = await pending;
    expect(res.headers).toEqual(['x-long', long]);
  });

  it('sends no new request to a connection in the middle of a header block', async () => {
    const { peer, pool } = await peerPool({ connections: 2 });
    const first = send(pool, { method: 'GET', path: '/first' });
    const c = await peer.accept();
    const r = await c.request();
    const block = literalBlock([[':status', '200']]);
    c.headers(r.id, block.subarray(0, 1), { endHeaders: false });
    // Nothing but CONTINUATION may come on this connection until the block ends: a request sent on it would wait
    // for as long as the server takes, and forever on a server that never ends the block. (The block's start has
    // arrived once the connection says it has no room.)
    const sessions = (pool as unknown as { conns: { room: number }[] }).conns;
    await until(() => sessions[0].room === 0);
    const second = send(pool, { method: 'GET', path: '/second' });
    const c2 = await peer.accept();
    const r2 = await c2.request();
    expect(r2.headers[':path']).toBe('/second');
    c2.respond(r2.id, 200, 'two');
    c.continuation(r.id, block.subarray(1), true);
    c.data(r.id, 'one', { endStream: true });
    expect((await first).body.toString()).toBe('one');
    expect((await second).body.toString()).toBe('two');
    expect(c.frames.filter((f) => f.type === FrameType.Headers)).toHaveLength(1);
  });
});

describe('floods and silence', () => {
  it('closes a connection stuck in a header block its server never ends, once the stream is past its headers timeout', async () => {
    const { peer, pool } = await peerPool({ connections: 2, timeoutMs: 200 });
    const pending = send(pool, { method: 'GET', path: '/stuck' });
    const c = await peer.accept();
    const r = await c.request();
    c.headers(r.id, literalBlock([[':status', '200']]).subarray(0, 1), { endHeaders: false });
    expect((await fails(pending)).detail).toBe('H2_HEADERS_TIMEOUT');
    // Nothing else could ever arrive on it: it goes, and the next request takes a new one.
    expect(await c.whenGoaway()).toEqual({ lastStreamId: 0, code: ErrorCode.NoError });
    const next = send(pool, { method: 'GET', path: '/next' });
    const c2 = await peer.accept();
    c2.respond((await c2.request()).id, 200, 'ok');
    expect((await next).status).toBe(200);
  });

  it('closes a connection whose server sends PINGs and never reads the answers (ENHANCE_YOUR_CALM)', async () => {
    const { peer, pool } = await peerPool();
    const pending = send(pool, { method: 'GET', path: '/ping' });
    const c = await peer.accept();
    await c.request();
    c.stopReading();
    const pings = Buffer.concat(
      Array.from({ length: 1000 }, () => Buffer.from([0, 0, 8, FrameType.Ping, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8])),
    );
    // 17 KB of PINGs a turn until the client closes: without a bound, its answers would pile up for good.
    for (let i = 0; i < 20_000 && !c.closed; i++) {
      if (!c.write(pings)) await new Promise((resolve) => c.socket.once('drain', resolve).once('close', resolve));
    }
    const err = await fails(pending);
    expect(err.detail).toBe('H2_FLOOD');
    expect(h2Cause(err).h2Code).toBe(ErrorCode.EnhanceYourCalm);
  });

  it('closes a connection whose server never acknowledges its SETTINGS (SETTINGS_TIMEOUT)', async () => {
    const { peer, pool } = await peerPool({ connectTimeoutMs: 300 });
    const pending = send(pool, { method: 'GET', path: '/ack' });
    const c = await peer.next();
    await c.take((f) => f.type === FrameType.Settings);
    c.settings();
    const err = await fails(pending);
    expect(err.detail).toBe('H2_SETTINGS_TIMEOUT');
    expect(await c.whenGoaway()).toEqual({ lastStreamId: 0, code: ErrorCode.SettingsTimeout });
  });

  it('answers PING, and takes a SETTINGS ACK as the end of the wait', async () => {
    const { peer, pool } = await peerPool({ connectTimeoutMs: 300 });
    const pending = send(pool, { method: 'GET', path: '/ok' });
    const c = await peer.accept();
    const r = await c.request();
    c.ping(Buffer.from('12345678'));
    const pong = await c.take((f) => f.type === FrameType.Ping);
    expect(pong.flags & Flag.Ack).toBe(Flag.Ack);
    expect(pong.payload.toString()).toBe('12345678');
    c.respond(r.id, 200, 'ok');
    expect((await pending).status).toBe(200);
    // The SETTINGS timer is gone with the ACK: a later request on the same connection is not cut by it.
    await new Promise((resolve) => setTimeout(resolve, 400));
    const later = send(pool, { method: 'GET', path: '/later' });
    c.respond((await c.request()).id, 200, 'ok');
    expect((await later).status).toBe(200);
    expect(peer.connections).toHaveLength(1);
  });
});

describe('a server that stops reading', () => {
  it('stops sending on a connection whose socket is full: new requests wait in the pool until it drains', async () => {
    const { peer, pool } = await peerPool({ maxStreams: 1000 });
    const body = Buffer.alloc(256 * 1024, 0x61);
    const c0 = peer.next();
    const warm = send(pool, { method: 'GET', path: '/warm' });
    const c = await c0;
    await c.handshake([
      [Setting.InitialWindowSize, 2 ** 31 - 1],
      [Setting.MaxConcurrentStreams, 1000],
    ]);
    c.windowUpdate(0, 2 ** 31 - 1 - 65_535);
    c.respond((await c.request()).id, 200, 'ok');
    await warm;
    c.stopReading();
    const all: Promise<unknown>[] = [];
    // 128 requests of 256 KiB in 16 turns: 32 MiB, far more than the socket buffers hold.
    for (let turn = 0; turn < 16; turn++) {
      for (let i = 0; i < 8; i++) all.push(send(pool, { method: 'POST', path: `/b${turn}-${i}`, body }));
      await new Promise((resolve) => setImmediate(resolve));
    }
    await new Promise((resolve) => setImmediate(resolve));
    // Most wait in the pool, not in memory behind the socket.
    expect(pool.stats.waiting).toBeGreaterThan(64);
    c.resumeReading();
    let answered = 0;
    while (answered < all.length) {
      const r = await c.request();
      c.respond(r.id, 200, 'ok');
      answered++;
    }
    const results = (await Promise.all(all)) as { status: number }[];
    expect(results.every((x) => x.status === 200)).toBe(true);
  });
});

describe('GOAWAY from the server', () => {
  it('sends again what is above its last stream id; the rest is answered on the draining connection', async () => {
    const { peer, pool } = await peerPool({ connections: 2 });
    const c0 = peer.accept();
    const a = send(pool, { method: 'GET', path: '/a' });
    const b = send(pool, { method: 'GET', path: '/b' });
    const c = await c0;
    const ra = await c.request();
    const rb = await c.request();
    c.goaway(ra.id, ErrorCode.NoError);
    const c2 = await peer.accept();
    const again = await c2.request();
    expect(again.headers[':path']).toBe('/b');
    c2.respond(again.id, 200, 'b');
    c.respond(ra.id, 200, 'a');
    expect((await a).body.toString()).toBe('a');
    expect((await b).body.toString()).toBe('b');
    expect(rb.id).toBeGreaterThan(ra.id);
    // The first connection, done, goes: GOAWAY of its own, then its FIN.
    expect(await c.whenGoaway()).toEqual({ lastStreamId: 0, code: ErrorCode.NoError });
  });

  it('fails no request twice: a GOAWAY with an error code and a stream id below everything', async () => {
    const { peer, pool } = await peerPool();
    const a = send(pool, { method: 'POST', path: '/a', body: Buffer.from('{}') });
    const c = await peer.accept();
    await c.request();
    c.frame(FrameType.Goaway, 0, 0, u32(0, ErrorCode.InternalError));
    c.end();
    // Refused (never processed): sent again, on a new connection.
    const c2 = await peer.accept();
    c2.respond((await c2.request()).id, 200, 'ok');
    expect((await a).status).toBe(200);
  });
});
