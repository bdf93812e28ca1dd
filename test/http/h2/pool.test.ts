import http2, { type Http2Server, type ServerHttp2Stream, type IncomingHttpHeaders } from 'node:http2';
import { createServer as createHttp1Server, type Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { Http2Transport } from '../../../src/http/h2/h2-transport.js';
import { type RequestControl } from '../../../src/http/transport.js';
import { createTransport } from '../../../src/http/create-transport.js';
import { send, exchange } from '../../../src/http/exchange.js';
import { toTransportError } from '../../../src/http/transport-error.js';

/**
 * The HTTP/2 client against node's own HTTP/2 server (nghttp2): another implementation, so what one gets wrong
 * the other refuses. Each test starts the server it needs, over loopback.
 */
type OnStream = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, session: http2.ServerHttp2Session) => void;

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) await o.close();
});

async function h2Server(
  onStream: OnStream,
  settings: http2.Settings = {},
  options: http2.ServerOptions = {},
): Promise<{ url: string; server: Http2Server; sessions: Set<http2.ServerHttp2Session> }> {
  const server = http2.createServer({ ...options, settings });
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (s) => {
    sessions.add(s);
    s.on('close', () => sessions.delete(s));
  });
  server.on('stream', (stream, headers) => {
    // Streams the test resets end in an error event on this side too.
    stream.on('error', () => undefined);
    onStream(stream, headers, stream.session as http2.ServerHttp2Session);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  open.push({
    close: () =>
      new Promise<void>((r) => {
        for (const s of sessions) s.destroy();
        server.close(() => r());
      }),
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, sessions };
}

function track<T extends { close(): Promise<void> | void }>(p: T): T {
  open.push({ close: async () => void (await p.close()) });
  return p;
}

function readAll(stream: ServerHttp2Stream): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
  });
}

/** Answers 200 with what it received: headers and the body's length and hash. */
const echo: OnStream = (stream, headers) => {
  void readAll(stream).then((body) => {
    if (stream.destroyed) return;
    stream.respond({ ':status': 200, 'content-type': 'application/json', 'x-echo-date': new Date(0).toUTCString() });
    stream.end(JSON.stringify({ headers, length: body.length, sha: createHash('sha1').update(body).digest('hex') }));
  });
};

const sha = (b: Buffer): string => createHash('sha1').update(b).digest('hex');

