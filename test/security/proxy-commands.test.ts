import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { startConfigServer, type ConfigServer } from '../../src/simulator/config-server/config-server.js';
import { startSquid, type Squid } from '../support/squid.js';
import { sampleAppDir } from '../deploy/fixtures.js';
import { runCli, tempDir, type Op } from '../faults/harness.js';

/**
 * The commands beside feed and visit go through the proxy too: deploy to the config server, and a feed whose input
 * is a URL. Every host is `vespa.test`, which only the proxy resolves.
 */
describe('deploy and URL inputs through squid', () => {
  let squid: Squid;
  let documents: DocumentServer;
  let config: ConfigServer;
  let files: Server;
  let dir: string;
  let cleanup: () => void;
  const ops: Op[] = Array.from({ length: 40 }, (_, i) => ({ put: `id:url:music::d${i}`, fields: { n: i } }));
  const viaProxy = (url: string): string => url.replace('127.0.0.1', 'vespa.test');

  beforeAll(async () => {
    squid = await startSquid({ hosts: { 'vespa.test': '127.0.0.1' } });
    documents = await startDocumentServer({ port: 0 });
    config = await startConfigServer({ port: 0, convergeDelayMs: 10 });
    const body = ops.map((o) => JSON.stringify(o)).join('\n');
    files = createServer((_req, res) => res.end(body));
    await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
    ({ dir, cleanup } = tempDir('vb-proxy-commands-'));
  }, 180_000);
  afterAll(async () => {
    await new Promise((r) => files?.close(r));
    await config?.close();
    await documents?.close();
    await squid?.stop();
    cleanup?.();
  });

  it('deploy sends the package to the config server through the proxy', async () => {
    const r = await runCli(['deploy', sampleAppDir, '--config-url', viaProxy(config.url), '--proxy', squid.url], {
      cwd: dir,
      env: { VESPA_BULK_STATE_DIR: dir },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/Activated session \d+/);
    expect(await squid.waitForLog(/^POST http:\/\/vespa\.test:\d+\/application\/v2\/tenant\/default\//)).toBeDefined();
  });

  it('a feed reads its URL input through the proxy', async () => {
    const port = (files.address() as AddressInfo).port;
    const r = await runCli(
      ['feed', `http://vespa.test:${port}/in.jsonl`, '-t', viaProxy(documents.url), '--proxy', squid.url],
      { cwd: dir },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(documents.store.size()).toBe(ops.length);
    expect(await squid.waitForLog(new RegExp(`^GET http://vespa\\.test:${port}/in\\.jsonl 200`))).toBeDefined();
  });
});
