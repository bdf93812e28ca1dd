import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../support/in-process-cli.js';
import { deploy } from '../../src/deploy/deploy.js';
import { DeployError } from '../../src/deploy/config-request.js';
import { getApplication } from '../../src/deploy/application.js';
import { isVespaBulkError } from '../../src/core/errors.js';
import { startSimulator, type Simulator } from '../../src/simulator/simulator.js';
import { makeTestPki, type TestPki } from '../support/certs.js';
import { sampleAppDir } from '../deploy/fixtures.js';
import { undiciRequest } from './helpers.js';

const token = 'deploy-secret-5e1d0c7a';
let pki: TestPki;
let sim: Simulator;

beforeAll(async () => {
  pki = makeTestPki();
  sim = await startSimulator({
    port: 0,
    configPort: 0,
    token,
    tls: { cert: pki.pem.serverCert, key: pki.pem.serverKey, ca: pki.pem.ca, requireClientCert: true },
    config: { convergeDelayMs: 20 },
  });
});
afterAll(async () => {
  await sim.close();
  pki.cleanup();
});

/** Runs the CLI in-process, capturing what it writes. */
const cli = (args: string[], env: Record<string, string> = {}) => runInProcess(args, env);

describe('deploy over HTTPS', () => {
  it('deploys with mutual TLS and a token, and the document interface then takes only the deployed types', async () => {
    expect(sim.configUrl).toMatch(/^https:/);
    const security = { ca: pki.files.ca, cert: pki.files.clientCert, key: pki.files.clientKey, token };
    const result = await deploy({ configUrl: sim.configUrl, security }, sampleAppDir, { waitSeconds: 10 });
    expect(result.activate.application?.generation).toBeGreaterThan(0);
    expect(result.convergence?.converged).toBe(true);
    // Links in the answers are https too.
    expect(result.activate.url).toMatch(/^https:\/\//);
    const tls = {
      ca: pki.pem.ca,
      cert: pki.pem.clientCert,
      key: pki.pem.clientKey,
      headers: { authorization: `Bearer ${token}` },
    };
    expect((await undiciRequest(`${sim.url}/document/v1/ns/nosuchtype/docid/1`, tls)).status).toBe(400);
  });

  it('reports a wrong token as 403 naming the step and what to check, without the token', async () => {
    const security = {
      ca: pki.files.ca,
      cert: pki.files.clientCert,
      key: pki.files.clientKey,
      token: 'wrong-token-0a1b2c',
    };
    const err = await getApplication({ configUrl: sim.configUrl, security }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DeployError);
    expect((err as DeployError).status).toBe(403);
    expect((err as Error).message).toMatch(/^status failed: 403 FORBIDDEN: .*check --token \/ --cert/);
    expect((err as Error).message).not.toContain('wrong-token-0a1b2c');
    const missing = await getApplication({
      configUrl: sim.configUrl,
      security: { ...security, token: undefined },
    }).catch((e: unknown) => e);
    expect((missing as DeployError).status).toBe(401);
    expect((missing as Error).message).toMatch(/401 UNAUTHORIZED.*check --token/);
  });

  it('names the missing client certificate as a TLS failure', async () => {
    const err = await getApplication({ configUrl: sim.configUrl, security: { ca: pki.files.ca, token } }).catch(
      (e: unknown) => e,
    );
    expect(isVespaBulkError(err, 'VB_TRANSPORT')).toBe(true);
    expect((err as Error).message).toMatch(
      /status failed: cannot reach the config server.*client certificate \(--cert, --key\)/,
    );
    expect((err as Error).message).not.toContain(token);
  });

  it('never retries a 401 or 403', async () => {
    let requests = 0;
    const server = createServer({ cert: pki.pem.serverCert, key: pki.pem.serverKey }, (req, res) => {
      requests++;
      req.resume();
      res
        .writeHead(403, { 'content-type': 'application/json' })
        .end(JSON.stringify({ 'error-code': 'FORBIDDEN', message: 'no' }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const configUrl = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const err = await deploy({ configUrl, security: { ca: pki.files.ca, token } }, sampleAppDir, {
        waitSeconds: 5,
      }).catch((e: unknown) => e);
      expect((err as DeployError).step).toBe('upload');
      expect(requests).toBe(1);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('vespa-bulk deploy with security flags', () => {
  it('deploys with --ca/--cert/--key and the token from the environment', async () => {
    const r = await cli(
      [
        'deploy',
        sampleAppDir,
        '--config-url',
        sim.configUrl!,
        '--ca',
        pki.files.ca,
        '--cert',
        pki.files.clientCert,
        '--key',
        pki.files.clientKey,
      ],
      {
        VESPA_BULK_TOKEN: token,
      },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/Activated session \d+/);
    expect(r.stderr + r.stdout).not.toContain(token);
  });

  it('fails clearly on a wrong token, flag or environment, and never prints it', async () => {
    const secret = 'cli-wrong-secret-9f8e7d';
    const base = [
      'deploy',
      'status',
      '--config-url',
      sim.configUrl!,
      '--ca',
      pki.files.ca,
      '--cert',
      pki.files.clientCert,
      '--key',
      pki.files.clientKey,
    ];
    for (const run of [
      () => cli([...base, '--token', secret]),
      () => cli(base, { VESPA_BULK_TOKEN: secret }),
      () => cli([...base, '--json', '--token', secret]),
    ]) {
      const r = await run();
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/status failed: 403 FORBIDDEN.*check --token \/ --cert/);
      expect(r.stderr + r.stdout).not.toContain(secret);
    }
  });

  it('exits 2 naming the flag and file it cannot read', async () => {
    const r = await cli([
      'deploy',
      'status',
      '--config-url',
      sim.configUrl!,
      '--ca',
      pki.files.ca,
      '--cert',
      '/nonexistent/client.pem',
      '--key',
      pki.files.clientKey,
      '--token',
      token,
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--cert .*'\/nonexistent\/client\.pem': ENOENT/);
    expect(r.stderr).not.toContain(token);
  });
});
