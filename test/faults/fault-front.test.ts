import http2 from 'node:http2';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { h2Codes, startFaultFront, type Cut } from '../support/fault-front.js';
import { literalField } from '../support/hpack-decoder.js';

/**
 * The fault front itself, seen from the wire by clients that are not the one under test (node:http2, and raw
 * sockets reading frames and bytes): it serves both protocols on one port, and each fault is on the wire what the
 * acceptance tests (cut-*.test.ts) take it to be.
 */

let server: DocumentServer;
const path = '/document/v1/ns/music/docid/w1';
let whole: Buffer;

beforeAll(async () => {
  server = await startDocumentServer({ port: 0 });
  server.store.seed([{ id: 'id:ns:music::w1', fields: { title: 'x'.repeat(40_000), n: 1 } }]);
  // The answer as the simulator gives it.
  whole = Buffer.from(await (await fetch(`${server.url}${path}`)).arrayBuffer());
});
afterAll(() => server?.close());

interface Frame {
  type: number;
  flags: number;
  stream: number;
  payload: Buffer;
}

/** A GET of `path` over a raw HTTP/2 connection: the frames that came back, and how the connection ended. */
async function rawH2(url: string): Promise<{ frames: Frame[]; ended: 'fin' | 'reset' }> {
  const { port } = new URL(url);
  const socket = connect(Number(port), '127.0.0.1');
  const block = Buffer.concat([
    Buffer.from([0x82, 0x86]),
    literalField(':path', path),
    literalField(':authority', 'front'),
  ]);
  const header = (length: number, type: number, flags: number, stream: number): Buffer => {
    const h = Buffer.alloc(9);
    h.writeUIntBE(length, 0, 3);
    h[3] = type;
    h[4] = flags;
    h.writeUInt32BE(stream, 5);
    return h;
  };
  socket.write(
    Buffer.concat([
      Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'),
      header(0, 4, 0, 0),
      header(block.length, 1, 0x5, 1),
      block,
    ]),
  );
  let buf = Buffer.alloc(0);
  const frames: Frame[] = [];
  socket.on('data', (chunk: Buffer) => {
    buf = Buffer.concat([buf, chunk]);
    while (buf.length >= 9 && buf.length >= 9 + buf.readUIntBE(0, 3)) {
      const length = buf.readUIntBE(0, 3);
      frames.push({
        type: buf[3],
        flags: buf[4],
        stream: buf.readUInt32BE(5) & 0x7fffffff,
        payload: buf.subarray(9, 9 + length),
      });
      buf = buf.subarray(9 + length);
      // The answer's end, or its fault on the stream: enough read.
      const last = frames[frames.length - 1];
      if (last.stream === 1 && (last.type === 3 || (last.flags & 1) !== 0)) socket.end();
    }
  });
  return new Promise((resolve) => {
    let ended: 'fin' | 'reset' = 'fin';
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ECONNRESET') ended = 'reset';
    });
    socket.on('close', () => resolve({ frames, ended }));
  });
}

/** A GET of `path` over a raw HTTP/1.1 connection: the bytes that came back, and how the connection ended. */
async function rawHttp1(url: string): Promise<{ head: string; body: Buffer; ended: 'fin' | 'reset' }> {
  const { port } = new URL(url);
  const socket = connect(Number(port), '127.0.0.1');
  socket.write(`GET ${path} HTTP/1.1\r\nhost: front\r\n\r\n`);
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  return new Promise((resolve) => {
    let ended: 'fin' | 'reset' = 'fin';
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ECONNRESET') ended = 'reset';
    });
    socket.on('close', () => {
      const all = Buffer.concat(chunks);
      const end = all.indexOf('\r\n\r\n');
      resolve({ head: all.toString('latin1', 0, end), body: all.subarray(end + 4), ended });
    });
  });
}

async function frontWith(cut: Cut | undefined) {
  return startFaultFront(server.url, { script: () => cut });
}

