import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer as tlsServer } from 'node:tls';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { feed } from '../../src/feed/feeder.js';
import { visit } from '../../src/visit/visit.js';
import { bulkOperation } from '../../src/visit/bulk.js';
import { DocumentClient } from '../../src/http/document-client.js';
import { createTransport } from '../../src/http/create-transport.js';
import { send } from '../../src/http/exchange.js';
import type { TlsOptions } from '../../src/http/transport.js';
import { makeTestPki, type TestPki } from '../support/certs.js';
import { startSquid, type Squid } from '../support/squid.js';
import { overProtocols } from '../support/protocols.js';
import { runCli, tempDir, writeJsonl, type Op } from '../faults/harness.js';

/**
 * Through a real forward proxy (Debian's squid) that alone resolves `vespa.test`, the name in the endpoints here:
 * a request that did not go through it finds no such host. Over https each connection is a CONNECT tunnel with
 * mutual TLS end to end; over http the proxy forwards HTTP/1.1, or tunnels HTTP/2 where it allows CONNECT.
 */
let pki: TestPki;
let tls: TlsOptions;
// A name per pool test, so that late log lines of another test's tunnels (squid logs a tunnel when it closes) count for none.
const hosts = {
  'vespa.test': '127.0.0.1',
  'pool-h2.vespa.test': '127.0.0.1',
  'pool-http11.vespa.test': '127.0.0.1',
};

beforeAll(() => {
  pki = makeTestPki();
  tls = { ca: pki.pem.ca, cert: pki.pem.clientCert, key: pki.pem.clientKey };
});
afterAll(() => pki?.cleanup());

