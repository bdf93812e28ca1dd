import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { makeTestPki, type TestPki } from '../support/certs.js';
import { runCli, tempDir } from './harness.js';

/**
 * The visit, bulk and single-document commands over HTTPS with mutual TLS and a bearer token, taken from the
 * shared security flags and environment variables as `feed` takes them.
 */
describe('visit and document commands over TLS with a token', () => {
  const token = 'vb-test-token-7f3a9c';
  let pki: TestPki;
  let server: DocumentServer;
  let dir: string;
  let cleanup: () => void;

  beforeAll(async () => {
    pki = makeTestPki();
    server = await startDocumentServer({
      port: 0,
      tls: { cert: pki.pem.serverCert, key: pki.pem.serverKey, ca: pki.pem.ca, requireClientCert: true },
      token,
    });
    server.store.seed(
      Array.from({ length: 60 }, (_, i) => ({
        id: `id:ns:music::t${i}`,
        fields: { title: `t${i}`, year: 2000 + (i % 3) },
      })),
    );
    ({ dir, cleanup } = tempDir('vb-tls-'));
  });
  afterAll(async () => {
    await server?.close();
    cleanup?.();
    pki?.cleanup();
  });

  const tlsFlags = (): string[] => ['--ca', pki.files.ca, '--cert', pki.files.clientCert, '--key', pki.files.clientKey];

  it('visit: --ca/--cert/--key and the token from VESPA_BULK_TOKEN', async () => {
    expect(server.url).toMatch(/^https:/);
    const r = await runCli(['visit', 'ns/music', '-t', server.url, '--slices', '3', ...tlsFlags(), '--quiet'], {
      cwd: dir,
      env: { VESPA_BULK_TOKEN: token },
    });
    expect(r.code, r.stderr).toBe(0);
    const ids = r.stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { put: string }).put);
    expect(ids.sort()).toEqual(Array.from({ length: 60 }, (_, i) => `id:ns:music::t${i}`).sort());

    const refused = await runCli(['visit', 'ns/music', '-t', server.url, ...tlsFlags(), '--quiet'], { cwd: dir });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    // Every slice refused alike: one line for all 256.
    expect(refused.stderr).toMatch(/^vespa-bulk: 256 slices failed: HTTP 401.*check --token/m);
  });

  it('update-where: the same flags reach the bulk requests', async () => {
    const r = await runCli(
      [
        'update-where',
        'ns/music',
        '--selection',
        'music.year == 2001',
        '--assign',
        'title="tls"',
        '-t',
        server.url,
        ...tlsFlags(),
        '--token',
        token,
        '--quiet',
      ],
      {
        cwd: dir,
      },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ 'bulk.ok': true, 'bulk.document.count': 20 });
    expect(server.store.get('id:ns:music::t1')!.fields.title).toBe('tls');
  });

  it('get: --token, and without it a 401 that names the problem but never the token', async () => {
    const ok = await runCli(['get', 'id:ns:music::t3', '-t', server.url, ...tlsFlags(), '--token', token], {
      cwd: dir,
    });
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ id: 'id:ns:music::t3', fields: { title: 't3' } });

    const wrong = await runCli(
      ['get', 'id:ns:music::t3', '-t', server.url, ...tlsFlags(), '--token', `${token}-wrong`],
      { cwd: dir },
    );
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/HTTP 403/);
    expect(wrong.stderr + wrong.stdout).not.toContain(token);

    const none = await runCli(['get', 'id:ns:music::t3', '-t', server.url, ...tlsFlags()], { cwd: dir });
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/HTTP 401/);
  });

  it('put: a CA that did not sign the server is refused before anything is sent', async () => {
    const r = await runCli(
      [
        'put',
        'id:ns:music::never',
        '{"fields":{"title":"x"}}',
        '-t',
        server.url,
        '--ca',
        pki.files.otherCa,
        '--token',
        token,
      ],
      { cwd: dir },
    );
    expect(r.code).not.toBe(0);
    expect(server.store.get('id:ns:music::never')).toBeUndefined();
    expect(r.stderr + r.stdout).not.toContain(token);
  });
});