describe('the fault front', () => {
  it('serves HTTP/2 (prior knowledge, Huffman-coded headers from node:http2) and HTTP/1.1 on one port, whole when not told otherwise', async () => {
    const front = await frontWith(undefined);
    try {
      const session = http2.connect(front.url);
      const req = session.request({ ':path': path, 'user-agent': 'node:http2 with a Huffman-coded value' });
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      await new Promise((resolve) => req.on('end', resolve));
      session.close();
      expect(Buffer.concat(parts)).toEqual(whole);
      const h1 = await fetch(`${front.url}${path}`);
      expect(Buffer.from(await h1.arrayBuffer())).toEqual(whole);
      expect(front.connections).toEqual({ h2: 1, 'http1.1': 1 });
      expect(front.seen.get(`GET ${path}`)).toBe(2);
      expect(front.cuts).toEqual([]);
    } finally {
      await front.close();
    }
  });

  const h2Cases: Array<{ cut: Cut; after: (frames: Frame[], ended: string) => void }> = [
    {
      cut: { at: 20_000, how: 'rst', code: h2Codes.NO_ERROR },
      after: (f) => expect(f.at(-1)).toMatchObject({ type: 3, stream: 1, payload: Buffer.from([0, 0, 0, 0]) }),
    },
    {
      cut: { at: 20_000, how: 'rst', code: h2Codes.CANCEL, timing: 'apart' },
      after: (f) => expect(f.at(-1)).toMatchObject({ type: 3, stream: 1, payload: Buffer.from([0, 0, 0, 8]) }),
    },
    { cut: { at: 20_000, how: 'end' }, after: (f) => expect(f.at(-1)).toMatchObject({ type: 0, stream: 1, flags: 1 }) },
    {
      cut: { at: 7, how: 'goaway', code: h2Codes.PROTOCOL_ERROR, last: 'below' },
      after: (f, ended) => {
        expect(f.at(-1)).toMatchObject({ type: 7, stream: 0, payload: Buffer.from([0, 0, 0, 0, 0, 0, 0, 1]) });
        expect(ended).toBe('fin');
      },
    },
    {
      cut: { at: 7, how: 'goaway', code: h2Codes.NO_ERROR, last: 'at' },
      after: (f) => expect(f.at(-1)).toMatchObject({ type: 7, payload: Buffer.from([0, 0, 0, 1, 0, 0, 0, 0]) }),
    },
    { cut: { at: 0, how: 'fin' }, after: (f, ended) => expect([f.at(-1)?.type, ended]).toEqual([1, 'fin']) },
    // The front closes with SO_LINGER 0 (an RST on the wire); whether a reader that already had data sees a reset or an
    // end is the kernel's (on this Linux, an end), so only the end is checked, and no END_STREAM.
    { cut: { at: 30_000, how: 'tcp-reset' }, after: (_, ended) => expect(['reset', 'fin']).toContain(ended) },
  ];

  it.each(h2Cases)(
    'HTTP/2 $cut.how (code $cut.code, last $cut.last) after $cut.at bytes: the headers, that many bytes of DATA without END_STREAM, then the fault',
    async ({ cut, after }) => {
      const front = await frontWith(cut);
      try {
        const { frames, ended } = await rawH2(front.url);
        const onStream = frames.filter((f) => f.stream === 1);
        expect(onStream[0]).toMatchObject({ type: 1 });
        expect(onStream[0].flags & 1).toBe(0);
        const data = onStream.filter((f) => f.type === 0);
        // A reset may take bytes still unread with it; every other fault leaves exactly `at` bytes.
        const received = data.reduce((n, f) => n + f.payload.length, 0);
        if (cut.how === 'tcp-reset') expect(received).toBeLessThanOrEqual(cut.at);
        else expect(received).toBe(cut.at);
        expect(Buffer.concat(data.map((f) => f.payload))).toEqual(whole.subarray(0, received));
        if (cut.how !== 'end') expect(data.every((f) => (f.flags & 1) === 0)).toBe(true);
        after(frames, ended);
        expect(front.cuts).toMatchObject([{ protocol: 'h2', key: `GET ${path}`, cut, length: whole.length }]);
      } finally {
        await front.close();
      }
    },
  );

  const h1Cases: Array<{ name: string; cut: () => Cut; framing: () => RegExp; body: (b: Buffer) => void }> = [
    {
      name: 'Content-Length, FIN after 1000 bytes',
      cut: () => ({ at: 1000, how: 'fin', framing: 'content-length' }),
      framing: () => new RegExp(`content-length: ${whole.length}(\r|$)`),
      body: (b) => expect(b).toEqual(whole.subarray(0, 1000)),
    },
    {
      name: 'chunked, FIN before the final chunk',
      cut: () => ({ at: whole.length, how: 'fin', framing: 'chunked' }),
      framing: () => /transfer-encoding: chunked/,
      // Every chunk, but not the final one.
      body: (b) => {
        expect(b.toString('latin1')).not.toMatch(/\r\n0\r\n\r\n$/);
        expect(dechunk(b)).toEqual(whole);
      },
    },
    {
      name: 'chunked, FIN inside a chunk, apart',
      cut: () => ({ at: 5000, how: 'fin', framing: 'chunked', timing: 'apart' }),
      framing: () => /transfer-encoding: chunked/,
      body: (b) => expect(dechunk(b)).toEqual(whole.subarray(0, 5000)),
    },
    {
      name: 'Connection: close, FIN after 1000 bytes',
      cut: () => ({ at: 1000, how: 'fin', framing: 'close' }),
      framing: () => /connection: close/,
      body: (b) => expect(b).toEqual(whole.subarray(0, 1000)),
    },
  ];

  it.each(h1Cases)('HTTP/1.1 $name', async ({ cut, framing, body }) => {
    const front = await frontWith(cut());
    try {
      const got = await rawHttp1(front.url);
      expect(got.head).toMatch(/^HTTP\/1\.1 200 OK/);
      expect(got.head).not.toMatch(/content-length/i.test(framing().source) ? /transfer-encoding/ : /content-length/);
      expect(got.head).toMatch(framing());
      expect(got.ended).toBe('fin');
      body(got.body);
    } finally {
      await front.close();
    }
  });

  it('HTTP/1.1 TCP RST after part of the body: the connection ends with no more than that part', async () => {
    const front = await frontWith({ at: 30_000, how: 'tcp-reset', framing: 'content-length' });
    try {
      const got = await rawHttp1(front.url);
      // A reset or an end, as the kernel tells the reader (see the HTTP/2 case).
      expect(['reset', 'fin']).toContain(got.ended);
      expect(got.head).toMatch(new RegExp(`content-length: ${whole.length}(\r|$)`));
      expect(got.body.length).toBeLessThanOrEqual(30_000);
      expect(got.body).toEqual(whole.subarray(0, got.body.length));
    } finally {
      await front.close();
    }
  });
});

/** The data of a chunked body, as far as it goes (a cut chunk's part included). */
function dechunk(b: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  while (at < b.length) {
    const nl = b.indexOf('\r\n', at);
    if (nl < 0) break;
    const size = parseInt(b.toString('latin1', at, nl), 16);
    if (size === 0) break;
    parts.push(b.subarray(nl + 2, Math.min(b.length, nl + 2 + size)));
    at = nl + 2 + size + 2;
  }
  return Buffer.concat(parts);
}
