import { execFile } from 'node:child_process';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestPki, type TestPki } from './certs.js';
import { type HostileProxy, startHostileProxy } from './hostile-proxy.js';
import { type Squid, startSquid } from './squid.js';

// The test support for proxies (issue 34) checked with curl, a client that is not ours: squid forwards and
// tunnels, asks for credentials, logs what went through and comes back after a kill; the hostile proxy answers
// CONNECT with exactly the bytes it was told to.

interface CurlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs curl (never a shell string) with `input` on its stdin; a failing curl resolves with its exit code, as
 * that is what tests assert.
 */
function curl(args: string[], input = ''): Promise<CurlResult> {
  return new Promise((resolve) => {
    const child = execFile(
      'curl',
      ['-sS', '--max-time', '30', ...args],
      { maxBuffer: 4 << 20 },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1;
        resolve({ code, stdout, stderr });
      },
    );
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(input);
  });
}

/** Answers `METHOD URL BODY-BYTES`, or 100 KB of 'x' at /big: what the target saw, for the test to check. */
function handler(req: http.IncomingMessage, res: http.ServerResponse): void {
  let bytes = 0;
  req.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
  });
  req.on('end', () => res.end(req.url === '/big' ? 'x'.repeat(100_000) : `${req.method} ${req.url} ${bytes}`));
}

