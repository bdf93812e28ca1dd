import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yargs from 'yargs';
import { securityFromArgs, withSecurityOptions } from '../../src/cli/security-options.js';
import { isVespaBulkError } from '../../src/core/errors.js';
import {
  authHeaders,
  connectOptions,
  readTlsMaterial,
  redact,
  secretsOf,
  securityHeaders,
} from '../../src/http/tls.js';
import { securityFromEnv } from '../../src/cli/security-options.js';
import { makeTestPki, type TestPki } from '../support/certs.js';

let pki: TestPki;
beforeAll(() => {
  pki = makeTestPki();
});
afterAll(() => pki.cleanup());

function usageError(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    expect(isVespaBulkError(err, 'VB_USAGE')).toBe(true);
    return (err as Error).message;
  }
  throw new Error('expected a VB_USAGE error');
}

describe('securityFromEnv', () => {
  it('reads the VESPA_BULK_* variables before the official CLI ones, and ignores empty values', () => {
    expect(
      securityFromEnv({
        VESPA_BULK_CA: '/a/ca.pem',
        VESPA_CLI_DATA_PLANE_CA_CERT_FILE: '/b/ca.pem',
        VESPA_CLI_DATA_PLANE_CERT_FILE: '/b/cert.pem',
        VESPA_BULK_KEY: '',
        VESPA_CLI_DATA_PLANE_KEY_FILE: '/b/key.pem',
        VESPA_CLI_DATA_PLANE_TOKEN: 'tok-from-cli',
      }),
    ).toEqual({ ca: '/a/ca.pem', cert: '/b/cert.pem', key: '/b/key.pem', token: 'tok-from-cli' });
    expect(securityFromEnv({})).toEqual({});
  });
});

describe('securityFromArgs', () => {
  it('lets a flag win over its environment variable', () => {
    const env = { VESPA_BULK_TOKEN: 'env-token', VESPA_BULK_CA: '/env/ca.pem' };
    expect(securityFromArgs({ token: 'flag-token' }, {}, env)).toEqual({ ca: '/env/ca.pem', token: 'flag-token' });
    expect(securityFromArgs({}, {}, env)).toEqual({ ca: '/env/ca.pem', token: 'env-token' });
  });

  it('shows the variables but never their values in --help', async () => {
    process.env.VESPA_BULK_TOKEN = 'help-secret-123456';
    try {
      const help = await withSecurityOptions(yargs([])).getHelp();
      expect(help).toMatch(/--token[\s\S]*VESPA_BULK_TOKEN/);
      expect(help).not.toContain('help-secret-123456');
    } finally {
      delete process.env.VESPA_BULK_TOKEN;
    }
  });

  it('refuses a token with spaces and a token together with an Authorization header, without echoing them', () => {
    expect(usageError(() => securityFromArgs({ token: 'Bearer s3cret-value' }, {}, {}))).not.toContain('s3cret-value');
    expect(usageError(() => securityFromArgs({ token: 'abcd1234' }, { authorization: 'Bearer other' }, {}))).toMatch(
      /--token.*Authorization/,
    );
  });
});

describe('TLS material', () => {
  it('reads files into connect options for undici', () => {
    const options = connectOptions({ ca: pki.files.ca, cert: pki.files.clientCert, key: pki.files.clientKey }) as {
      ca: Buffer;
      cert: Buffer;
      key: Buffer;
      servername?: string;
    };
    expect(options.ca.equals(pki.pem.ca)).toBe(true);
    expect(options.cert.equals(pki.pem.clientCert)).toBe(true);
    expect(options.key.equals(pki.pem.clientKey)).toBe(true);
    expect(options.servername).toBeUndefined();
    expect(connectOptions({}, 'vespa.example')).toEqual({ servername: 'vespa.example' });
  });

  it('takes inline PEM as the official CLI variables carry it, and never echoes it in errors', () => {
    const pem = pki.pem.clientKey.toString();
    expect(readTlsMaterial({ cert: pki.pem.clientCert.toString(), key: pem }).key!.toString()).toBe(pem);
    const message = usageError(() =>
      readTlsMaterial({ cert: pki.pem.clientCert.toString(), key: pki.pem.otherClientKey.toString() }),
    );
    expect(message).toContain('(inline PEM)');
    expect(message).not.toContain('PRIVATE KEY');
  });

  it('names the flag and the file it cannot read, or that does not load', () => {
    const missing = join(pki.dir, 'nope.pem');
    expect(usageError(() => readTlsMaterial({ ca: missing }))).toMatch(
      new RegExp(`^--ca .*'${missing.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}': ENOENT`),
    );
    expect(usageError(() => readTlsMaterial({ cert: missing, key: pki.files.clientKey }))).toMatch(
      /^--cert .*nope\.pem/,
    );
    expect(usageError(() => readTlsMaterial({ cert: pki.files.clientCert }))).toMatch(/--cert needs --key/);
    expect(usageError(() => readTlsMaterial({ key: pki.files.clientKey }))).toMatch(/--key needs --cert/);
    const garbage = join(pki.dir, 'garbage.pem');
    writeFileSync(garbage, 'not a certificate');
    expect(usageError(() => readTlsMaterial({ ca: garbage }))).toMatch(/--ca .*garbage\.pem.*not a PEM/);
    expect(usageError(() => readTlsMaterial({ cert: pki.files.clientCert, key: pki.files.otherClientKey }))).toMatch(
      /--cert .*client\.pem.* \/ --key .*other-client\.key/,
    );
  });
});

describe('headers and masking', () => {
  it('sends the token as a bearer header that wins over an extra one', () => {
    expect(authHeaders({ token: 'abc123' })).toEqual({ authorization: 'Bearer abc123' });
    expect(authHeaders({})).toEqual({});
    expect(securityHeaders({ token: 'abc123', headers: { authorization: 'Basic x', 'x-tenant': 't' } })).toEqual({
      authorization: 'Bearer abc123',
      'x-tenant': 't',
    });
  });

  it('redacts the token, secret header values and URL passwords', () => {
    const security = {
      token: 'tok-123456',
      headers: { 'x-api-key': 'key-987654', authorization: 'Basic dXNlcjpwYXNz', 'x-trace': 'visible' },
    };
    const secrets = secretsOf(security);
    expect(secrets).toEqual(expect.arrayContaining(['tok-123456', 'key-987654', 'Basic dXNlcjpwYXNz', 'dXNlcjpwYXNz']));
    expect(secrets).not.toContain('visible');
    const text =
      'sent Bearer tok-123456 with key-987654 and dXNlcjpwYXNz to https://user:hunter22@host:1/x; trace visible';
    expect(redact(text, secrets)).toBe('sent Bearer *** with *** and *** to https://user:***@host:1/x; trace visible');
    // Short values are not secrets worth garbling text for.
    expect(redact('a b c', ['a'])).toBe('a b c');
  });
});
