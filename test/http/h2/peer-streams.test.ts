import { describe, expect, it } from 'vitest';
import { Http2Transport as Http2Pool } from '../../../src/http/h2/h2-transport.js';
import { closeAfterEach, fails, h2Cause, peerPool, send } from '../../support/h2-peer-client.js';
import { ErrorCode, Flag, FrameType, Setting, type PeerConnection } from '../../support/h2-peer.js';

/**
 * One stream's life against a server that answers with whatever frames the test writes (test/support/h2-peer.ts):
 * what a malformed or cut answer becomes (an error to the request, never a short or wrong answer), and what the
 * client sends back (RFC 9113 §5.1, §8.1, §8.2, §8.3). Every case ends with a second request on the same
 * connection, where a stream error must leave the connection as it was.
 */

closeAfterEach();

/** The connection still carries requests: one more, answered. */
async function stillWorks(pool: Http2Pool, c: PeerConnection): Promise<void> {
  const next = send(pool, { method: 'GET', path: '/after' });
  const r = await c.request();
  expect(r.headers[':path']).toBe('/after');
  c.respond(r.id, 200, 'ok');
  expect((await next).body.toString()).toBe('ok');
}

describe('a reset answer', () => {
  it('fails a request whose stream the server resets with NO_ERROR after the headers and before END_STREAM: the body is cut, not whole', async () => {
    const { peer, pool } = await peerPool();
    const pending = send(pool, { method: 'GET', path: '/cut' });
    const c = await peer.accept();
    const r = await c.request();
    c.headers(r.id, [[':status', '200']]);
    c.data(r.id, 'half of it');
    c.rst(r.id, ErrorCode.NoError);
    const err = await fails(pending);
    expect(err.detail).toBe('H2_STREAM_RESET');
    expect(err.maybeApplied).toBe(true);
    await stillWorks(pool, c);
  });

  it('fails a request reset with NO_ERROR before any answer', async () => {
    const { peer, pool } = await peerPool();
    const pending = send(pool, { method: 'POST', path: '/none', body: Buffer.from('{}') });
    const c = await peer.accept();
    const r = await c.request();
    c.rst(r.id, ErrorCode.NoError);
    expect((await fails(pending)).detail).toBe('H2_STREAM_RESET');
    await stillWorks(pool, c);
  });
});

describe('an answer that comes before the request body is all sent (RFC 9113, 8.1)', () => {
  /** A POST whose body the stream's window (100 bytes) holds back, answered 200 before the rest of it is sent. */
  async function answeredEarly(): Promise<{ pool: Http2Pool; c: PeerConnection; id: number; body: Buffer }> {
    const { peer, pool } = await peerPool();
    const body = Buffer.alloc(1000, 0x61);
    const pending = send(pool, { method: 'POST', path: '/early', body });
    const c = await peer.accept([[Setting.InitialWindowSize, 100]]);
    const r = await c.request();
    await c.take((f) => f.type === FrameType.Data && f.streamId === r.id);
    c.respond(r.id, 200, 'done early');
    expect((await pending).body.toString()).toBe('done early');
    return { pool, c, id: r.id, body };
  }

  it('finishes sending the body rather than resetting the stream: a reset per such answer is what rapid-reset defences count', async () => {
    const { pool, c, id, body } = await answeredEarly();
    // The stream is half-closed (remote): it still takes one of the server's concurrent streams until the body is sent.
    expect(pool.stats.requests).toEqual([1]);
    c.windowUpdate(id, body.length);
    await c.take((f) => f.type === FrameType.Data && f.streamId === id && (f.flags & Flag.EndStream) !== 0);
    expect(c.body(id)).toEqual({ bytes: body.length, ended: true });
    expect(c.frames.some((f) => f.type === FrameType.RstStream)).toBe(false);
    await stillWorks(pool, c);
    expect(pool.stats.requests).toEqual([0]);
  });

  it('stops sending the body when the server asks with RST_STREAM(NO_ERROR), and the answer stands', async () => {
    const { pool, c, id } = await answeredEarly();
    c.rst(id, ErrorCode.NoError);
    await stillWorks(pool, c);
    expect(pool.stats.requests).toEqual([0]);
    // The window opens after the reset: nothing more of the body comes.
    c.windowUpdate(0, 10_000);
    await stillWorks(pool, c);
    expect(c.body(id).ended).toBe(false);
    expect(c.body(id).bytes).toBe(100);
  });

  it('answers more DATA on the stream, half-closed (remote), with RST_STREAM(STREAM_CLOSED) and sends no more of the body (RFC 9113, 5.1)', async () => {
    const { pool, c, id } = await answeredEarly();
    c.data(id, 'after the end');
    expect(await c.reset(id)).toBe(ErrorCode.StreamClosed);
    await stillWorks(pool, c);
    expect(pool.stats.requests).toEqual([0]);
  });

  it('lets pool.close() wait for the body to be sent, then close', async () => {
    const { pool, c, id, body } = await answeredEarly();
    const closed = pool.close();
    c.windowUpdate(id, body.length);
    await closed;
    // The GOAWAY comes after the rest of the body.
    expect(await c.whenGoaway()).toEqual({ lastStreamId: 0, code: ErrorCode.NoError });
    expect(c.body(id)).toEqual({ bytes: body.length, ended: true });
  });
});

