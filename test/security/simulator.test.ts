import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { startConfigServer, type ConfigServer } from '../../src/simulator/config-server/config-server.js';
import { makeTestPki, type TestPki } from '../support/certs.js';
import { h1Request, h2Request, undiciRequest } from './helpers.js';

let pki: TestPki;
const servers: Array<{ close(): Promise<void> }> = [];

beforeAll(() => {
  pki = makeTestPki();
});
afterAll(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  pki.cleanup();
});

async function documents(options: Parameters<typeof startDocumentServer>[0]): Promise<DocumentServer> {
  const server = await startDocumentServer({ port: 0, ...options });
  servers.push(server);
  return server;
}

const put = (local: string) => ({
  method: 'POST' as const,
  path: `/document/v1/ns/music/docid/${local}`,
  body: JSON.stringify({ fields: { title: local } }),
});

describe('HTTPS document interface', () => {
  it('answers over HTTP/1.1 and over HTTP/2, as ALPN agrees, on one port', async () => {
    const server = await documents({ tls: { cert: pki.pem.serverCert, key: pki.pem.serverKey } });
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const viaH1 = await h1Request(server.url, { ...put('one'), ca: pki.pem.ca });
    expect(viaH1).toMatchObject({ status: 200, protocol: 'http/1.1' });
    const viaH2 = await h2Request(server.url, { ...put('two'), ca: pki.pem.ca });
    expect(viaH2).toMatchObject({ status: 200, protocol: 'h2' });
    // Each protocol sees what the other wrote.
    expect(
      (await h2Request(server.url, { path: '/document/v1/ns/music/docid/one', ca: pki.pem.ca })).json.fields,
    ).toEqual({ title: 'one' });
    expect(
      (await h1Request(server.url, { path: '/document/v1/ns/music/docid/two', ca: pki.pem.ca })).json.fields,
    ).toEqual({ title: 'two' });
    // undici, with and without HTTP/2.
    for (const allowH2 of [false, true]) {
      const r = await undiciRequest(`${server.url}/document/v1/ns/music/docid/one`, { ca: pki.pem.ca, allowH2 });
      expect(r.status).toBe(200);
    }
  });

  it('is not trusted by a client that does not trust the CA', async () => {
    const server = await documents({ tls: { cert: pki.pem.serverCert, key: pki.pem.serverKey } });
    await expect(
      undiciRequest(`${server.url}/document/v1/ns/music/docid/one`, { ca: pki.pem.otherCa }),
    ).rejects.toThrow();
  });
});

describe('mutual TLS', () => {
  it('refuses clients without a certificate or with one from another CA, and serves the right one', async () => {
    const server = await documents({
      tls: { cert: pki.pem.serverCert, key: pki.pem.serverKey, ca: pki.pem.ca, requireClientCert: true },
    });
    const url = `${server.url}/document/v1/ns/music/docid/m`;
    await expect(undiciRequest(url, { ca: pki.pem.ca })).rejects.toThrow();
    await expect(
      undiciRequest(url, { ca: pki.pem.ca, cert: pki.pem.otherClientCert, key: pki.pem.otherClientKey }),
    ).rejects.toThrow();
    await expect(h2Request(server.url, { path: '/document/v1/ns/music/docid/m', ca: pki.pem.ca })).rejects.toThrow();
    expect(
      (await undiciRequest(url, { ca: pki.pem.ca, cert: pki.pem.clientCert, key: pki.pem.clientKey })).status,
    ).toBe(404);
    expect(
      (await h2Request(server.url, { ...put('m'), ca: pki.pem.ca, cert: pki.pem.clientCert, key: pki.pem.clientKey }))
        .status,
    ).toBe(200);
  });

  it('with a CA but no demand, lets anonymous clients in and answers 403 to a foreign certificate', async () => {
    const server = await documents({ tls: { cert: pki.pem.serverCert, key: pki.pem.serverKey, ca: pki.pem.ca } });
    const url = `${server.url}/document/v1/ns/music/docid/x`;
    expect((await undiciRequest(url, { ca: pki.pem.ca })).status).toBe(404);
    expect(
      (await undiciRequest(url, { ca: pki.pem.ca, cert: pki.pem.clientCert, key: pki.pem.clientKey })).status,
    ).toBe(404);
    const foreign = await undiciRequest(url, {
      ca: pki.pem.ca,
      cert: pki.pem.otherClientCert,
      key: pki.pem.otherClientKey,
    });
    expect(foreign.status).toBe(403);
    expect(foreign.json).toMatchObject({
      pathId: '/document/v1/ns/music/docid/x',
      message: expect.stringContaining('certificate'),
    });
  });
});

