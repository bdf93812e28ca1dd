import { afterEach, describe, expect, it } from 'vitest';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createH2Server, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { feed } from '../../src/feed/feeder.js';
import { bodyLength, copyBody, type H2Request } from '../../src/http/h2/stream.js';
import { type BodyFrame, wholeBody } from '../../src/http/transport.js';
import { DocumentRequestEncoder, type EncodedBody } from '../../src/http/document-request.js';

/**
 * A feed's bodies are the fields as they lie in the input, framed with `{"fields":` and `}` by the transport
 * (HTTP/2 into its connection's buffer, HTTP/1.1 joined): what the server reads must be the whole body, byte
 * for byte, with a content-length that counts the frame, however flow control cuts it into DATA frames.
 */

const frame: BodyFrame = [Buffer.from('{"fields":'), Buffer.from('}')];

describe('copyBody', () => {
  it('copies any range of a framed body as the joined body has it', () => {
    const body = Buffer.from('{"a":"0123456789"}');
    const req = { body, bodyFrame: frame } as unknown as H2Request;
    const whole = wholeBody({ body, bodyFrame: frame })!;
    expect(whole.toString()).toBe('{"fields":{"a":"0123456789"}}');
    expect(bodyLength(req)).toBe(whole.length);
    for (let from = 0; from <= whole.length; from++)
      for (let to = from; to <= whole.length; to++) {
        const out = Buffer.alloc(to - from + 2, '#');
        copyBody(req, out, 1, from, to);
        expect(out.toString(), `${from}..${to}`).toBe(`#${whole.subarray(from, to).toString()}#`);
      }
  });

  it('copies an unframed body as it is', () => {
    const req = { body: Buffer.from('abcdef') } as unknown as H2Request;
    const out = Buffer.alloc(3);
    copyBody(req, out, 0, 2, 5);
    expect(out.toString()).toBe('cde');
    expect(bodyLength(req)).toBe(6);
    expect(bodyLength({ body: null, bodyFrame: frame } as unknown as H2Request)).toBe(0);
  });
});

describe('encodeFramed', () => {
  it('leaves the fields where they lie, framed, and gzips as encodeBody does', () => {
    const fields = Buffer.from('{"a":1}');
    const plain: EncodedBody = {};
    new DocumentRequestEncoder({ prefix: '' }).encodeFramed(fields, plain);
    expect(plain.body).toBe(fields);
    expect(wholeBody({ body: plain.body, bodyFrame: plain.bodyFrame })!.toString()).toBe('{"fields":{"a":1}}');
    const zipped: EncodedBody = { bodyFrame: frame };
    new DocumentRequestEncoder({ prefix: '', compress: true }).encodeFramed(
      Buffer.from(`"${'x'.repeat(600)}"`),
      zipped,
    );
    expect(zipped.bodyFrame).toBeUndefined();
    expect(zipped.headers).toContain('gzip');
    const none: EncodedBody = {};
    new DocumentRequestEncoder({ prefix: '' }).encodeFramed(undefined, none);
    expect(none.body).toBeNull();
  });
});

interface Seen {
  path: string;
  contentLength: string | undefined;
  body: string;
}

type AnyReq = IncomingMessage | Http2ServerRequest;
type AnyRes = ServerResponse | Http2ServerResponse;

/** A /document/v1 server that records each request's body; over h2c with a stream window of `window` bytes. */
async function recordingServer(
  protocol: 'h2' | 'http1.1',
  window: number,
): Promise<{ url: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const handle = (req: AnyReq, res: AnyRes): void => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({
        path: req.url ?? '',
        contentLength: req.headers['content-length'],
        body: Buffer.concat(chunks).toString(),
      });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"id":"x"}');
    });
  };
  const server =
    protocol === 'h2' ? createH2Server({ settings: { initialWindowSize: window } }, handle) : createServer(handle);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('a feed sends framed bodies whole', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });

  for (const [protocol, window] of [
    ['h2', 65_535],
    ['h2', 7],
    ['http1.1', 0],
  ] as const) {
    it(`over ${protocol}${protocol === 'h2' ? ` with a stream window of ${window} bytes` : ''}`, async () => {
      const server = await recordingServer(protocol, window);
      cleanups.push(server.close);
      const docs = Array.from({ length: 20 }, (_, i) => ({
        put: `id:ns:t::d${i}`,
        fields: { text: 'é'.repeat(i * 3), n: i },
      }));
      const r = await feed(docs, { endpoint: server.url, protocol, failures: false, compression: 'none' });
      expect(r.ok).toBe(docs.length);
      expect(server.seen).toHaveLength(docs.length);
      for (const d of docs) {
        const s = server.seen.find(
          (x) =>
            x.path.includes(`/docid/${d.put.split('::')[1]}?`) || x.path.endsWith(`/docid/${d.put.split('::')[1]}`),
        )!;
        expect(JSON.parse(s.body)).toEqual({ fields: d.fields });
        expect(s.contentLength).toBe(String(Buffer.byteLength(s.body)));
      }
      expect(r.requestBytes).toBe(server.seen.reduce((n, s) => n + Buffer.byteLength(s.body), 0));
    });
  }
});
