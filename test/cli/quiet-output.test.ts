import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { runCli } from '../faults/harness.js';
import { tempDir } from '../support/temp-dir.js';
import { runInProcess } from '../support/in-process-cli.js';

/**
 * What a user sees of the everyday commands (issue 31): stdout one short summary, one line per failure, a hint where
 * the mistake is plain, no file nobody asked for.
 */
let sim: DocumentServer;
let proxy: Server;
let proxyUrl: string;
let closedUrl: string;
const dir = tempDir('vb-quiet-output-');

beforeAll(async () => {
  sim = await startDocumentServer({ port: 0 });
  sim.store.seed(Array.from({ length: 30 }, (_, i) => ({ id: `id:ns:music::${i}`, fields: { title: `t${i}` } })));
  // A proxy in the service's place that answers every request with its HTML error page.
  proxy = createServer((_req, res) => {
    res.writeHead(502, { 'content-type': 'text/html' });
    res.end(
      '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n',
    );
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  closedUrl = `http://127.0.0.1:${(closed.address() as { port: number }).port}`;
  await new Promise<void>((r) => closed.close(() => r()));
});

afterAll(async () => {
  await sim.close();
  await new Promise<void>((r) => proxy.close(() => r()));
  dir.cleanup();
});

/** A fresh working directory, to see what a command leaves in it. */
function cwd(name: string, files: Record<string, string> = {}): string {
  const d = join(dir.dir, name);
  mkdirSync(d);
  for (const [f, text] of Object.entries(files)) writeFileSync(join(d, f), text);
  return d;
}

describe('stdout is data or one summary', () => {
  it('visit -o FILE: one short object without the slices; --verbose lists them', async () => {
    const here = cwd('visit');
    const run = await runInProcess([
      'visit',
      'ns/music',
      '-t',
      sim.url,
      '--slices',
      '8',
      '-o',
      join(here, 'out.jsonl'),
      '--quiet',
    ]);
    expect(run.code).toBe(0);
    const summary = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(summary['visit.document.count']).toBe(30);
    expect(summary['visit.slice.count']).toBe(8);
    expect(summary['visit.slice.failed.count']).toBe(0);
    expect(summary).not.toHaveProperty('slices');
    expect(run.stdout.split('\n').length).toBeLessThan(30);
    expect(String(summary['visit.seconds'])).toMatch(/^\d+(\.\d{1,3})?$/);
    const verbose = await runInProcess([
      'visit',
      'ns/music',
      '-t',
      sim.url,
      '--slices',
      '8',
      '-o',
      join(here, 'out2.jsonl'),
      '--quiet',
      '--verbose',
    ]);
    expect((JSON.parse(verbose.stdout) as { slices: unknown[] }).slices).toHaveLength(8);
  });
});

describe('the small things', () => {
  it('an empty input says so, exit 0', async () => {
    const run = await runCli(['feed', '-t', sim.url, 'empty.jsonl'], { cwd: cwd('empty', { 'empty.jsonl': '' }) });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('nothing to feed: no operations in empty.jsonl');
  });

  it('a feed that reached nothing leaves no checkpoint nobody asked for, and says to run it again', async () => {
    const here = cwd('closed', { 'in.jsonl': '{"put":"id:ns:music::1","fields":{"title":"a"}}\n' });
    const run = await runCli(['feed', '-t', closedUrl, 'in.jsonl', '-c', 'never'], { cwd: here });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('Nothing was fed: run the same command again.');
    expect(readdirSync(here).filter((f) => f.startsWith('vespa-bulk-checkpoint-'))).toEqual([]);
    // Nothing before 100% of the bytes "read": no percentage where nothing was read.
    expect(run.stderr).not.toMatch(/100\.0% of 0\.0\/0\.0 MB/);
  });

  it('https:// to a plain-HTTP server: the http:// URL to give instead', async () => {
    const https = sim.url.replace('http://', 'https://');
    const here = cwd('tls', { 'in.jsonl': '{"put":"id:ns:music::1","fields":{"title":"a"}}\n' });
    const fed = await runCli(['feed', '-t', https, 'in.jsonl', '-c', 'never'], { cwd: here });
    expect(fed.code).toBe(1);
    expect(fed.stderr).toContain(`Run it again with --target ${sim.url}.`);
    const got = await runInProcess(['get', 'id:ns:music::1', '-t', https, '-c', 'never']);
    expect(got.code).toBe(1);
    expect(got.stderr).toMatch(/Run it again with (an http:\/\/ --target|--target http:\/\/)/);
  });

  it("get: no protocol line unless --verbose; a proxy's HTML page in one line, whole with --verbose", async () => {
    const got = await runInProcess(['get', 'id:ns:music::1', '-t', sim.url, '-c', 'never']);
    expect(got.code).toBe(0);
    expect(got.stderr).not.toContain('speaking');
    const verbose = await runInProcess(['get', 'id:ns:music::1', '-t', sim.url, '-v', '-c', 'never']);
    expect(verbose.stderr).toContain('speaking HTTP');
    const page = await runInProcess(['get', 'id:ns:music::1', '-t', proxyUrl, '-c', 'never']);
    expect(page.code).toBe(1);
    expect(page.stderr).toBe('vespa-bulk: id:ns:music::1: HTTP 502 Bad Gateway\n');
    const whole = await runInProcess(['get', 'id:ns:music::1', '-t', proxyUrl, '-v', '-c', 'never']);
    expect(whole.stderr).toContain('<center>nginx</center>');
  });
});
