import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { startSimulator, type Simulator } from '../../src/simulator/simulator.js';
import { makeExpiredClientCert, makeTestPki, type TestPki } from '../support/certs.js';
import { runCli, tempDir, writeJsonl } from '../faults/harness.js';

/**
 * A user of the official `vespa` CLI, with its set-up in a real $VESPA_CLI_HOME layout (config.yaml, the
 * data-plane key pair in default.application.default/), runs vespa-bulk with no target or credential flags
 * against a simulator that requires a client certificate.
 */
describe('drop-in for vespa CLI users', () => {
  let pki: TestPki;
  let server: DocumentServer;
  let dir: string;
  let cleanup: () => void;

  /** A $VESPA_CLI_HOME with config.yaml and a key pair in the directory the official CLI uses. */
  function cliHome(
    name: string,
    config: string,
    pair?: { cert: string | Buffer; key: string | Buffer },
    app = 'default.application.default',
  ): string {
    const home = join(dir, name);
    mkdirSync(join(home, app), { recursive: true });
    writeFileSync(join(home, 'config.yaml'), config);
    if (pair) {
      writeFileSync(
        join(home, app, 'data-plane-public-cert.pem'),
        typeof pair.cert === 'string' ? readFileSync(pair.cert) : pair.cert,
      );
      writeFileSync(
        join(home, app, 'data-plane-private-key.pem'),
        typeof pair.key === 'string' ? readFileSync(pair.key) : pair.key,
      );
    }
    return home;
  }

  beforeAll(async () => {
    pki = makeTestPki();
    server = await startDocumentServer({
      port: 0,
      tls: { cert: pki.pem.serverCert, key: pki.pem.serverKey, ca: pki.pem.ca, requireClientCert: true },
    });
    ({ dir, cleanup } = tempDir('vb-dropin-'));
    writeJsonl(join(dir, 'in.jsonl'), [
      { put: 'id:ns:music::d1', fields: { title: 'one' } },
      { put: 'id:ns:music::d2', fields: { title: 'two' } },
    ]);
  });
  afterAll(async () => {
    await server?.close();
    cleanup?.();
    pki?.cleanup();
  });

  const good = () => ({ cert: pki.files.clientCert, key: pki.files.clientKey });
  const wrong = () => ({ cert: pki.files.otherClientCert, key: pki.files.otherClientKey });
  const env = (home: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
    VESPA_CLI_HOME: home,
    VESPA_CLI_DATA_PLANE_CA_CERT_FILE: pki.files.ca,
    ...extra,
  });

  it('feed: target from $VESPA_CLI_HOME/config.yaml, key pair from default.application.default/, no flags', async () => {
    const home = cliHome('home-plain', `target: ${server.url}\n`, good());
    const r = await runCli(['feed', 'in.jsonl'], { cwd: dir, env: env(home) });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ 'feeder.ok.count': 2, 'feeder.error.count': 0 });
    expect(server.store.get('id:ns:music::d1')?.fields).toEqual({ title: 'one' });
    expect(r.stderr).toContain(`(from ${join(home, 'config.yaml')})`);
  });

  it('visit and get: .vespa/config.yaml in a parent of the working directory wins over $VESPA_CLI_HOME', async () => {
    const home = cliHome('home-elsewhere', 'target: http://127.0.0.1:1\n', good());
    mkdirSync(join(dir, 'project', '.vespa'), { recursive: true });
    mkdirSync(join(dir, 'project', 'src', 'deep'), { recursive: true });
    writeFileSync(join(dir, 'project', '.vespa', 'config.yaml'), `target: ${server.url}\n`);
    const cwd = join(dir, 'project', 'src', 'deep');
    const got = await runCli(['get', 'id:ns:music::d1'], { cwd, env: env(home) });
    expect(got.code, got.stderr).toBe(0);
    expect(JSON.parse(got.stdout)).toMatchObject({ fields: { title: 'one' } });
    const visited = await runCli(['visit', 'ns/music', '--quiet'], { cwd, env: env(home) });
    expect(visited.code, visited.stderr).toBe(0);
    expect(visited.stdout.trim().split('\n').length).toBeGreaterThanOrEqual(2);
  });

  it('VESPA_CLI_DATA_PLANE_CERT/KEY (PEM text) win over the *_FILE variables and the home key pair', async () => {
    const home = cliHome('home-wrong-pair', `target: ${server.url}\n`, wrong());
    const refused = await runCli(['get', 'id:ns:music::d1'], { cwd: dir, env: env(home) });
    expect(refused.code).toBe(1);
    const r = await runCli(['get', 'id:ns:music::d1'], {
      cwd: dir,
      env: env(home, {
        VESPA_CLI_DATA_PLANE_CERT: pki.pem.clientCert.toString(),
        VESPA_CLI_DATA_PLANE_KEY: pki.pem.clientKey.toString(),
        VESPA_CLI_DATA_PLANE_CERT_FILE: pki.files.otherClientCert,
        VESPA_CLI_DATA_PLANE_KEY_FILE: pki.files.otherClientKey,
      }),
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toContain('PRIVATE KEY');
  });

  it('our flags win over theirs: -t over config.yaml, --cert/--key over the variables and the home pair', async () => {
    const home = cliHome('home-bogus', 'target: http://127.0.0.1:1\n', wrong());
    const r = await runCli(
      ['get', 'id:ns:music::d2', '-t', server.url, '--cert', pki.files.clientCert, '--key', pki.files.clientKey],
      {
        cwd: dir,
        env: env(home, {
          VESPA_CLI_DATA_PLANE_CERT_FILE: pki.files.otherClientCert,
          VESPA_CLI_DATA_PLANE_KEY_FILE: pki.files.otherClientKey,
        }),
      },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ fields: { title: 'two' } });
  });

  it('an expired certificate is refused before anything is sent, naming the file and its expiry', async () => {
    let connections = 0;
    const listener: Server = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    try {
      const expired = makeExpiredClientCert(pki.dir);
      const url = `https://127.0.0.1:${(listener.address() as AddressInfo).port}`;
      const home = cliHome('home-expired', `target: ${url}\n`, expired);
      for (const args of [
        ['feed', 'in.jsonl', '--quiet'],
        ['get', 'id:ns:music::d1'],
        ['visit', 'ns/music', '--quiet'],
      ]) {
        const r = await runCli(args, { cwd: dir, env: env(home) });
        expect(r.code, `${args[0]}: ${r.stderr}`).toBe(1);
        expect(r.stderr).toContain(join(home, 'default.application.default', 'data-plane-public-cert.pem'));
        expect(r.stderr).toMatch(/expired at 2020-01-02T00:00:00/);
      }
      expect(connections).toBe(0);
    } finally {
      await new Promise<void>((r) => listener.close(() => r()));
    }
  });

  it('cloud: refused without VESPA_CLI_ENDPOINTS (pass the URL with -t); with it, the endpoint and the application key pair are used', async () => {
    const home = cliHome(
      'home-cloud',
      'target: cloud\napplication: mytenant.myapp\n',
      good(),
      'mytenant.myapp.default',
    );
    const refused = await runCli(['feed', 'in.jsonl', '--quiet'], { cwd: dir, env: env(home) });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/pass the endpoint URL with -t/);
    const endpoints = JSON.stringify({
      endpoints: [
        { cluster: 'other', url: 'https://127.0.0.1:1' },
        { cluster: 'default', url: server.url },
      ],
    });
    const picked = await runCli(['get', 'id:ns:music::d1', '-C', 'default'], {
      cwd: dir,
      env: env(home, { VESPA_CLI_ENDPOINTS: endpoints }),
    });
    expect(picked.code, picked.stderr).toBe(0);
    expect(picked.stderr).toContain('VESPA_CLI_ENDPOINTS');
    const ambiguous = await runCli(['get', 'id:ns:music::d1'], {
      cwd: dir,
      env: env(home, { VESPA_CLI_ENDPOINTS: endpoints }),
    });
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toMatch(/'other', 'default'.*-C/);
  });
});

