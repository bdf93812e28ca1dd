import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Throwaway PKI for tests, made at run time with the openssl binary (EC P-256 keys: fast): a CA, a server
 * certificate for 127.0.0.1, localhost, vespa.test and *.vespa.test (names only a test proxy resolves), a client certificate signed by the CA, and a client certificate
 * from another CA. Files live in a temp dir until `cleanup()`.
 */
export interface TestPki {
  dir: string;
  /** Paths of the PEM files. */
  files: {
    ca: string;
    serverCert: string;
    serverKey: string;
    clientCert: string;
    clientKey: string;
    otherCa: string;
    otherClientCert: string;
    otherClientKey: string;
  };
  /** The same, read. */
  pem: {
    ca: Buffer;
    serverCert: Buffer;
    serverKey: Buffer;
    clientCert: Buffer;
    clientKey: Buffer;
    otherCa: Buffer;
    otherClientCert: Buffer;
    otherClientKey: Buffer;
  };
  cleanup(): void;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'], timeout: 20_000 });
}

const keyArgs = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

function makeCa(dir: string, name: string): void {
  openssl(dir, [
    'req',
    '-x509',
    ...keyArgs,
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.pem`,
    '-days',
    '2',
    '-subj',
    `/CN=${name}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
}

function makeLeaf(dir: string, name: string, ca: string, extensions: string): void {
  openssl(dir, ['req', ...keyArgs, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`]);
  writeFileSync(join(dir, `${name}.ext`), extensions);
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    `${ca}.pem`,
    '-CAkey',
    `${ca}.key`,
    '-CAcreateserial',
    '-out',
    `${name}.pem`,
    '-days',
    '2',
    '-extfile',
    `${name}.ext`,
  ]);
}

export function makeTestPki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'vespa-bulk-pki-'));
  try {
    makeCa(dir, 'ca');
    makeCa(dir, 'other-ca');
    makeLeaf(
      dir,
      'server',
      'ca',
      'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:vespa.test,DNS:*.vespa.test\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n',
    );
    makeLeaf(dir, 'client', 'ca', 'extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\n');
    makeLeaf(dir, 'other-client', 'other-ca', 'extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\n');
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const files = {
    ca: join(dir, 'ca.pem'),
    serverCert: join(dir, 'server.pem'),
    serverKey: join(dir, 'server.key'),
    clientCert: join(dir, 'client.pem'),
    clientKey: join(dir, 'client.key'),
    otherCa: join(dir, 'other-ca.pem'),
    otherClientCert: join(dir, 'other-client.pem'),
    otherClientKey: join(dir, 'other-client.key'),
  };
  const pem = Object.fromEntries(Object.entries(files).map(([k, f]) => [k, readFileSync(f)])) as TestPki['pem'];
  return { dir, files, pem, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A client key pair whose certificate expired in 2020 (signed by a throwaway CA with `openssl ca`, which, unlike
 * `req -days`, takes explicit start and end dates). Paths of the PEM files in `dir`.
 */
export function makeExpiredClientCert(dir: string): { cert: string; key: string } {
  openssl(dir, [
    'req',
    '-x509',
    ...keyArgs,
    '-keyout',
    'expired-ca.key',
    '-out',
    'expired-ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=expired-ca',
  ]);
  openssl(dir, ['req', '-new', ...keyArgs, '-keyout', 'expired.key', '-out', 'expired.csr', '-subj', '/CN=expired']);
  writeFileSync(
    join(dir, 'expired-ca.cnf'),
    '[ca]\ndefault_ca=c\n[c]\ndatabase=expired-index\nnew_certs_dir=.\nserial=expired-serial\ndefault_md=sha256\npolicy=p\n[p]\nCN=supplied\n',
  );
  writeFileSync(join(dir, 'expired-index'), '');
  writeFileSync(join(dir, 'expired-serial'), '01\n');
  openssl(dir, [
    'ca',
    '-batch',
    '-config',
    'expired-ca.cnf',
    '-cert',
    'expired-ca.pem',
    '-keyfile',
    'expired-ca.key',
    '-in',
    'expired.csr',
    '-out',
    'expired.pem',
    '-startdate',
    '20200101000000Z',
    '-enddate',
    '20200102000000Z',
    '-notext',
  ]);
  return { cert: join(dir, 'expired.pem'), key: join(dir, 'expired.key') };
}