describe('through squid to https://vespa.test with mutual TLS', () => {
  let squid: Squid;
  let server: DocumentServer;
  let endpoint: string;

  beforeAll(async () => {
    squid = await startSquid({ hosts });
    server = await startDocumentServer({
      port: 0,
      tls: { cert: pki.pem.serverCert, key: pki.pem.serverKey, ca: pki.pem.ca, requireClientCert: true },
    });
    endpoint = server.url.replace('127.0.0.1', 'vespa.test');
  }, 180_000);
  afterAll(async () => {
    await server?.close();
    await squid?.stop();
  });

  describe.each(overProtocols)('$protocol', ({ protocol }) => {
    const ns = `proxy-${protocol.replace('.', '')}`;
    const ops = Array.from({ length: 200 }, (_, i) => ({ put: `id:${ns}:music::d${i}`, fields: { n: i } }));

    it('feeds, visits every document once, reads one and updates them all, each through a tunnel', async () => {
      const fed = await feed(ops, { endpoint, tls, protocol, proxy: squid.url, failures: false, checkpoint: false });
      expect(fed).toMatchObject({ ok: ops.length, errors: 0, protocol, proxy: squid.url });

      const seen = new Map<string, number>();
      const visited = visit({
        endpoint,
        tls,
        protocol,
        proxy: squid.url,
        namespace: ns,
        documentType: 'music',
        slices: 4,
      });
      for await (const doc of visited) seen.set(doc.id, (seen.get(doc.id) ?? 0) + 1);
      expect(await visited.report).toMatchObject({ ok: true, protocol, proxy: squid.url });
      expect([...seen.keys()].sort()).toEqual(ops.map((o) => o.put).sort());
      expect([...seen.values()].every((n) => n === 1)).toBe(true);

      const client = new DocumentClient({ endpoint, tls, protocol, proxy: squid.url });
      try {
        expect(await client.get(`id:${ns}:music::d7`)).toMatchObject({ status: 200, body: { fields: { n: 7 } } });
      } finally {
        await client.close();
      }
      const updated = await bulkOperation({
        endpoint,
        tls,
        protocol,
        proxy: squid.url,
        kind: 'update-where',
        namespace: ns,
        documentType: 'music',
        selection: 'true',
        cluster: 'content',
        fields: { n: { assign: -1 } },
      });
      expect(updated).toMatchObject({ ok: true, documentCount: ops.length, protocol, proxy: squid.url });
      expect(server.store.get(`id:${ns}:music::d199`)?.fields).toEqual({ n: -1 });
      const port = new URL(endpoint).port;
      expect(await squid.waitForLog(new RegExp(`^CONNECT vespa\\.test:${port} 200`))).not.toContainEqual(
        expect.stringMatching(/^(GET|POST|PUT) http:/),
      );
    });

    it('opens each connection of the pool as a tunnel of its own', async () => {
      const connections = protocol === 'h2' ? 4 : 6;
      const name = `pool-${protocol.replace('.', '')}.vespa.test`;
      const origin = endpoint.replace('vespa.test', name);
      const transport = createTransport({
        origin,
        protocol,
        tls,
        proxy: squid.url,
        connections,
        concurrency: connections * 4,
      });
      try {
        // Many requests at once: the pool opens every connection it may.
        const answers = await Promise.all(
          Array.from({ length: connections * 8 }, () => send(transport, { method: 'GET', path: '/ApplicationStatus' })),
        );
        expect(answers.every((a) => a.status === 200)).toBe(true);
        expect(transport.stats.connections).toBe(connections);
      } finally {
        await transport.close();
      }
      const tunnel = new RegExp(`^CONNECT ${name.replaceAll('.', '\\.')}:${new URL(endpoint).port} 200`);
      let lines: string[] = [];
      for (let i = 0; i < 100; i++) {
        lines = (await squid.accessLog()).filter((l) => tunnel.test(l));
        if (lines.length >= connections) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(lines).toHaveLength(connections);
    });

    it('through an https:// proxy trusted with proxyTls: TLS to the endpoint inside TLS to the proxy', async () => {
      // squid behind a TLS terminator of our own: the proxy is spoken to over TLS, as a corporate https:// one.
      const open = new Set<Socket>();
      const front = tlsServer({ cert: pki.pem.serverCert, key: pki.pem.serverKey }, (client) => {
        const upstream = connect(squid.port, '127.0.0.1');
        open.add(client).add(upstream);
        client.pipe(upstream).pipe(client);
        for (const s of [client, upstream]) s.on('error', () => undefined).on('close', () => client.destroy());
      });
      await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
      const proxy = `https://127.0.0.1:${(front.address() as AddressInfo).port}`;
      try {
        const fed = await feed(ops.slice(0, 50), {
          endpoint,
          tls,
          protocol,
          proxy,
          proxyTls: { ca: pki.pem.ca },
          failures: false,
          checkpoint: false,
        });
        expect(fed).toMatchObject({ ok: 50, protocol, proxy });
        // Without its CA the proxy's certificate is refused, and the message says which TLS failed.
        await expect(
          feed(ops.slice(0, 1), { endpoint, tls, protocol, proxy, failures: false, checkpoint: false }),
        ).rejects.toThrow(`the proxy ${proxy} cannot be reached: TLS handshake failed`);
      } finally {
        for (const socket of open) socket.destroy();
        await new Promise((r) => front.close(r));
      }
    });
  });
});

describe('through squid to http://vespa.test', () => {
  let open: Squid;
  let strict: Squid;
  let server: DocumentServer;
  let endpoint: string;
  let dir: string;
  let cleanup: () => void;
  const ops: Op[] = Array.from({ length: 60 }, (_, i) => ({ put: `id:plain:music::d${i}`, fields: { n: i } }));

  beforeAll(async () => {
    [open, strict] = await Promise.all([startSquid({ hosts }), startSquid({ hosts, connectPorts: [443] })]);
    server = await startDocumentServer({ port: 0 });
    endpoint = server.url.replace('127.0.0.1', 'vespa.test');
    ({ dir, cleanup } = tempDir('vb-proxy-http-'));
    writeJsonl(join(dir, 'in.jsonl'), ops);
  }, 180_000);
  afterAll(async () => {
    await server?.close();
    await Promise.all([open?.stop(), strict?.stop()]);
    cleanup?.();
  });

  it('auto: HTTP/2 through a tunnel where the proxy allows CONNECT to the port', async () => {
    server.store.clear();
    const r = await runCli(['feed', 'in.jsonl', '-t', endpoint, '--proxy', open.url], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      'feeder.ok.count': ops.length,
      'http.protocol': 'h2',
      'http.proxy': open.url,
    });
    expect(r.stderr).toContain(`speaking HTTP/2 to ${endpoint} through the proxy ${open.url} (--protocol auto)`);
    expect(server.store.size()).toBe(ops.length);
  });

  it('auto: a proxy that tunnels only to 443 carries HTTP/1.1 as a forwarding proxy, and says so', async () => {
    server.store.clear();
    const r = await runCli(['feed', 'in.jsonl', '-t', endpoint, '--proxy', strict.url], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ 'feeder.ok.count': ops.length, 'http.protocol': 'http1.1' });
    expect(r.stderr).toMatch(
      /speaking HTTP\/1\.1 to http:\/\/vespa\.test:\d+ through the proxy http:\/\/127\.0\.0\.1:\d+ \(--protocol auto\): the proxy http:\/\/127\.0\.0\.1:\d+ refuses to tunnel to vespa\.test:\d+ \(403/,
    );
    expect(server.store.size()).toBe(ops.length);
    expect(await strict.waitForLog(/^POST http:\/\/vespa\.test:\d+\/document\/v1\//)).toBeDefined();
  });

  it('--protocol h2 through a proxy that will not tunnel: ends at once, naming the proxy (exit 1)', async () => {
    const r = await runCli(['feed', 'in.jsonl', '-t', endpoint, '--proxy', strict.url, '--protocol', 'h2'], {
      cwd: dir,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`the proxy ${strict.url} refuses to tunnel to vespa.test:`);
    expect(r.stderr).toContain('needs a CONNECT tunnel');
  });
});

describe('proxy settings from the flags and the environment', () => {
  const password = 'pr0xy-s3cret-7d1f';
  let squid: Squid;
  let server: DocumentServer;
  let endpoint: string;
  let dir: string;
  let cleanup: () => void;
  let withCredentials: string;
  const ops: Op[] = Array.from({ length: 30 }, (_, i) => ({ put: `id:env:music::d${i}`, fields: { n: i } }));
  const tlsFlags = (): string[] => ['--ca', pki.files.ca, '--cert', pki.files.clientCert, '--key', pki.files.clientKey];

  beforeAll(async () => {
    squid = await startSquid({ hosts, auth: { user: 'alice', password } });
    withCredentials = squid.url.replace('http://', `http://alice:${password}@`);
    server = await startDocumentServer({
      port: 0,
      tls: { cert: pki.pem.serverCert, key: pki.pem.serverKey, ca: pki.pem.ca, requireClientCert: true },
    });
    endpoint = server.url.replace('127.0.0.1', 'vespa.test');
    ({ dir, cleanup } = tempDir('vb-proxy-env-'));
    writeJsonl(join(dir, 'in.jsonl'), ops);
  }, 180_000);
  afterAll(async () => {
    await server?.close();
    await squid?.stop();
    cleanup?.();
  });

  const feedCli = (args: string[], env: NodeJS.ProcessEnv = {}) =>
    runCli(['feed', 'in.jsonl', '-t', endpoint, ...tlsFlags(), ...args], {
      cwd: dir,
      env: { HTTPS_PROXY: '', https_proxy: '', ALL_PROXY: '', all_proxy: '', NO_PROXY: '', no_proxy: '', ...env },
    });

  it('HTTPS_PROXY with credentials: Basic authentication, and the password shows nowhere', async () => {
    server.store.clear();
    const r = await feedCli(['--verbose'], { HTTPS_PROXY: withCredentials });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ 'feeder.ok.count': ops.length, 'http.proxy': squid.url });
    expect(r.stdout + r.stderr).not.toContain(password);
    expect(await squid.waitForLog(/^CONNECT vespa\.test:\d+ 200 alice$/)).toBeDefined();
  });

  it('--proxy with credentials: the stats file and the report name the proxy, never the password', async () => {
    server.store.clear();
    const r = await feedCli(['--proxy', withCredentials, '--stats', 'proxy.stats.jsonl', '--report', 'proxy.html']);
    expect(r.code, r.stderr).toBe(0);
    const stats = readFileSync(join(dir, 'proxy.stats.jsonl'), 'utf8');
    const report = readFileSync(join(dir, 'proxy.html'), 'utf8');
    for (const text of [stats, report, r.stdout, r.stderr]) expect(text).not.toContain(password);
    expect(stats).toContain(`"http.proxy":"${squid.url}"`);
    expect(report).toContain(squid.url);
  });

  it('without credentials: the 407 ends the feed at once, naming the proxy and what to give (exit 1)', async () => {
    const r = await feedCli(['--proxy', squid.url]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`the proxy ${squid.url} asks for credentials (407`);
    expect(r.stderr).toContain('http://USER:PASSWORD@127.0.0.1:');
  });

  it('wrong credentials: refused, and the wrong password is not echoed', async () => {
    const wrong = squid.url.replace('http://', 'http://alice:not-the-password@');
    const r = await feedCli(['--proxy', wrong]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`the proxy ${squid.url} refused the credentials in its URL (407`);
    expect(r.stdout + r.stderr).not.toContain('not-the-password');
  });

  it('ALL_PROXY serves an https endpoint when HTTPS_PROXY is unset', async () => {
    server.store.clear();
    const r = await feedCli([], { ALL_PROXY: withCredentials });
    expect(r.code, r.stderr).toBe(0);
    expect(server.store.size()).toBe(ops.length);
  });

  it('--proxy wins over HTTPS_PROXY', async () => {
    server.store.clear();
    const r = await feedCli(['--proxy', withCredentials], { HTTPS_PROXY: 'http://127.0.0.1:1' });
    expect(r.code, r.stderr).toBe(0);
    expect(server.store.size()).toBe(ops.length);
  });

  it.each([
    { how: 'NO_PROXY naming the host', args: [], env: { NO_PROXY: 'other.example, .test' } },
    { how: 'no_proxy with the port', args: [], env: { no_proxy: `vespa.test:${0}` } },
    { how: 'NO_PROXY=*', args: [], env: { NO_PROXY: '*' } },
    { how: '--no-proxy', args: ['--no-proxy'], env: {} },
  ])('$how: no proxy, so vespa.test is an unknown host here (exit 1)', async ({ args, env }) => {
    const port = new URL(endpoint).port;
    const fixed = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v.replace(':0', `:${port}`)]));
    const r = await feedCli(args, { HTTPS_PROXY: withCredentials, ...fixed });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /nothing answers at https:\/\/vespa\.test:\d+: (unknown host|the host name could not be resolved)/,
    );
    expect(r.stderr).not.toContain('the proxy');
  });

  it('a loopback endpoint takes no proxy from the environment', async () => {
    server.store.clear();
    const r = await runCli(['feed', 'in.jsonl', '-t', server.url, ...tlsFlags()], {
      cwd: dir,
      env: { HTTPS_PROXY: 'http://127.0.0.1:1', https_proxy: '', ALL_PROXY: '', NO_PROXY: '' },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)['http.proxy']).toBeUndefined();
    expect(server.store.size()).toBe(ops.length);
  });

  it('a proxy where nothing listens: ends at once, naming the proxy (exit 1)', async () => {
    const r = await feedCli(['--proxy', 'http://127.0.0.1:1']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `nothing answers at ${endpoint}: the proxy http://127.0.0.1:1 cannot be reached: connection refused (ECONNREFUSED)`,
    );
  });

  it('a malformed --proxy is bad usage (exit 2)', async () => {
    const r = await feedCli(['--proxy', 'socks5://127.0.0.1:1080']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('SOCKS');
  });
});
