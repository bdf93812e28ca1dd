import type { FeedOperationObject } from '../../src/feed/source.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { feed } from '../../src/feed/feeder.js';
import { createTransport } from '../../src/http/create-transport.js';
import { send } from '../../src/http/exchange.js';
import { TransportError } from '../../src/http/transport-error.js';
import type { TlsOptions } from '../../src/http/transport.js';
import { makeTestPki, type TestPki } from '../support/certs.js';
import { startSquid, type Squid } from '../support/squid.js';
import { startHostileProxy, type HostileProxy } from '../support/hostile-proxy.js';
import { overProtocols } from '../support/protocols.js';
import { expectNothingLost, mixedOperations, quickRetries, tempDir } from './harness.js';

/**
 * A forward proxy that fails: one that dies in the middle of a feed (squid, killed and started again), and one of
 * our own that answers CONNECT wrongly at the byte level or cuts its tunnels. Nothing is lost, and a refusal is
 * a transport error that names the proxy and says whether anything was sent.
 */
let pki: TestPki;
let tls: TlsOptions;
beforeAll(() => {
  pki = makeTestPki();
  tls = { ca: pki.pem.ca, cert: pki.pem.clientCert, key: pki.pem.clientKey };
});
afterAll(() => pki?.cleanup());

describe.each(overProtocols)('a proxy that dies mid-feed, $protocol', ({ protocol }) => {
  let squid: Squid;
  let server: DocumentServer;
  let dir: string;
  let cleanup: () => void;

  beforeAll(async () => {
    squid = await startSquid({ hosts: { 'vespa.test': '127.0.0.1' } });
    server = await startDocumentServer({
      port: 0,
      tls: { cert: pki.pem.serverCert, key: pki.pem.serverKey, ca: pki.pem.ca },
      faults: { latencyMs: 2 },
    });
    ({ dir, cleanup } = tempDir('vb-proxy-dies-'));
  }, 180_000);
  afterAll(async () => {
    await server?.close();
    await squid?.stop();
    cleanup?.();
  });

  it('is killed and started again: every operation succeeds or is in the failure output, none twice', async () => {
    const ops = mixedOperations(3000, `die${protocol.replace('.', '')}`);
    const failures = join(dir, `failures-${protocol}.jsonl`);
    let killed = false;
    const watch = setInterval(() => {
      if (killed || server.store.size() < 600) return;
      killed = true;
      void squid.kill().then(() => setTimeout(() => void squid.restart(), 300));
    }, 5);
    let summary;
    try {
      summary = await feed(ops as FeedOperationObject[], {
        endpoint: server.url.replace('127.0.0.1', 'vespa.test'),
        tls,
        protocol,
        proxy: squid.url,
        failures,
        checkpoint: false,
        retryPolicy: quickRetries,
        maxRetries: 50,
      });
    } finally {
      clearInterval(watch);
    }
    expect(killed).toBe(true);
    expectNothingLost(server, ops, summary.ok, failures);
    expect(summary.ok).toBe(ops.length);
  });
});

describe.each(overProtocols)('a proxy of our own that misbehaves, $protocol', ({ protocol }) => {
  let proxy: HostileProxy;
  let server: DocumentServer;
  let endpoint: string;

  beforeAll(async () => {
    proxy = await startHostileProxy({ kind: 'tunnel' });
    server = await startDocumentServer({ port: 0, tls: { cert: pki.pem.serverCert, key: pki.pem.serverKey } });
    endpoint = server.url;
  });
  afterAll(async () => {
    await server?.close();
    await proxy?.close();
  });
  afterEach(() => proxy.behave({ kind: 'tunnel' }));

  /** The one request's failure through the proxy as it now behaves. */
  async function failureOf(proxyUrl = proxy.url): Promise<TransportError> {
    const transport = createTransport({ origin: endpoint, protocol, tls: { ca: pki.pem.ca }, proxy: proxyUrl });
    try {
      await send(transport, { method: 'GET', path: '/ApplicationStatus' });
    } catch (err) {
      expect(err).toBeInstanceOf(TransportError);
      return err as TransportError;
    } finally {
      await transport.destroy();
    }
    throw new Error('the request succeeded');
  }

  it('sends the CONNECT head RFC 9110 asks for, with Basic credentials from the URL', async () => {
    const port = new URL(endpoint).port;
    const transport = createTransport({
      origin: endpoint,
      protocol,
      tls: { ca: pki.pem.ca },
      proxy: proxy.url.replace('http://', 'http://al%40ice:p%3Ass@'),
    });
    const before = proxy.requests.length;
    try {
      expect((await send(transport, { method: 'GET', path: '/ApplicationStatus' })).status).toBe(200);
    } finally {
      await transport.close();
    }
    const basic = Buffer.from('al@ice:p:ss').toString('base64');
    expect(proxy.requests[before]).toBe(
      `CONNECT 127.0.0.1:${port} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nProxy-Authorization: Basic ${basic}\r\n\r\n`,
    );
  });

  it.each([
    {
      how: 'a 407 asking for Negotiate',
      behaviour: {
        kind: 'answer',
        raw: 'HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Negotiate\r\nContent-Length: 0\r\n\r\n',
      },
      words:
        /asks for credentials \(407 Proxy Authentication Required\): it asks for Negotiate, and vespa-bulk speaks only Basic/,
    },
    {
      how: 'a 502',
      behaviour: { kind: 'answer', raw: 'HTTP/1.1 502 Bad Gateway\r\nContent-Length: 3\r\n\r\nbad' },
      words: /could not reach 127\.0\.0\.1:\d+ \(502 Bad Gateway\)/,
    },
    {
      how: 'a head with a bare LF',
      behaviour: { kind: 'answer', raw: 'HTTP/1.1 200 OK\nVia: x\r\n\r\n' },
      words: /answered CONNECT 127\.0\.0\.1:\d+ with something that is not HTTP/,
    },
    {
      how: 'a close without a byte',
      behaviour: { kind: 'close' },
      words: /closed the connection before answering CONNECT 127\.0\.0\.1:\d+/,
    },
    {
      how: 'a reset',
      behaviour: { kind: 'reset' },
      words: /cannot be reached: .*ECONNRESET|closed the connection before answering/,
    },
  ] as const)('$how: a connect failure naming the proxy, never sent', async ({ behaviour, words }) => {
    proxy.behave(behaviour);
    const err = await failureOf();
    expect(err.failure).toBe('connect');
    expect(err.maybeApplied).toBe(false);
    expect(err.message).toContain(`the proxy ${proxy.url}`);
    expect(err.message).toMatch(words);
    expect(err.unreachable).toBeDefined();
  });

  it('tunnels cut in the middle of answers: the feed retries them and loses nothing', async () => {
    // Every third tunnel is cut a little way into the server's bytes; the rest carry on.
    proxy.behave((i) => (i % 3 === 1 ? { kind: 'tunnel-then-cut', afterBytes: 20_000 } : { kind: 'tunnel' }));
    const { dir, cleanup } = tempDir('vb-proxy-cut-');
    try {
      const ops = mixedOperations(1500, `cut${protocol.replace('.', '')}`);
      const failures = join(dir, 'failures.jsonl');
      const summary = await feed(ops as FeedOperationObject[], {
        endpoint,
        tls: { ca: pki.pem.ca },
        protocol,
        proxy: proxy.url,
        failures,
        checkpoint: false,
        retryPolicy: quickRetries,
        maxRetries: 50,
      });
      expectNothingLost(server, ops, summary.ok, failures);
    } finally {
      cleanup();
    }
  });
});
