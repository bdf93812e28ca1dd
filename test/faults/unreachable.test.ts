import type { FeedOperationObject } from '../../src/feed/source.js';
import { createServer } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Feeder } from '../../src/feed/feeder.js';
import { feed } from '../../src/feed/feeder.js';
import { visit } from '../../src/visit/visit.js';
import type { VisitMessage } from '../../src/visit/options.js';
import type { VisitRun } from '../../src/visit/visitor.js';
import { connectOptions } from '../../src/http/tls.js';
import { isVespaBulkError } from '../../src/core/errors.js';
import {
  startDocumentServer,
  DocumentStore,
  type DocumentServer,
} from '../../src/simulator/document-api/document-server.js';
import { makeTestPki, type TestPki } from '../support/certs.js';
import { expectSpoke, overProtocols } from '../support/protocols.js';
import { mixedOperations, runCli, tempDir, writeJsonl } from './harness.js';

/**
 * Nothing answering at the start (a closed port, an unknown host, a TLS handshake that fails) ends a feed or
 * a visit at once with VB_UNREACHABLE, every operation still accounted for; an outage after the first answer
 * is retried as before. Each over each protocol. "At once" is asserted as no retry made, not on a clock.
 */

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

let pki: TestPki;
let tlsServer: DocumentServer;
const endpoints: Record<string, { url: string; options?: () => Parameters<typeof connectOptions>[0] }> = {};

beforeAll(async () => {
  pki = makeTestPki();
  tlsServer = await startDocumentServer({
    port: 0,
    tls: { cert: pki.pem.serverCert, key: pki.pem.serverKey, ca: pki.pem.ca, requireClientCert: true },
  });
  endpoints['closed port'] = { url: `http://127.0.0.1:${await closedPort()}` };
  // .invalid never resolves (RFC 6761).
  endpoints['unknown host'] = { url: 'http://vespa-bulk-test.invalid:8080' };
  // The server's certificate is from a CA the client was not given.
  endpoints['untrusted server certificate'] = { url: tlsServer.url };
  // Trusted server, but the client has no certificate where the server demands one.
  endpoints['client certificate refused'] = {
    url: tlsServer.url,
    options: () => ({ ca: pki.files.ca, cert: pki.files.otherClientCert, key: pki.files.otherClientKey }),
  };
  // Plain HTTP spoken to by TLS.
  endpoints['https to a plain port'] = {
    url: `https://127.0.0.1:${new URL(tlsServer.url).port === '' ? 1 : (await plainServer()).port}`,
  };
});

let plain: DocumentServer | undefined;
async function plainServer(): Promise<DocumentServer> {
  plain ??= await startDocumentServer({ port: 0 });
  return plain;
}

afterAll(async () => {
  await tlsServer?.close();
  await plain?.close();
  pki?.cleanup();
});

const cases = [
  'closed port',
  'unknown host',
  'untrusted server certificate',
  'client certificate refused',
  'https to a plain port',
];