describe('bearer token, document interface', () => {
  const token = 'sim-token-3f9a1c';

  it('answers 401 without a token, 403 with a wrong one, and serves the right one (cleartext and TLS)', async () => {
    for (const tls of [undefined, { cert: pki.pem.serverCert, key: pki.pem.serverKey }]) {
      const server = await documents({ token, tls });
      const url = `${server.url}/document/v1/ns/music/docid/t`;
      const body = JSON.stringify({ fields: { a: 1 } });
      const missing = await undiciRequest(url, { method: 'POST', body, ca: pki.pem.ca });
      expect(missing.status).toBe(401);
      expect(missing.json).toEqual({
        pathId: '/document/v1/ns/music/docid/t',
        message: expect.stringContaining('Bearer'),
      });
      const wrong = await undiciRequest(url, {
        method: 'POST',
        body,
        ca: pki.pem.ca,
        headers: { authorization: 'Bearer not-the-token' },
      });
      expect(wrong.status).toBe(403);
      expect(JSON.stringify(wrong.json)).not.toContain('not-the-token');
      expect(
        (await undiciRequest(url, { method: 'POST', body, ca: pki.pem.ca, headers: { authorization: 'Basic abc' } }))
          .status,
      ).toBe(401);
      expect(server.store.size()).toBe(0);
      expect(
        (
          await undiciRequest(url, {
            method: 'POST',
            body,
            ca: pki.pem.ca,
            headers: { authorization: `Bearer ${token}` },
          })
        ).status,
      ).toBe(200);
      expect(server.store.size()).toBe(1);
      // The admin paths stay open to tests.
      expect((await undiciRequest(`${server.url}/_sim/documents`, { ca: pki.pem.ca })).json).toMatchObject({
        documents: 1,
      });
    }
  });

  it('keeps an HTTP/1.1 connection usable after refusing a request with a body', async () => {
    const server = await documents({ token });
    const body = JSON.stringify({ fields: { x: 'y'.repeat(50_000) } });
    const refused = await h1KeepAlive(server.url, [
      { method: 'POST', path: '/document/v1/ns/music/docid/k', body },
      { method: 'POST', path: '/document/v1/ns/music/docid/k', body, headers: { authorization: `Bearer ${token}` } },
    ]);
    expect(refused.map((r) => r.status)).toEqual([401, 200]);
    expect(refused[0].socket).toBe(refused[1].socket);
    // Cleartext HTTP/2 (prior knowledge) is guarded the same way.
    expect((await h2Request(server.url, { path: '/document/v1/ns/music/docid/k' })).status).toBe(401);
    expect(
      (
        await h2Request(server.url, {
          path: '/document/v1/ns/music/docid/k',
          headers: { authorization: `Bearer ${token}` },
        })
      ).status,
    ).toBe(200);
  });
});

describe('bearer token, config server', () => {
  it('answers 401 UNAUTHORIZED and 403 FORBIDDEN in its error shape, and serves the right token', async () => {
    const token = 'cfg-token-77b2';
    for (const tls of [undefined, { cert: pki.pem.serverCert, key: pki.pem.serverKey }]) {
      const server: ConfigServer = await startConfigServer({ port: 0, token, tls });
      servers.push(server);
      const url = `${server.url}/application/v2/tenant/default/application/`;
      expect(server.url.startsWith(tls ? 'https://' : 'http://')).toBe(true);
      const missing = await undiciRequest(url, { ca: pki.pem.ca });
      expect(missing).toMatchObject({
        status: 401,
        json: { 'error-code': 'UNAUTHORIZED', message: expect.any(String) },
      });
      const wrong = await undiciRequest(url, { ca: pki.pem.ca, headers: { authorization: 'Bearer nope-nope' } });
      expect(wrong).toMatchObject({ status: 403, json: { 'error-code': 'FORBIDDEN' } });
      expect(await undiciRequest(url, { ca: pki.pem.ca, headers: { authorization: `Bearer ${token}` } })).toMatchObject(
        { status: 200, json: [] },
      );
    }
  });

  it('demands client certificates when asked to', async () => {
    const server = await startConfigServer({
      port: 0,
      tls: { cert: pki.pem.serverCert, key: pki.pem.serverKey, ca: pki.pem.ca, requireClientCert: true },
    });
    servers.push(server);
    const url = `${server.url}/state/v1/health`;
    await expect(undiciRequest(url, { ca: pki.pem.ca })).rejects.toThrow();
    await expect(
      undiciRequest(url, { ca: pki.pem.ca, cert: pki.pem.otherClientCert, key: pki.pem.otherClientKey }),
    ).rejects.toThrow();
    expect(
      (await undiciRequest(url, { ca: pki.pem.ca, cert: pki.pem.clientCert, key: pki.pem.clientKey })).status,
    ).toBe(200);
  });
});

/** Requests one after the other on one kept-alive HTTP/1.1 connection; `socket` tells which connection answered. */
async function h1KeepAlive(
  url: string,
  requests: Array<{ method: string; path: string; body?: string; headers?: Record<string, string> }>,
): Promise<Array<{ status: number; socket: number }>> {
  const { Agent, request } = await import('node:http');
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const sockets = new Map<unknown, number>();
  const u = new URL(url);
  const out: Array<{ status: number; socket: number }> = [];
  try {
    for (const r of requests) {
      out.push(
        await new Promise((resolve, reject) => {
          const req = request(
            {
              host: u.hostname,
              port: u.port,
              method: r.method,
              path: r.path,
              headers: { 'content-type': 'application/json', ...r.headers },
              agent,
            },
            (res) => {
              if (!sockets.has(res.socket)) sockets.set(res.socket, sockets.size);
              const socket = sockets.get(res.socket)!;
              res.resume();
              res.on('end', () => resolve({ status: res.statusCode ?? 0, socket }));
            },
          );
          req.setTimeout(10_000, () => req.destroy(new Error('timed out')));
          req.on('error', reject);
          req.end(r.body);
        }),
      );
    }
  } finally {
    agent.destroy();
  }
  return out;
}