describe('deploy takes the drop-in target', () => {
  let sim: Simulator;
  let dir: string;
  let cleanup: () => void;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0, configPort: 0 });
    ({ dir, cleanup } = tempDir('vb-dropin-deploy-'));
  });
  afterAll(async () => {
    await sim?.close();
    cleanup?.();
  });

  it('deploys to the config server named by config.yaml, with the application from it; --config-url wins', async () => {
    const home = join(dir, 'home');
    mkdirSync(home, { recursive: true });
    writeFileSync(join(home, 'config.yaml'), `target: ${sim.configUrl}\napplication: default.music\n`);
    const app = join(import.meta.dirname, '../../samples/app');
    const r = await runCli(['deploy', app, '--json'], {
      cwd: dir,
      env: { VESPA_CLI_HOME: home, VESPA_BULK_STATE_DIR: dir },
    });
    expect(r.code, r.stderr).toBe(0);
    const status = await runCli(['deploy', 'status'], { cwd: dir, env: { VESPA_CLI_HOME: home } });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain('default.music.default');
    const elsewhere = await runCli(['deploy', 'status', '--config-url', 'http://127.0.0.1:1'], {
      cwd: dir,
      env: { VESPA_CLI_HOME: home },
    });
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toContain('127.0.0.1:1');
  });
});