describe('interim answers (1xx)', () => {
  it('reads a final answer after 100 and 103', async () => {
    const { peer, pool } = await peerPool();
    const pending = send(pool, { method: 'GET', path: '/interim' });
    const c = await peer.accept();
    const r = await c.request();
    c.headers(r.id, [[':status', '100']]);
    c.headers(r.id, [
      [':status', '103'],
      ['link', '</a>; rel=preload'],
    ]);
    c.respond(r.id, 200, 'final');
    const res = await pending;
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe('final');
  });

  it.each([
    ['a 1xx that ends the stream', [':status', '103'], true],
    ['101, which HTTP/2 does not have', [':status', '101'], false],
  ] as const)(
    'fails the request on %s, at once, with RST_STREAM(PROTOCOL_ERROR) (RFC 9113, 8.1 and 8.6)',
    async (_what, status, endStream) => {
      const { peer, pool } = await peerPool();
      const pending = send(pool, { method: 'GET', path: '/interim' });
      const c = await peer.accept();
      const r = await c.request();
      c.headers(r.id, [status], { endStream });
      const err = await fails(pending);
      expect(err.detail).toBe('H2_PROTOCOL_ERROR');
      expect(await c.reset(r.id)).toBe(ErrorCode.ProtocolError);
      await stillWorks(pool, c);
    },
  );
});