async function listen(server: http.Server | https.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

let pki: TestPki;
let plain: http.Server;
let secure: https.Server;
let plainPort: number;
let securePort: number;

beforeAll(async () => {
  pki = makeTestPki();
  plain = http.createServer(handler);
  secure = https.createServer({ key: pki.pem.serverKey, cert: pki.pem.serverCert }, handler);
  plainPort = await listen(plain);
  securePort = await listen(secure);
});

afterAll(async () => {
  plain.closeAllConnections();
  secure.closeAllConnections();
  await Promise.all([new Promise((r) => plain.close(r)), new Promise((r) => secure.close(r))]);
  pki.cleanup();
});

describe('squid', () => {
  let squid: Squid;
  const auth = { user: 'alice', password: 'pa:ss w0rd' };
  const credentials = ['--proxy-user', `${auth.user}:${auth.password}`];

  // 180 s: on a fresh machine the first start installs squid.
  beforeAll(async () => {
    squid = await startSquid({ hosts: { 'vespa.test': '127.0.0.1' }, auth });
  }, 180_000);
  afterAll(() => squid?.stop());

  it('asks for credentials with 407, for forwarding and for CONNECT', async () => {
    const forward = await curl([
      '-o',
      '/dev/null',
      '-w',
      '%{http_code}',
      '-x',
      squid.url,
      `http://vespa.test:${plainPort}/`,
    ]);
    expect(forward.stdout).toBe('407');
    const tunnel = await curl([
      ...['-o', '/dev/null', '-w', '%{http_connect}', '-x', squid.url, '--cacert', pki.files.ca],
      `https://localhost:${securePort}/`,
    ]);
    expect(tunnel.stdout).toBe('407');
    expect(tunnel.code).not.toBe(0);
    await squid.waitForLog(new RegExp(`^CONNECT localhost:${securePort} 407 -$`));
  });

  it('forwards to a name only the proxy resolves, a 100 KB body whole', async () => {
    const get = await curl(['-x', squid.url, ...credentials, `http://vespa.test:${plainPort}/a?b=c`]);
    expect(get).toMatchObject({ code: 0, stdout: 'GET /a?b=c 0' });
    const body = `{"fields":{"text":"${'y'.repeat(100_000)}"}}`;
    const post = await curl(
      [
        '-x',
        squid.url,
        ...credentials,
        '--data-binary',
        '@-',
        '-H',
        'Content-Type: application/json',
        `http://vespa.test:${plainPort}/doc`,
      ],
      body,
    );
    expect(post).toMatchObject({ code: 0, stdout: `POST /doc ${body.length}` });
    const lines = await squid.waitForLog(/^POST /);
    expect(lines).toContain(`GET http://vespa.test:${plainPort}/a?b=c 200 alice`);
    expect(lines).toContain(`POST http://vespa.test:${plainPort}/doc 200 alice`);
  });

  it('tunnels CONNECT to a TLS server, and logs it', async () => {
    const got = await curl([
      '-x',
      squid.url,
      ...credentials,
      '--cacert',
      pki.files.ca,
      `https://localhost:${securePort}/t`,
    ]);
    expect(got).toMatchObject({ code: 0, stdout: 'GET /t 0' });
    await squid.waitForLog(new RegExp(`^CONNECT localhost:${securePort} 200 alice$`));
  });

  it('serves again on the same port after kill and restart', async () => {
    await squid.kill();
    const dead = await curl(['-x', squid.url, ...credentials, `http://vespa.test:${plainPort}/`]);
    expect(dead.code).toBe(7); // could not connect
    await squid.restart();
    const back = await curl(['-x', squid.url, ...credentials, `http://vespa.test:${plainPort}/again`]);
    expect(back).toMatchObject({ code: 0, stdout: 'GET /again 0' });
  });
});

describe('squid limiting CONNECT ports', () => {
  let squid: Squid;
  beforeAll(async () => {
    squid = await startSquid({ connectPorts: [securePort] });
  }, 180_000);
  afterAll(() => squid?.stop());

  it('tunnels to a listed port and answers 403 to another', async () => {
    const listed = await curl(['-x', squid.url, '--cacert', pki.files.ca, `https://localhost:${securePort}/`]);
    expect(listed).toMatchObject({ code: 0, stdout: 'GET / 0' });
    const other = await curl([
      '-p',
      '-o',
      '/dev/null',
      '-w',
      '%{http_connect}',
      '-x',
      squid.url,
      `http://localhost:${plainPort}/`,
    ]);
    expect(other.stdout).toBe('403');
  });
});

describe('hostile proxy', () => {
  let proxy: HostileProxy;
  beforeAll(async () => {
    proxy = await startHostileProxy();
  });
  afterAll(() => proxy?.close());

  const tunnelTo = (path: string, extra: string[] = []) =>
    curl(['-p', '-x', proxy.url, ...extra, `http://localhost:${plainPort}${path}`]);

  it('tunnels, byte for byte, TLS included', async () => {
    proxy.behave({ kind: 'tunnel' });
    const before = proxy.requests.length;
    const got = await curl(['-x', proxy.url, '--cacert', pki.files.ca, `https://localhost:${securePort}/s`]);
    expect(got).toMatchObject({ code: 0, stdout: 'GET /s 0' });
    const head = proxy.requests[before];
    expect(head.startsWith(`CONNECT localhost:${securePort} HTTP/1.1\r\n`)).toBe(true);
    expect(head).toContain(`\r\nHost: localhost:${securePort}\r\n`);
    expect(head.endsWith('\r\n\r\n')).toBe(true);
  });

  it('answers the raw bytes it is given, and records Proxy-Authorization', async () => {
    proxy.behave({
      kind: 'answer',
      raw: 'HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="x"\r\nContent-Length: 0\r\n\r\n',
    });
    const before = proxy.requests.length;
    const got = await tunnelTo('/', ['-w', '%{http_connect}', '-o', '/dev/null', '--proxy-user', 'bob:secret']);
    expect(got.stdout).toBe('407');
    expect(got.code).not.toBe(0);
    expect(proxy.requests[before]).toContain(
      `\r\nProxy-Authorization: Basic ${Buffer.from('bob:secret').toString('base64')}\r\n`,
    );
  });

  it('closes, resets, or cuts a tunnel short, as told by connection index', async () => {
    const kinds = [{ kind: 'close' }, { kind: 'reset' }, { kind: 'tunnel-then-cut', afterBytes: 1000 }] as const;
    // Indexes count from the proxy's start: line the next connection up with 'close'.
    const start = proxy.requests.length;
    proxy.behave((i) => kinds[(i - start) % kinds.length]);
    const closed = await tunnelTo('/');
    const reset = await tunnelTo('/');
    const cut = await tunnelTo('/big');
    expect(closed.code).not.toBe(0);
    expect(closed.stdout).toBe('');
    expect(reset.code).not.toBe(0);
    expect(reset.stdout).toBe('');
    expect(cut.code).not.toBe(0);
    expect(cut.stdout.length).toBeLessThan(1000);
    expect(proxy.requests.length).toBe(start + 3);
  });

  it('never answers when silent', async () => {
    proxy.behave({ kind: 'silent' });
    const got = await curl(['-p', '-x', proxy.url, '--max-time', '1', `http://localhost:${plainPort}/`]);
    expect(got.code).toBe(28); // curl's timeout
  });
});