describe.each(overProtocols)('fail fast over $protocol: nothing answers at the start', ({ protocol }) => {
  for (const name of cases) {
    it(`feed (${name}): VB_UNREACHABLE at once, every operation abandoned before the checkpoint`, async () => {
      const { url, options } = endpoints[name];
      const { dir, cleanup } = tempDir('vb-failfast-');
      try {
        const ops = mixedOperations(500, 'ff');
        const input = writeJsonl(join(dir, 'in.jsonl'), ops);
        const outcome = await new Feeder({
          endpoint: url,
          protocol,
          ...(options !== undefined && { tls: connectOptions(options()) }),
          failures: join(dir, 'failures.jsonl'),
          checkpoint: join(dir, 'cp.json'),
        }).run(input);
        expect(outcome.stopped).toBe('unreachable');
        // At once: no operation waited out a backoff to be sent again.
        expect(outcome.summary.retries).toBe(0);
        expect(outcome.unreachable?.code).toBe('VB_UNREACHABLE');
        expect(outcome.unreachable?.message).toContain(new URL(url).host);
        // Nothing succeeded, nothing failed: all that was read is before the checkpoint, which starts at line 1.
        expect(outcome.summary.ok).toBe(0);
        expect(outcome.summary.errors).toBe(0);
        expect(outcome.summary.abandoned).toBe(outcome.summary.operations);
        expect(existsSync(join(dir, 'failures.jsonl'))).toBe(false);
        const checkpoint = JSON.parse(readFileSync(join(dir, 'cp.json'), 'utf8'));
        expect(checkpoint.position).toEqual({ input: 0, offset: 0, line: 1 });
        expect(checkpoint.reason).toBe('unreachable');
      } finally {
        cleanup();
      }
    });

    it(`visit (${name}): VB_UNREACHABLE at once`, async () => {
      const { url, options } = endpoints[name];
      let error: unknown;
      let run: VisitRun | undefined;
      const retries: VisitMessage[] = [];
      try {
        const visiting = visit(
          {
            endpoint: url,
            protocol,
            slices: 4,
            cluster: 'content',
            onMessage: (m) => retries.push(m),
            ...(options !== undefined && { tls: connectOptions(options()) }),
          },
          { onStart: (r) => (run = r) },
        );
        for await (const _ of visiting) {
          // nothing can come
        }
      } catch (err) {
        error = err;
      }
      expect(isVespaBulkError(error, 'VB_UNREACHABLE'), String(error)).toBe(true);
      // At once: no slice waited out a backoff to ask again.
      expect(run!.slices.length).toBeGreaterThan(0);
      expect(run!.slices.map((s) => s.retries)).toEqual(run!.slices.map(() => 0));
      expect(retries).toEqual([]);
      expect((error as Error).message).toContain(new URL(url).host);
    });
  }

  it('feed() as a library rejects with VB_UNREACHABLE', async () => {
    const url = endpoints['closed port'].url;
    await expect(
      feed([{ put: 'id:ns:music::x', fields: {} }], { endpoint: url, protocol, failures: false, checkpoint: false }),
    ).rejects.toMatchObject({ code: 'VB_UNREACHABLE' });
  });
});

describe('fail fast in the CLI', () => {
  it('the CLI: feed and visit exit 1 with the endpoint, the cause, --target and --wait in the message', async () => {
    const { dir, cleanup } = tempDir('vb-failfast-cli-');
    try {
      writeJsonl(join(dir, 'in.jsonl'), mixedOperations(100, 'c'));
      const url = endpoints['closed port'].url;
      const fed = await runCli(['feed', '-t', url, '--checkpoint', 'cp.json', 'in.jsonl'], { cwd: dir });
      expect(fed.code).toBe(1);
      expect(fed.stderr).toContain(`nothing answers at ${url}`);
      expect(fed.stderr).toMatch(/connection refused/);
      expect(fed.stderr).toMatch(/--target/);
      expect(fed.stderr).toMatch(/--wait/);
      expect(fed.stderr).toMatch(/--resume cp\.json/);
      expect(JSON.parse(fed.stdout)['feeder.abandoned.count']).toBe(JSON.parse(fed.stdout)['feeder.operation.count']);

      const visited = await runCli(
        ['visit', 'ns/music', '-t', 'http://vespa-bulk-test.invalid:8080', '--slices', '2'],
        { cwd: dir },
      );
      expect(visited.code).toBe(1);
      expect(visited.stdout).toBe('');
      expect(visited.stderr).toContain('nothing answers at http://vespa-bulk-test.invalid:8080');
      expect(visited.stderr).toMatch(/unknown host|could not be resolved/);
      expect(visited.stderr).toMatch(/--target/);
      expect(visited.stderr).toMatch(/--wait/);
    } finally {
      cleanup();
    }
  });
});

describe.each(overProtocols)('an outage after the first answer keeps the backoff over $protocol', ({ protocol }) => {
  it('feed: the simulator closed mid-feed and restarted on the same port: the feed completes', async () => {
    const store = new DocumentStore(['content']);
    let server = await startDocumentServer({ port: 0, store, faults: { maxOpsPerSecond: 3000 } });
    const port = server.port;
    const ops = mixedOperations(3000, 'o');
    let restarted = false;
    const feeding = feed(ops as FeedOperationObject[], {
      endpoint: server.url,
      protocol,
      failures: false,
      checkpoint: false,
      onResult: (r) => {
        if (!restarted && r.ok && store.size() >= 500) {
          restarted = true;
          void (async () => {
            await server.close();
            await new Promise((r) => setTimeout(r, 1500));
            server = await startDocumentServer({ port, store, faults: { maxOpsPerSecond: 3000 } });
          })();
        }
      },
    });
    const summary = await feeding;
    await new Promise((r) => setTimeout(r, 100));
    await server.close();
    expect(restarted).toBe(true);
    expectSpoke(summary, protocol);
    expect(summary.exceptions).toBeGreaterThan(0);
    expect(summary.ok).toBe(ops.length);
    expect(summary.errors).toBe(0);
  }, 60_000);
});
