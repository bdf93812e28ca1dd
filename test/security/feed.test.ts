import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { makeTestPki, type TestPki } from '../support/certs.js';
import { failureReasons, runCli, tempDir, writeJsonl, type Op } from '../faults/harness.js';

/**
 * `feed` over HTTPS: mutual TLS and a bearer token from flags or from the environment, and what a refusal looks
 * like: 401/403 are final at once (one attempt each) and stop the feed, and the token shows nowhere, not in stderr, not in the
 * summary, not in the failure output.
 */
describe('feed over TLS with a token', () => {
  const token = 'vb-feed-token-3e81d2a7';
  let pki: TestPki;
  let server: DocumentServer;
  let dir: string;
  let cleanup: () => void;
  const ops: Op[] = Array.from({ length: 40 }, (_, i) => ({ put: `id:ns:music::tls${i}`, fields: { title: `t${i}` } }));

  beforeAll(async () => {
    pki = makeTestPki();
    server = await startDocumentServer({
      port: 0,
      tls: { cert: pki.pem.serverCert, key: pki.pem.serverKey, ca: pki.pem.ca, requireClientCert: true },
      token,
    });
    ({ dir, cleanup } = tempDir('vb-feed-tls-'));
    writeJsonl(join(dir, 'in.jsonl'), ops);
  });
  afterAll(async () => {
    await server?.close();
    cleanup?.();
    pki?.cleanup();
  });

  /** Every file the feed left in `dir` (failure output, reasons, checkpoints), concatenated. */
  const leftovers = (): string =>
    readdirSync(dir)
      .filter((f) => f.startsWith('vespa-bulk-'))
      .map((f) => readFileSync(join(dir, f), 'utf8'))
      .join('\n');

  it('feeds with --ca/--cert/--key from the environment and the token from VESPA_BULK_TOKEN', async () => {
    expect(server.url).toMatch(/^https:/);
    const r = await runCli(['feed', 'in.jsonl', '-t', server.url, '--quiet'], {
      cwd: dir,
      env: {
        VESPA_BULK_CA: pki.files.ca,
        VESPA_BULK_CERT: pki.files.clientCert,
        VESPA_BULK_KEY: pki.files.clientKey,
        VESPA_BULK_TOKEN: token,
      },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ 'feeder.ok.count': ops.length, 'feeder.error.count': 0 });
    for (const op of ops) expect(server.store.get(op.put as string)?.fields).toEqual(op.fields);
    expect(r.stdout + r.stderr).not.toContain(token);
  });

  it('a wrong token: 403 stops the feed at once with a checkpoint; resumed with the right token, nothing is lost', async () => {
    const wrong = `${token}-wrong`;
    const failures = join(dir, 'wrong.jsonl');
    const checkpoint = join(dir, 'vespa-bulk-checkpoint-wrong.json');
    const tls = ['--ca', pki.files.ca, '--cert', pki.files.clientCert, '--key', pki.files.clientKey];
    server.store.clear();
    const r = await runCli(
      [
        'feed',
        'in.jsonl',
        '-t',
        server.url,
        ...tls,
        '--token',
        wrong,
        '--verbose',
        '--failures',
        failures,
        '--checkpoint',
        checkpoint,
      ],
      { cwd: dir },
    );
    expect(r.code).toBe(1);
    const summary = JSON.parse(r.stdout);
    expect(summary['feeder.ok.count']).toBe(0);
    // Refused ones are in the failure output after one attempt each; the rest were never finished, and the
    // checkpoint covers them: together, the whole input.
    expect(summary['feeder.error.count']).toBeGreaterThanOrEqual(1);
    expect(summary['feeder.error.count'] + summary['feeder.abandoned.count']).toBe(ops.length);
    expect(Object.keys(summary['http.response.code.counts'])).toEqual(['403']);
    expect(r.stderr).toMatch(/feed stopped: the service answered 403: credentials refused: check --token/);
    expect(r.stderr).toContain(`--resume ${checkpoint}`);
    const reasons = failureReasons(failures);
    expect(reasons).toHaveLength(summary['feeder.error.count']);
    for (const reason of reasons) expect(reason).toMatchObject({ status: 403, attempts: 1 });
    for (const text of [r.stdout, r.stderr, leftovers()]) {
      expect(text).not.toContain(wrong);
      expect(text).not.toContain(token);
    }

    const resumed = await runCli(['feed', 'in.jsonl', '-t', server.url, ...tls, '--resume', checkpoint, '--quiet'], {
      cwd: dir,
      env: { VESPA_BULK_TOKEN: token },
    });
    const refed = await runCli(['feed', 'wrong.jsonl', '-t', server.url, ...tls, '--quiet'], {
      cwd: dir,
      env: { VESPA_BULK_TOKEN: token },
    });
    // The resumed feed's summary is the whole feed's: the 403s of its first run are in it (and in the failure
    // output, fed again below), so it exits 1 as that run did; this run itself failed nothing.
    expect(resumed.code, resumed.stderr).toBe(1);
    const whole = JSON.parse(resumed.stdout);
    expect(whole['feeder.error.count']).toBe(reasons.length);
    expect(whole['feeder.run.error.count']).toBe(0);
    expect(whole['feeder.ok.count'] + whole['feeder.error.count']).toBe(ops.length);
    expect(refed.code, refed.stderr).toBe(0);
    expect(server.store.size()).toBe(ops.length);
    for (const op of ops) expect(server.store.get(op.put as string)?.fields).toEqual(op.fields);
  });

  it('no token: 401 stops the feed and says to check --token; no client certificate: a TLS failure, nothing written', async () => {
    const none = await runCli(
      [
        'feed',
        'in.jsonl',
        '-t',
        server.url,
        '--ca',
        pki.files.ca,
        '--cert',
        pki.files.clientCert,
        '--key',
        pki.files.clientKey,
        '--failures',
        join(dir, 'none.jsonl'),
        '--quiet',
      ],
      { cwd: dir },
    );
    expect(none.code).toBe(1);
    const summary = JSON.parse(none.stdout);
    expect(summary['feeder.ok.count']).toBe(0);
    expect(Object.keys(summary['http.response.code.counts'])).toEqual(['401']);
    expect(summary['feeder.error.count'] + summary['feeder.abandoned.count']).toBe(ops.length);
    expect(none.stderr).toMatch(/the service answered 401: credentials missing: check --token/);
    for (const reason of failureReasons(join(dir, 'none.jsonl')))
      expect(reason).toMatchObject({ status: 401, attempts: 1 });

    const before = server.store.all().length;
    const anonymous = await runCli(
      [
        'feed',
        'in.jsonl',
        '-t',
        server.url,
        '--ca',
        pki.files.ca,
        '--token',
        token,
        '--max-failure-seconds',
        '2',
        '--quiet',
      ],
      { cwd: dir, killAfterMs: 40_000 },
    );
    expect(anonymous.code).toBe(1);
    expect(JSON.parse(anonymous.stdout)['feeder.ok.count']).toBe(0);
    expect(anonymous.stdout + anonymous.stderr + leftovers()).not.toContain(token);
    expect(server.store.all().length).toBe(before);
  });
});