describe('malformed answers are stream errors (RFC 9113, 8.1.1, 8.2, 8.3)', () => {
  const cases: [string, [string, string][], string?][] = [
    [':status 2e2 (three ASCII digits only)', [[':status', '2e2']]],
    [':status 0xC8', [[':status', '0xC8']]],
    [':status +200', [[':status', '+200']]],
    [':status 20', [[':status', '20']]],
    [':status 0200', [[':status', '0200']]],
    ['no :status', [['content-type', 'text/plain']]],
    [
      'two :status',
      [
        [':status', '200'],
        [':status', '200'],
      ],
    ],
    [
      'a request pseudo-header in an answer',
      [
        [':status', '200'],
        [':path', '/'],
      ],
    ],
    [
      'an unknown pseudo-header',
      [
        [':status', '200'],
        [':x', 'y'],
      ],
    ],
    [
      'a pseudo-header after a regular field',
      [
        ['content-type', 'text/plain'],
        [':status', '200'],
      ],
    ],
    [
      'an upper-case name',
      [
        [':status', '200'],
        ['Content-Type', 'text/plain'],
      ],
    ],
    [
      'a name with a space',
      [
        [':status', '200'],
        ['x y', '1'],
      ],
    ],
    [
      'an empty name',
      [
        [':status', '200'],
        ['', '1'],
      ],
    ],
    [
      'connection',
      [
        [':status', '200'],
        ['connection', 'close'],
      ],
    ],
    [
      'transfer-encoding',
      [
        [':status', '200'],
        ['transfer-encoding', 'chunked'],
      ],
    ],
    [
      'keep-alive',
      [
        [':status', '200'],
        ['keep-alive', 'timeout=5'],
      ],
    ],
    [
      'upgrade',
      [
        [':status', '200'],
        ['upgrade', 'h2c'],
      ],
    ],
    [
      'proxy-connection',
      [
        [':status', '200'],
        ['proxy-connection', 'close'],
      ],
    ],
    [
      'a value with CR',
      [
        [':status', '200'],
        ['x-a', 'a\rb'],
      ],
    ],
    [
      'a value with LF',
      [
        [':status', '200'],
        ['x-a', 'a\nb'],
      ],
    ],
    [
      'a value with NUL',
      [
        [':status', '200'],
        ['x-a', 'a\0b'],
      ],
    ],
    [
      'a value with a leading space',
      [
        [':status', '200'],
        ['x-a', ' a'],
      ],
    ],
    [
      'a value with a trailing tab',
      [
        [':status', '200'],
        ['x-a', 'a\t'],
      ],
    ],
    [
      'a content-length that is no number',
      [
        [':status', '200'],
        ['content-length', '1x'],
      ],
      '1x',
    ],
    [
      'a content-length above the body',
      [
        [':status', '200'],
        ['content-length', '10'],
      ],
      'short',
    ],
    [
      'a content-length below the body',
      [
        [':status', '200'],
        ['content-length', '2'],
      ],
      'longer',
    ],
  ];

  it.each(cases)(
    'fails the request on %s, with RST_STREAM(PROTOCOL_ERROR); the connection goes on',
    async (_what, fields, body) => {
      const { peer, pool } = await peerPool();
      const pending = send(pool, { method: 'GET', path: '/malformed' });
      const c = await peer.accept();
      const r = await c.request();
      c.headers(r.id, fields, { endStream: body === undefined });
      if (body !== undefined) c.data(r.id, body, { endStream: true });
      const err = await fails(pending);
      expect(err.detail).toBe('H2_PROTOCOL_ERROR');
      expect(h2Cause(err).h2Code).toBe(ErrorCode.ProtocolError);
      expect(await c.reset(r.id)).toBe(ErrorCode.ProtocolError);
      await stillWorks(pool, c);
    },
  );

  it('fails the request on trailers with a pseudo-header, or without END_STREAM', async () => {
    const { peer, pool } = await peerPool();
    const a = send(pool, { method: 'GET', path: '/a' });
    const c = await peer.accept();
    const ra = await c.request();
    const b = send(pool, { method: 'GET', path: '/b' });
    const rb = await c.request();
    for (const r of [ra, rb]) {
      c.headers(r.id, [[':status', '200']]);
      c.data(r.id, 'body');
    }
    c.headers(ra.id, [[':status', '200']], { endStream: true });
    c.headers(rb.id, [['x-trailer', '1']], { endStream: false });
    expect((await fails(a)).detail).toBe('H2_PROTOCOL_ERROR');
    expect((await fails(b)).detail).toBe('H2_PROTOCOL_ERROR');
    await stillWorks(pool, c);
  });

  it('takes a content-length that matches, trailers, and a content-length with no body on 204 and 304', async () => {
    const { peer, pool } = await peerPool();
    const c0 = peer.accept();
    const answers = [
      { status: 200, fields: [['content-length', '5']] as [string, string][], body: 'hello' },
      { status: 204, fields: [['content-length', '7']] as [string, string][], body: undefined },
      { status: 304, fields: [['content-length', '7']] as [string, string][], body: undefined },
    ];
    const pending = answers.map((_, i) => send(pool, { method: 'GET', path: `/${i}` }));
    const c = await c0;
    for (const a of answers) {
      const r = await c.request();
      c.headers(r.id, [[':status', String(a.status)], ...a.fields], { endStream: a.body === undefined });
      if (a.body !== undefined) {
        c.data(r.id, a.body);
        c.headers(r.id, [['x-checksum', 'abc']], { endStream: true });
      }
    }
    const res = await Promise.all(pending);
    expect(res.map((x) => x.status)).toEqual([200, 204, 304]);
    expect(res[0].body.toString()).toBe('hello');
  });
});

