import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nextProbeDelayMs, waitForEndpoint } from '../../src/http/wait-for-endpoint.js';
import { startDocumentServer } from '../../src/simulator/document-api/document-server.js';
import { mixedOperations, runCli, tempDir, writeJsonl } from '../faults/harness.js';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('nextProbeDelayMs', () => {
  it('probes every interval, the last pause cut to end at the deadline, none after it', () => {
    expect(nextProbeDelayMs(0, 30_000, 2_000)).toBe(2_000);
    expect(nextProbeDelayMs(29_000, 30_000, 2_000)).toBe(1_000);
    expect(nextProbeDelayMs(30_000, 30_000, 2_000)).toBeUndefined();
    expect(nextProbeDelayMs(5, 0, 2_000)).toBeUndefined();
  });
});

describe('waitForEndpoint', () => {
  it('nothing listening and no time to wait: VB_UNREACHABLE naming the endpoint and the cause', async () => {
    const port = await freePort();
    await expect(waitForEndpoint({ endpoint: `http://127.0.0.1:${port}`, waitMs: 0 })).rejects.toMatchObject({
      code: 'VB_UNREACHABLE',
      message: expect.stringMatching(new RegExp(`127\\.0\\.0\\.1:${port}: connection refused`)),
    });
  });

  it('a simulator that comes up during the wait: resolves once it answers /ApplicationStatus', async () => {
    const port = await freePort();
    const retries: string[] = [];
    const starting = new Promise<Awaited<ReturnType<typeof startDocumentServer>>>((resolve) =>
      setTimeout(() => resolve(startDocumentServer({ port })), 700),
    );
    const answer = await waitForEndpoint({
      endpoint: `http://127.0.0.1:${port}`,
      waitMs: 20_000,
      intervalMs: 100,
      onRetry: (cause) => retries.push(cause),
    });
    const server = await starting;
    await server.close();
    expect(answer.status).toBe(200);
    expect(retries.length).toBeGreaterThan(0);
    expect(retries[0]).toMatch(/connection refused/);
  });

  it('a service answering 503 all along is not up: VB_UNREACHABLE after the wait, saying what it answered', async () => {
    const paths: string[] = [];
    const server = createHttpServer((req, res) => {
      paths.push(req.url ?? '');
      res.writeHead(503).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    try {
      await expect(
        waitForEndpoint({ endpoint: `http://127.0.0.1:${port}/prefix/`, waitMs: 2_000, intervalMs: 100 }),
      ).rejects.toMatchObject({
        code: 'VB_UNREACHABLE',
        message: expect.stringContaining('it answered 503'),
      });
      expect(paths.length).toBeGreaterThan(1);
      expect(new Set(paths)).toEqual(new Set(['/prefix/ApplicationStatus']));
    } finally {
      server.close();
    }
  });

  it('feed --wait: the simulator comes up after the feed started, every operation succeeds', async () => {
    const port = await freePort();
    const { dir, cleanup } = tempDir('vb-wait-');
    try {
      const ops = mixedOperations(200, 'w');
      writeJsonl(join(dir, 'in.jsonl'), ops);
      const starting = new Promise<Awaited<ReturnType<typeof startDocumentServer>>>((resolve) =>
        setTimeout(() => resolve(startDocumentServer({ port })), 2_500),
      );
      const run = await runCli(['feed', '-t', `http://127.0.0.1:${port}`, '--wait', '30', '--quiet', 'in.jsonl'], {
        cwd: dir,
      });
      const server = await starting;
      await server.close();
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toMatch(/waiting up to 30 s for http:\/\/127\.0\.0\.1:\d+ to answer/);
      expect(JSON.parse(run.stdout)['feeder.ok.count']).toBe(ops.length);
    } finally {
      cleanup();
    }
  }, 60_000);
});