describe('HTTP/2 pool against node:http2', () => {
  it('sends method, path, headers and body as given, and reads the answer (Huffman and indexed headers included)', async () => {
    const { url } = await h2Server(echo);
    const pool = track(new Http2Transport(url));
    const headers = ['content-type', 'application/json', 'Authorization', 'Bearer secret', 'connection', 'keep-alive'];
    for (const method of ['POST', 'PUT', 'DELETE', 'GET', 'POST'] as const) {
      const body = method === 'POST' || method === 'PUT' ? Buffer.from(`{"fields":{"m":"${method}"}}`) : null;
      const res = await send(pool, {
        method,
        path: `/document/v1/ns/t/docid/a%2Fb?timeout=5s&m=${method}`,
        headers,
        body,
      });
      expect(res.status).toBe(200);
      const got = JSON.parse(res.body.toString()) as { headers: Record<string, string>; length: number; sha: string };
      expect(got.headers[':method']).toBe(method);
      expect(got.headers[':path']).toBe(`/document/v1/ns/t/docid/a%2Fb?timeout=5s&m=${method}`);
      expect(got.headers[':authority']).toBe(new URL(url).host);
      expect(got.headers.authorization).toBe('Bearer secret');
      // Header names go in lower case, and HTTP/1.1's connection headers not at all (HTTP/2 forbids them).
      expect(got.headers.connection).toBeUndefined();
      expect(got.length).toBe(body?.length ?? 0);
      if (body !== null) {
        expect(got.headers['content-length']).toBe(String(body.length));
        expect(got.sha).toBe(sha(body));
      }
      // nghttp2 Huffman-codes this value and indexes the content type: both read back as sent.
      const names = res.headers.filter((_, i) => i % 2 === 0);
      expect(names).toContain('x-echo-date');
      expect(res.headers[names.indexOf('x-echo-date') * 2 + 1]).toBe('Thu, 01 Jan 1970 00:00:00 GMT');
    }
  });

  it('runs many requests at once on few connections, within the server SETTINGS_MAX_CONCURRENT_STREAMS', async () => {
    let now = 0;
    let most = 0;
    const { url } = await h2Server(
      (stream) => {
        now++;
        most = Math.max(most, now);
        void readAll(stream).then(() =>
          setTimeout(() => {
            now--;
            stream.respond({ ':status': 200 });
            stream.end('{}');
          }, 5),
        );
      },
      { maxConcurrentStreams: 7 },
    );
    const pool = track(new Http2Transport(url, { connections: 2, maxStreams: 256 }));
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => send(pool, { method: 'POST', path: `/x/${i}`, body: Buffer.from('{}') })),
    );
    expect(results.every((r) => r.status === 200)).toBe(true);
    // Two connections of 7 streams each at most; more than one at once, so the streams were concurrent.
    expect(most).toBeLessThanOrEqual(14);
    expect(most).toBeGreaterThan(7);
    expect(pool.stats.connections).toBe(2);
  });

  it('sends a body of megabytes within a small flow-control window, and reads one through its own', async () => {
    const big = Buffer.alloc(3 * 1024 * 1024 + 17);
    for (let i = 0; i < big.length; i++) big[i] = (i * 7919) & 0xff;
    const { url } = await h2Server(
      (stream, headers) => {
        if (headers[':method'] === 'GET') {
          stream.respond({ ':status': 200 });
          stream.end(big);
          return;
        }
        echo(stream, headers, stream.session as http2.ServerHttp2Session);
      },
      { initialWindowSize: 1000, maxFrameSize: 16384 },
    );
    const pool = track(new Http2Transport(url, { streamWindow: 65_535, connectionWindow: 100_000 }));
    const up = await send(pool, { method: 'POST', path: '/up', body: big });
    expect(JSON.parse(up.body.toString())).toMatchObject({ length: big.length, sha: sha(big) });
    const down = await send(pool, { method: 'GET', path: '/down' });
    expect(down.body.length).toBe(big.length);
    expect(sha(down.body)).toBe(sha(big));
  });

  it('reads padded frames and header blocks continued over CONTINUATION frames, and answers PING', async () => {
    const long = 'v'.repeat(40_000);
    let pinged: Promise<boolean> | undefined;
    const { url } = await h2Server(
      (stream, _headers, session) => {
        pinged = new Promise((resolve) => session.ping((err) => resolve(err === null)));
        void readAll(stream).then(() => {
          stream.respond({ ':status': 200, 'x-long': long });
          stream.end('{"ok":true}');
        });
      },
      {},
      { paddingStrategy: http2.constants.PADDING_STRATEGY_MAX, maxHeaderListPairs: 100 },
    );
    const pool = track(new Http2Transport(url));
    const res = await send(pool, { method: 'POST', path: '/c', body: Buffer.from('{}') });
    expect(res.body.toString()).toBe('{"ok":true}');
    expect(res.headers[res.headers.indexOf('x-long') + 1]).toBe(long);
    expect(await pinged).toBe(true);
  });

  it('streams a body through exchange(): paused and resumed as a slow reader takes it', async () => {
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const { url } = await h2Server((stream) => {
      stream.respond({ ':status': 200, 'content-type': 'application/x-ndjson' });
      for (let i = 0; i < 40; i++) stream.write(chunk);
      stream.end();
    });
    const pool = track(new Http2Transport(url, { streamWindow: 65_535 }));
    const res = await exchange(pool, { method: 'GET', path: '/visit' });
    expect(res.status).toBe(200);
    expect(res.headers[res.headers.indexOf('content-type') + 1]).toBe('application/x-ndjson');
    let total = 0;
    for await (const c of res.chunks()) {
      total += c.length;
      // A slow reader: the stream's window closes meanwhile and opens again as it reads.
      await new Promise((r) => setImmediate(r));
    }
    expect(total).toBe(40 * chunk.length);
  });

  it("holds what paused readers have not read within the connection's window, whatever the streams' windows; reading on lets the rest come", async () => {
    const size = 4 * 1024 * 1024;
    const { url } = await h2Server((stream) => {
      stream.respond({ ':status': 200 });
      stream.end(Buffer.alloc(size, 0x62));
    });
    const connectionWindow = 256 * 1024;
    const pool = track(new Http2Transport(url, { streamWindow: size, connectionWindow }));
    // Two readers that take the first chunk and then nothing more until told.
    const readers = [0, 1].map(() => {
      const r = { received: 0, resume: () => {}, paused: true, done: Promise.resolve() };
      r.done = new Promise<void>((resolve, reject) => {
        let control: RequestControl;
        pool.dispatch(
          { method: 'GET', path: '/big' },
          {
            onStart: (c) => {
              control = c;
              r.resume = () => c.resume();
            },
            onHeaders: () => undefined,
            onData: (chunk: Buffer) => {
              r.received += chunk.length;
              if (r.paused) control.pause();
            },
            onComplete: () => resolve(),
            onError: reject,
          },
        );
      });
      return r;
    });
    // Until the server has sent all it may: nothing more for a while.
    let last = -1;
    for (let still = 0; still < 5; ) {
      await new Promise((r) => setTimeout(r, 20));
      const now = readers[0].received + readers[1].received;
      still = now === last ? still + 1 : 0;
      last = now;
    }
    expect(last).toBeGreaterThan(0);
    expect(last).toBeLessThanOrEqual(connectionWindow);
    for (const r of readers) {
      r.paused = false;
      r.resume();
    }
    await Promise.all(readers.map((r) => r.done));
    expect(readers.map((r) => r.received)).toEqual([size, size]);
  });

  it('sends again, on another connection, what a GOAWAY says was not processed', async () => {
    const seen: string[] = [];
    let held: ServerHttp2Stream[] = [];
    const { url } = await h2Server((stream, headers, session) => {
      seen.push(headers[':path']!);
      void readAll(stream).then(() => {
        if (stream.destroyed) return;
        const answer = (s: ServerHttp2Stream) => {
          s.respond({ ':status': 200 });
          s.end('{}');
        };
        if (seen.length > 5) {
          answer(stream);
          return;
        }
        held.push(stream);
        if (held.length === 5) {
          // Processed only the first: the other four are above the last stream id and go again.
          session.goaway(http2.constants.NGHTTP2_NO_ERROR, held[0].id);
          answer(held[0]);
          held = [];
        }
      });
    });
    const pool = track(new Http2Transport(url, { connections: 1 }));
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) => send(pool, { method: 'POST', path: `/p${i}`, body: Buffer.from('{}') })),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    // Each path once more than its answers: the four refused ones were sent twice.
    expect(seen.length).toBe(9);
  });

  it('sends again a stream refused with REFUSED_STREAM; another reset fails the request as maybe applied', async () => {
    const attempts = new Map<string, number>();
    const { url } = await h2Server((stream, headers) => {
      const path = headers[':path']!;
      const n = (attempts.get(path) ?? 0) + 1;
      attempts.set(path, n);
      if (path === '/refused' && n === 1) {
        stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
        return;
      }
      if (path === '/reset') {
        stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
        return;
      }
      echo(stream, headers, stream.session as http2.ServerHttp2Session);
    });
    const pool = track(new Http2Transport(url));
    expect((await send(pool, { method: 'POST', path: '/refused', body: Buffer.from('{}') })).status).toBe(200);
    expect(attempts.get('/refused')).toBe(2);
    const err = await send(pool, { method: 'POST', path: '/reset', body: Buffer.from('{}') }).catch((e: unknown) => e);
    const te = toTransportError(err);
    expect(te.failure).toBe('reset');
    expect(te.maybeApplied).toBe(true);
    expect(attempts.get('/reset')).toBe(1);
  });

  it('fails the requests of a connection that dies, and opens a new one for the next', async () => {
    let first = true;
    const { url } = await h2Server((stream, headers, session) => {
      if (first) {
        first = false;
        session.destroy();
        return;
      }
      echo(stream, headers, session);
    });
    const pool = track(new Http2Transport(url));
    const err = toTransportError(
      await send(pool, { method: 'POST', path: '/a', body: Buffer.from('{}') }).catch((e: unknown) => e),
    );
    expect(err.failure).toBe('closed');
    expect(err.maybeApplied).toBe(true);
    expect((await send(pool, { method: 'POST', path: '/b', body: Buffer.from('{}') })).status).toBe(200);
  });

  it('gives up on an answer that does not come within the headers timeout, and resets the stream', async () => {
    let resetSeen = false;
    const { url } = await h2Server((stream) => {
      stream.on('close', () => (resetSeen = stream.rstCode === http2.constants.NGHTTP2_CANCEL));
    });
    const pool = track(new Http2Transport(url, { timeoutMs: 100 }));
    const err = toTransportError(await send(pool, { method: 'GET', path: '/silent' }).catch((e: unknown) => e));
    expect(err.code).toBe('VB_TIMEOUT');
    expect(err.failure).toBe('headers-timeout');
    await new Promise((r) => setTimeout(r, 50));
    expect(resetSeen).toBe(true);
  });

  it('aborts a request through its signal', async () => {
    const { url } = await h2Server(() => undefined);
    const pool = track(new Http2Transport(url));
    const controller = new AbortController();
    const pending = send(pool, { method: 'GET', path: '/never', signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    await expect(pending).rejects.toMatchObject({ code: 'VB_ABORTED', failure: 'aborted' });
    // The connection goes on.
    expect(pool.stats.requests).toEqual([0]);
  });
});