describe('frames on streams the client did not open or has closed (RFC 9113, 5.1, 5.1.1)', () => {
  it.each([
    [
      'HEADERS on an even stream (the server cannot open one: push is off)',
      (c: PeerConnection) => c.headers(2, [[':status', '200']], { endStream: true }),
    ],
    ['DATA on an even stream', (c: PeerConnection) => c.data(2, 'x', { endStream: true })],
    ['HEADERS on an idle odd stream', (c: PeerConnection) => c.headers(99, [[':status', '200']], { endStream: true })],
    ['DATA on an idle stream', (c: PeerConnection) => c.data(99, 'x')],
    ['RST_STREAM on an idle stream', (c: PeerConnection) => c.rst(99, ErrorCode.Cancel)],
    ['WINDOW_UPDATE on an idle stream', (c: PeerConnection) => c.windowUpdate(99, 10)],
    [
      'PUSH_PROMISE',
      (c: PeerConnection) => c.frame(FrameType.PushPromise, Flag.EndHeaders, 1, Buffer.from([0, 0, 0, 2, 0x88])),
    ],
  ])('treats %s as a connection error PROTOCOL_ERROR: GOAWAY, the open request fails', async (_what, write) => {
    const { peer, pool } = await peerPool();
    const pending = send(pool, { method: 'GET', path: '/open' });
    const c = await peer.accept();
    await c.request();
    write(c);
    const err = await fails(pending);
    expect(err.detail).toBe('H2_PROTOCOL_ERROR');
    expect(await c.whenGoaway()).toEqual({ lastStreamId: 0, code: ErrorCode.ProtocolError });
  });

  it('ignores what comes on a stream it reset (its DATA still counts against the connection window), and PRIORITY anywhere', async () => {
    const { peer, pool } = await peerPool();
    let abort: (err: Error) => void = () => undefined;
    const aborted = new Promise<Error>((resolve) => {
      pool.dispatch(
        { method: 'GET', path: '/abort' },
        {
          onStart: (control) => (abort = (err) => control.abort(err)),
          onHeaders: () => undefined,
          onData: () => undefined,
          onComplete: () => undefined,
          onError: resolve,
        },
      );
    });
    const c = await peer.accept();
    const r = await c.request();
    abort(new Error('given up'));
    expect((await aborted).message).toBe('given up');
    expect(await c.reset(r.id)).toBe(ErrorCode.Cancel);
    c.respond(r.id, 200, 'too late');
    c.rst(r.id, ErrorCode.Cancel);
    c.frame(FrameType.Priority, 0, 99, Buffer.from([0, 0, 0, 0, 16]));
    await stillWorks(pool, c);
    expect(c.goawaySent()).toBeUndefined();
  });
});

describe("a handler's exception", () => {
  type Step = 'onStart' | 'onHeaders' | 'onData' | 'onComplete';

  /** Dispatches with a handler that throws in `step`; resolves with what its onError got. */
  function throwingRequest(pool: Http2Pool, step: Step): Promise<unknown> {
    return new Promise((resolve) => {
      const boom = new Error(`thrown in ${step}`);
      const maybeThrow = (at: Step): void => {
        if (at === step) throw boom;
      };
      pool.dispatch(
        { method: 'GET', path: `/throw-${step}` },
        {
          onStart: () => maybeThrow('onStart'),
          onHeaders: () => maybeThrow('onHeaders'),
          onData: () => maybeThrow('onData'),
          onComplete: () => maybeThrow('onComplete'),
          onError: (err: Error) => resolve(err),
        },
      );
    });
  }

  it.each(['onHeaders', 'onData'] as const)(
    'in %s fails that request with it and resets the stream (CANCEL); the connection goes on',
    async (step) => {
      const { peer, pool } = await peerPool();
      const failed = throwingRequest(pool, step);
      const c = await peer.accept();
      const r = await c.request();
      c.headers(r.id, [[':status', '200']]);
      c.data(r.id, 'x', { endStream: true });
      expect(((await failed) as Error).message).toBe(`thrown in ${step}`);
      expect(await c.reset(r.id)).toBe(ErrorCode.Cancel);
      await stillWorks(pool, c);
    },
  );

  it('in onComplete reaches its onError (as undici does), and the connection goes on', async () => {
    const { peer, pool } = await peerPool();
    const failed = throwingRequest(pool, 'onComplete');
    const c = await peer.accept();
    const r = await c.request();
    c.respond(r.id, 200, 'x');
    expect(((await failed) as Error).message).toBe('thrown in onComplete');
    await stillWorks(pool, c);
  });

  it('in onError as well goes no further than that request', async () => {
    const { peer, pool } = await peerPool();
    const c0 = peer.accept();
    let told = 0;
    pool.dispatch(
      { method: 'GET', path: '/twice' },
      {
        onHeaders: () => {
          throw new Error('first');
        },
        onData: () => undefined,
        onComplete: () => undefined,
        onError: () => {
          told++;
          throw new Error('second');
        },
      },
    );
    const c = await c0;
    const r = await c.request();
    c.respond(r.id, 200, 'x');
    expect(await c.reset(r.id)).toBe(ErrorCode.Cancel);
    await stillWorks(pool, c);
    expect(told).toBe(1);
  });

  it('in onStart fails that request before anything of it is sent', async () => {
    const { peer, pool } = await peerPool();
    const warm = send(pool, { method: 'GET', path: '/warm' });
    const c = await peer.accept();
    c.respond((await c.request()).id, 200, 'ok');
    await warm;
    expect(((await throwingRequest(pool, 'onStart')) as Error).message).toBe('thrown in onStart');
    await stillWorks(pool, c);
    expect(c.frames.filter((f) => f.type === FrameType.Headers)).toHaveLength(2);
  });
});
