import { createSecureServer, type Http2SecureServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { feed } from '../../src/feed/feeder.js';
import { type FeedOptions } from '../../src/feed/options.js';
import { makeTestPki, type TestPki } from '../support/certs.js';

/**
 * Over TLS the protocol is agreed by ALPN: `auto` offers h2 and http/1.1 and takes what the server chooses,
 * `h2` offers h2 alone, `http1.1` offers nothing else. A purpose-built server that speaks both records which one
 * each request came in.
 */
describe('feed over HTTP/2 with TLS (ALPN)', () => {
  let pki: TestPki;
  let server: Http2SecureServer;
  let url: string;
  const versions: string[] = [];
  const paths: string[] = [];

  beforeAll(async () => {
    pki = makeTestPki();
    server = createSecureServer({ cert: pki.pem.serverCert, key: pki.pem.serverKey, allowHTTP1: true }, (req, res) => {
      versions.push(req.httpVersion);
      req.resume();
      req.on('end', () => {
        paths.push(req.url);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(`{"pathId":${JSON.stringify(req.url)},"id":"id:ns:music::x"}`);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    pki?.cleanup();
  });

  const ops = Array.from({ length: 60 }, (_, i) => ({ put: `id:ns:music::h2-${i}`, fields: { n: i } }));

  it('speaks HTTP/2 by default and when asked, HTTP/1.1 when asked, feeding everything either way', async () => {
    for (const [protocol, version] of [
      [undefined, '2.0'],
      ['h2', '2.0'],
      ['http1.1', '1.1'],
    ] as const) {
      versions.length = 0;
      paths.length = 0;
      const told: string[] = [];
      const s = await feed(ops, {
        endpoint: url,
        tls: { ca: pki.pem.ca },
        ...(protocol !== undefined && { protocol }),
        onProtocol: (p) => told.push(p),
        failures: false,
        checkpoint: false,
      });
      expect(s.ok).toBe(ops.length);
      expect(new Set(versions)).toEqual(new Set([version]));
      expect(s.protocol).toBe(version === '2.0' ? 'h2' : 'http1.1');
      expect(told).toEqual([s.protocol]);
      expect(new Set(paths)).toEqual(new Set(ops.map((o) => `/document/v1/ns/music/docid/${o.put.split('::')[1]}`)));
    }
    // `http2: true`, deprecated at 0.1.0 and removed, is refused with what replaces it, not silently ignored.
    const removed = { endpoint: url, failures: false, checkpoint: false, http2: true } as FeedOptions;
    await expect(feed(ops, removed)).rejects.toMatchObject({
      code: 'VB_USAGE',
      option: 'http2',
      message: expect.stringContaining("protocol: 'h2'"),
    });
  });

  it('auto takes HTTP/1.1 from a TLS server that offers only that; h2 refuses it with VB_PROTOCOL', async () => {
    const { createServer } = await import('node:https');
    const h1 = createServer({ cert: pki.pem.serverCert, key: pki.pem.serverKey }, (req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(`{"pathId":${JSON.stringify(req.url)}}`);
      });
    });
    await new Promise<void>((resolve) => h1.listen(0, '127.0.0.1', resolve));
    const h1url = `https://127.0.0.1:${(h1.address() as AddressInfo).port}`;
    try {
      const s = await feed(ops.slice(0, 5), {
        endpoint: h1url,
        tls: { ca: pki.pem.ca },
        failures: false,
        checkpoint: false,
      });
      expect(s.ok).toBe(5);
      expect(s.protocol).toBe('http1.1');
      await expect(
        feed(ops.slice(0, 5), {
          endpoint: h1url,
          tls: { ca: pki.pem.ca },
          protocol: 'h2',
          failures: false,
          checkpoint: false,
        }),
      ).rejects.toMatchObject({
        code: 'VB_PROTOCOL',
        message: expect.stringMatching(
          /does not speak HTTP\/2 \((the server chose (no protocol|http\/1.1) instead of h2|the server agreed on no protocol when offered h2) \(ALPN\)\); use --protocol auto or --protocol http1.1/,
        ),
      });
    } finally {
      h1.closeAllConnections();
      await new Promise<void>((resolve) => h1.close(() => resolve()));
    }
  });
});