describe('protocol: auto', () => {
  async function http1Server(): Promise<{ url: string; server: Server; versions: string[] }> {
    const versions: string[] = [];
    const server = createHttp1Server((req, res) => {
      versions.push(req.httpVersion);
      res.setHeader('content-type', 'application/json');
      res.end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    open.push({ close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))) });
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, versions };
  }

  it('speaks HTTP/2 to a server that does, and says so once', async () => {
    const { url } = await h2Server(echo);
    const told: string[] = [];
    const pool = track(createTransport({ origin: url, onProtocol: (p) => told.push(p) }));
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => send(pool, { method: 'POST', path: `/${i}`, body: Buffer.from('{}') })),
    );
    expect(told).toEqual(['h2']);
    expect(pool.protocol).toBe('h2');
  });

  it('falls back to HTTP/1.1 for a server that answers the preface with HTTP/1.1, and for one that hangs up on it', async () => {
    const { url, versions } = await http1Server();
    const told: string[] = [];
    const pool = track(createTransport({ origin: url, onProtocol: (p) => told.push(p) }));
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => send(pool, { method: 'GET', path: `/${i}` })),
    );
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(told).toEqual(['http1.1']);
    expect(new Set(versions)).toEqual(new Set(['1.1']));

    // A server that closes any connection whose first bytes it does not like, without a word, then serves HTTP/1.1.
    const h1 = await http1Server();
    const target = new URL(h1.url);
    const picky = net.createServer((socket) => {
      socket.once('data', (first) => {
        if (first.toString('latin1').startsWith('PRI ')) socket.destroy();
        else {
          const upstream = net.connect(Number(target.port), target.hostname, () => upstream.write(first));
          socket.pipe(upstream).pipe(socket);
          upstream.on('error', () => socket.destroy());
        }
      });
      socket.on('error', () => undefined);
    });
    await new Promise<void>((r) => picky.listen(0, '127.0.0.1', r));
    open.push({ close: () => new Promise<void>((r) => picky.close(() => r())) });
    const pool2 = track(createTransport({ origin: `http://127.0.0.1:${(picky.address() as AddressInfo).port}` }));
    expect((await send(pool2, { method: 'GET', path: '/' })).status).toBe(200);
    expect(pool2.protocol).toBe('http1.1');
  });

  it('with protocol h2, a server that does not speak it fails the request as not-h2, never sent', async () => {
    const { url, versions } = await http1Server();
    const pool = track(createTransport({ origin: url, protocol: 'h2' }));
    const err = toTransportError(
      await send(pool, { method: 'POST', path: '/', body: Buffer.from('{}') }).catch((e: unknown) => e),
    );
    expect(err.failure).toBe('not-h2');
    expect(err.maybeApplied).toBe(false);
    expect(err.message).toMatch(/answered the HTTP\/2 preface with 'HTTP\/1.1 400/);
    expect(versions).toEqual([]);
  });

  it('fails the waiting requests with what the connection died of when nothing listens, and tries again later', async () => {
    const probe = net.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const pool = track(createTransport({ origin: `http://127.0.0.1:${port}` }));
    const errors = await Promise.all(
      [1, 2, 3].map(() => send(pool, { method: 'GET', path: '/' }).catch((e: unknown) => toTransportError(e))),
    );
    for (const e of errors) {
      expect((e as ReturnType<typeof toTransportError>).maybeApplied).toBe(false);
      expect((e as ReturnType<typeof toTransportError>).unreachable).toMatch(/connection refused/);
    }
    expect(pool.protocol).toBeUndefined();
    // Something listens there now: the next request asks again.
    const later = http2.createServer();
    later.on('stream', (s) => (s.respond({ ':status': 200 }), s.end('{}')));
    await new Promise<void>((r) => later.listen(port, '127.0.0.1', r));
    open.push({ close: () => new Promise<void>((r) => later.close(() => r())) });
    expect((await send(pool, { method: 'GET', path: '/' })).status).toBe(200);
    expect(pool.protocol).toBe('h2');
  });
});
