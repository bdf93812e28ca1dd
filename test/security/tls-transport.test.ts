import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { feed } from '../../src/feed/feeder.js';
import { visit } from '../../src/visit/visit.js';
import { bulkOperation } from '../../src/visit/bulk.js';
import { DocumentClient } from '../../src/http/document-client.js';
import type { TlsOptions, WireProtocol } from '../../src/http/transport.js';
import { makeTestPki, type TestPki } from '../support/certs.js';

/**
 * Every kind of request over https with mutual TLS, on each protocol ALPN can agree on: the same transport code as
 * over cleartext, so https is tested as much as http is where the socket's kind could matter (ALPN, the
 * handshake's failures, a TLS connection's reads).
 */
let pki: TestPki;
let server: DocumentServer;
let tls: TlsOptions;

beforeAll(async () => {
  pki = makeTestPki();
  server = await startDocumentServer({
    port: 0,
    tls: { cert: pki.pem.serverCert, key: pki.pem.serverKey, ca: pki.pem.ca, requireClientCert: true },
  });
  tls = { ca: pki.pem.ca, cert: pki.pem.clientCert, key: pki.pem.clientKey };
});
afterAll(async () => {
  await server?.close();
  pki?.cleanup();
});

describe.each(['h2', 'http1.1'] as const)('over https with mutual TLS, %s', (protocol: WireProtocol) => {
  const ns = `tls-${protocol.replace('.', '')}`;
  const ops = Array.from({ length: 300 }, (_, i) => ({ put: `id:${ns}:music::d${i}`, fields: { n: i } }));

  it('feeds, visits every document once, reads one, and updates them all by selection', async () => {
    const told: WireProtocol[] = [];
    const fed = await feed(ops, {
      endpoint: server.url,
      tls,
      protocol,
      onProtocol: (p) => told.push(p),
      failures: false,
      checkpoint: false,
    });
    expect(fed.ok).toBe(ops.length);
    expect(fed.protocol).toBe(protocol);

    const seen = new Map<string, number>();
    const visited = visit({ endpoint: server.url, tls, protocol, namespace: ns, documentType: 'music', slices: 4 });
    for await (const doc of visited) seen.set(doc.id, (seen.get(doc.id) ?? 0) + 1);
    expect((await visited.report).protocol).toBe(protocol);
    expect([...seen.keys()].sort()).toEqual(ops.map((o) => o.put).sort());
    expect([...seen.values()].every((n) => n === 1)).toBe(true);

    const client = new DocumentClient({ endpoint: server.url, tls, protocol });
    try {
      const got = await client.get(`id:${ns}:music::d7`);
      expect(got).toMatchObject({ status: 200, body: { fields: { n: 7 } } });
    } finally {
      await client.close();
    }

    const updated = await bulkOperation({
      endpoint: server.url,
      tls,
      protocol,
      kind: 'update-where',
      namespace: ns,
      documentType: 'music',
      selection: 'true',
      cluster: 'content',
      fields: { n: { assign: -1 } },
    });
    expect(updated).toMatchObject({ ok: true, documentCount: ops.length, protocol });
    expect(server.store.get(`id:${ns}:music::d299`)?.fields).toEqual({ n: -1 });
    expect(told).toEqual([protocol]);
  });

  it('without a client certificate: nothing answers (VB_UNREACHABLE, the handshake refused), nothing sent', async () => {
    const withoutCert = { ca: pki.pem.ca };
    await expect(
      feed(ops.slice(0, 3), { endpoint: server.url, tls: withoutCert, protocol, failures: false, checkpoint: false }),
    ).rejects.toMatchObject({ code: 'VB_UNREACHABLE' });
    const client = new DocumentClient({ endpoint: server.url, tls: withoutCert, protocol });
    try {
      await expect(client.get(`id:${ns}:music::d1`)).rejects.toMatchObject({
        code: 'VB_UNREACHABLE',
        message: expect.stringMatching(/TLS handshake|client certificate/),
      });
    } finally {
      await client.close();
    }
  });
});
