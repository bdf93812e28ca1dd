import { createSecureServer, type Http2SecureServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { feed } from '../../src/feed/index.js';
import { makeTestPki, type TestPki } from '../support/certs.js';

/**
 * `http2: true` offers HTTP/2 by ALPN to an https endpoint: the feeder's own write-batching connector must not
 * drop the offer, or every request would quietly stay HTTP/1.1. A purpose-built server that speaks both
 * records which one each request came in.
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

  it('speaks HTTP/2 when asked, and HTTP/1.1 by default, feeding everything either way', async () => {
    versions.length = 0;
    paths.length = 0;
    const h2 = await feed(ops, { endpoint: url, tls: { ca: pki.pem.ca }, http2: true, failures: false, checkpoint: false });
    expect(h2['feeder.ok.count']).toBe(ops.length);
    expect(new Set(versions)).toEqual(new Set(['2.0']));
    expect(new Set(paths)).toEqual(new Set(ops.map((o) => `/document/v1/ns/music/docid/${o.put.split('::')[1]}`)));

    versions.length = 0;
    const h1 = await feed(ops, { endpoint: url, tls: { ca: pki.pem.ca }, failures: false, checkpoint: false });
    expect(h1['feeder.ok.count']).toBe(ops.length);
    expect(new Set(versions)).toEqual(new Set(['1.1']));
  });
});
