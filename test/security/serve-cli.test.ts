import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveTlsOf } from '../../src/cli/commands/serve.js';
import { isVespaBulkError } from '../../src/core/errors.js';
import { makeTestPki, type TestPki } from '../support/certs.js';
import { cliArgs } from '../support/cli-entry.js';
import { undiciRequest } from './helpers.js';

let pki: TestPki;
beforeAll(() => {
  pki = makeTestPki();
});
afterAll(() => pki.cleanup());

describe('serve --tls-* flags', () => {
  it('refuses half a configuration and unreadable files as usage errors naming the flag', () => {
    const usage = (args: Parameters<typeof serveTlsOf>[0]): string => {
      try {
        serveTlsOf(args);
      } catch (err) {
        expect(isVespaBulkError(err, 'VB_USAGE')).toBe(true);
        return (err as Error).message;
      }
      throw new Error('expected VB_USAGE');
    };
    expect(serveTlsOf({ 'require-client-cert': false })).toBeUndefined();
    expect(usage({ 'tls-cert': pki.files.serverCert, 'require-client-cert': false })).toMatch(
      /--tls-cert and --tls-key/,
    );
    expect(usage({ 'tls-ca': pki.files.ca, 'require-client-cert': false })).toMatch(/need --tls-cert/);
    expect(
      usage({ 'tls-cert': pki.files.serverCert, 'tls-key': pki.files.serverKey, 'require-client-cert': true }),
    ).toMatch(/--require-client-cert needs --tls-ca/);
    expect(
      usage({ 'tls-cert': '/nonexistent/cert.pem', 'tls-key': pki.files.serverKey, 'require-client-cert': false }),
    ).toMatch(/^--tls-cert: cannot read '\/nonexistent\/cert\.pem': ENOENT/);
    expect(
      serveTlsOf({
        'tls-cert': pki.files.serverCert,
        'tls-key': pki.files.serverKey,
        'tls-ca': pki.files.ca,
        'require-client-cert': true,
      }),
    ).toMatchObject({ requireClientCert: true });
  });

  it('serves both halves over mutual TLS with the token from VESPA_BULK_SIM_TOKEN', async () => {
    const token = 'serve-cli-token-42';
    const child = spawn(
      process.execPath,
      [
        ...cliArgs(),
        'serve',
        '--port',
        '0',
        '--config-port',
        '0',
        '--tls-cert',
        pki.files.serverCert,
        '--tls-key',
        pki.files.serverKey,
        '--tls-ca',
        pki.files.ca,
        '--require-client-cert',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, VESPA_BULK_SIM_TOKEN: token } },
    );
    try {
      let stderr = '';
      const urls = await new Promise<{ documents: string; config: string }>((resolve, reject) => {
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
          const d = /document interface: (https:\/\/\S+?)\/document\/v1\//.exec(stderr);
          const c = /config server: +(https:\/\/\S+?)\/application\/v2\//.exec(stderr);
          if (d && c && /faults:/.test(stderr)) resolve({ documents: d[1], config: c[1] });
        });
        child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
      });
      expect(stderr).not.toContain(token);
      const tls = { ca: pki.pem.ca, cert: pki.pem.clientCert, key: pki.pem.clientKey };
      expect((await undiciRequest(`${urls.documents}/document/v1/ns/music/docid/a`, tls)).status).toBe(401);
      expect(
        (
          await undiciRequest(`${urls.documents}/document/v1/ns/music/docid/a`, {
            ...tls,
            headers: { authorization: `Bearer ${token}` },
          })
        ).status,
      ).toBe(404);
      expect(
        (
          await undiciRequest(`${urls.config}/application/v2/tenant/default/application/`, {
            ...tls,
            headers: { authorization: `Bearer ${token}` },
          })
        ).status,
      ).toBe(200);
      await expect(undiciRequest(`${urls.documents}/state/v1/health`, { ca: pki.pem.ca })).rejects.toThrow();
      // A service manager's stop: the simulator closes and exits 143, as every command does after SIGTERM.
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      expect((await exited)[0]).toBe(143);
    } finally {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        await exited;
      }
    }
  });
});
