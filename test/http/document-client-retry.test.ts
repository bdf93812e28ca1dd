import { afterEach, describe, expect, it, vi } from 'vitest';
import { DocumentClient } from '../../src/http/document-client.js';
import { feed } from '../../src/feed/feeder.js';
import { isVespaBulkError } from '../../src/core/errors.js';
import { startDocumentServer } from '../../src/simulator/document-api/document-server.js';
import { startRecordingServer } from './recording-server.js';

/** A fast backoff: the tests are about which attempts are made, not how long the waits are. */
const fast = { baseDelayMs: 1, maxDelayMs: 4 };

/**
 * The waits the client's retry loop makes (its only timer of node:timers/promises), recorded and then waited as
 * they are: "no wait was made" is asserted on this list, not on a clock (the suite runs on busy machines).
 */
const { waits } = vi.hoisted(() => ({ waits: [] as number[] }));
vi.mock('node:timers/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:timers/promises')>();
  const recorded: typeof real.setTimeout = (delay, ...rest) => {
    waits.push(delay ?? 0);
    return real.setTimeout(delay, ...rest);
  };
  return { ...real, setTimeout: recorded };
});

describe('DocumentClient retries (loopback, the simulator with faults)', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });

  it('sends 429 and 503 again until the operation goes through', async () => {
    const server = await startDocumentServer({
      port: 0,
      faults: { errorRate: 0.5, errorStatuses: [429, 503], seed: 42 },
    });
    cleanups.push(() => server.close());
    const client = new DocumentClient({ endpoint: server.url, maxRetries: 20, retryPolicy: fast });
    cleanups.push(() => client.close());

    for (let i = 0; i < 20; i++) {
      const put = await client.put(`id:ns:music::d${i}`, { title: `t${i}` });
      expect(put.status).toBe(200);
      const got = await client.get(`id:ns:music::d${i}`);
      expect(got.status).toBe(200);
      expect(got.body.fields.title).toBe(`t${i}`);
    }
    const injected = server.faults.injected();
    // Both statuses were met, and every one of them was sent again.
    expect(injected['error-429']).toBeGreaterThan(0);
    expect(injected['error-503']).toBeGreaterThan(0);
  });

  it('gives up after maxRetries: the last 503 resolves, after maxRetries + 1 attempts', async () => {
    const server = await startDocumentServer({ port: 0, faults: { errorRate: 1, errorStatuses: [503] } });
    cleanups.push(() => server.close());
    const client = new DocumentClient({ endpoint: server.url, maxRetries: 3, retryPolicy: fast });
    cleanups.push(() => client.close());

    const res = await client.put('id:ns:music::x', { title: 'x' });
    expect(res.status).toBe(503);
    expect(server.faults.injected()['error-503']).toBe(4);
  });

  it('retries 429 four times by default, and not at all with maxRetries: 0', async () => {
    const server = await startDocumentServer({ port: 0, faults: { errorRate: 1, errorStatuses: [429] } });
    cleanups.push(() => server.close());
    const byDefault = new DocumentClient({ endpoint: server.url, retryPolicy: fast });
    cleanups.push(() => byDefault.close());
    expect((await byDefault.get('id:ns:music::x')).status).toBe(429);
    expect(server.faults.injected()['error-429']).toBe(5);

    const never = new DocumentClient({ endpoint: server.url, maxRetries: 0 });
    cleanups.push(() => never.close());
    expect((await never.remove('id:ns:music::x')).status).toBe(429);
    expect(server.faults.injected()['error-429']).toBe(6);
  });

  it('does not send other statuses again (404, 412 are answers)', async () => {
    const server = await startDocumentServer({ port: 0 });
    cleanups.push(() => server.close());
    const client = new DocumentClient({ endpoint: server.url, retryPolicy: fast });
    cleanups.push(() => client.close());
    expect((await client.get('id:ns:music::missing')).status).toBe(404);
    expect((await client.put('id:ns:music::missing', { title: 'x' }, { condition: 'music.title=="y"' })).status).toBe(
      412,
    );
  });

  it('follows Retry-After within the deadline (deadlineMs): a wait past it is not made', async () => {
    // First a Retry-After of 50 ms, which fits the deadline of 20 s and outweighs the 1-4 ms backoff; then one of 30 s, which does not.
    let answered = 0;
    const server = await startRecordingServer((_req, res) => {
      answered++;
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': answered === 1 ? '0.05' : '30' });
      res.end('{"message":"busy"}');
    });
    cleanups.push(server.close);
    const client = new DocumentClient({ endpoint: server.url, deadlineMs: 20_000, retryPolicy: fast });
    cleanups.push(() => client.close());
    waits.length = 0;
    const res = await client.get('id:ns:music::x');
    expect(res.status).toBe(429);
    expect(answered).toBe(2);
    // The 50 ms were waited; neither the 30 s nor what is left of the deadline was.
    expect(waits).toEqual([50]);
  });
});

describe('DocumentClient retries after transport errors (as the feeder: only where safe)', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });

  /** A server that cuts the connection of the first `cuts` requests without answering, then answers 200. */
  async function cutting(cuts: number) {
    let seen = 0;
    const server = await startRecordingServer((_req, res) => {
      if (++seen <= cuts) {
        res.socket?.destroy();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"id":"id:ns:music::x"}');
    });
    cleanups.push(server.close);
    return server;
  }

  it.each([
    ['put', (c: DocumentClient) => c.put('id:ns:music::x', { title: 'x' })],
    ['get', (c: DocumentClient) => c.get('id:ns:music::x')],
    ['remove', (c: DocumentClient) => c.remove('id:ns:music::x')],
    ['assign-only update', (c: DocumentClient) => c.update('id:ns:music::x', { title: { assign: 'y' } })],
  ] as const)('sends a %s again after a cut connection', async (_name, call) => {
    const server = await cutting(2);
    const client = new DocumentClient({ endpoint: server.url, retryPolicy: fast });
    cleanups.push(() => client.close());
    expect((await call(client)).status).toBe(200);
    expect(server.requests).toHaveLength(3);
  });

  it('does not send a conditional put or an increment again: it may have been applied', async () => {
    const server = await cutting(10);
    const client = new DocumentClient({ endpoint: server.url, retryPolicy: fast });
    cleanups.push(() => client.close());
    const conditional = await client
      .put('id:ns:music::x', { title: 'x' }, { condition: 'true' })
      .catch((e: unknown) => e);
    expect(isVespaBulkError(conditional, 'VB_TRANSPORT')).toBe(true);
    expect(server.requests).toHaveLength(1);
    const increment = await client.update('id:ns:music::x', { n: { increment: 1 } }).catch((e: unknown) => e);
    expect(isVespaBulkError(increment, 'VB_TRANSPORT')).toBe(true);
    expect(server.requests).toHaveLength(2);
  });

  it('gives up on a transport error after maxRetries with the typed error and the document id', async () => {
    const server = await cutting(100);
    const client = new DocumentClient({ endpoint: server.url, maxRetries: 2, retryPolicy: fast });
    cleanups.push(() => client.close());
    const err = await client.get('id:ns:music::x').catch((e: unknown) => e);
    expect(isVespaBulkError(err, 'VB_TRANSPORT')).toBe(true);
    expect((err as { place?: { documentId?: string } }).place?.documentId).toBe('id:ns:music::x');
    expect(server.requests).toHaveLength(3);
  });

  it('rejects at once where nothing listens, without the backoff', async () => {
    const server = await startRecordingServer();
    const url = server.url;
    await server.close();
    const client = new DocumentClient({ endpoint: url, retryPolicy: { baseDelayMs: 5_000 } });
    cleanups.push(() => client.close());
    waits.length = 0;
    const err = await client.get('id:ns:music::x').catch((e: unknown) => e);
    expect(isVespaBulkError(err, 'VB_UNREACHABLE')).toBe(true);
    expect(waits).toEqual([]);
  });
});

describe('DocumentClient retry options are checked', () => {
  it.each([
    [{ maxRetries: -1 }, /^maxRetries must be an integer >= 0, not -1$/],
    [{ maxRetries: 1.5 }, /^maxRetries must be an integer >= 0/],
    [{ retryPolicy: { baseDelayMs: -1 } }, /^retryPolicy\.baseDelayMs must be a finite number >= 0, not -1$/],
    [{ retryPolicy: { factor: 0.5 } }, /^retryPolicy\.factor must be a finite number >= 1/],
    [{ retryPolicy: { jitter: 2 } }, /^retryPolicy\.jitter must be a number from 0 to 1/],
    [{ retryPolicy: 'fast' as never }, /^retryPolicy must be an object/],
    [{ requestTimeoutMs: 0 }, /^requestTimeoutMs must be a finite number > 0/],
    [{ deadlineMs: -1 }, /^deadlineMs must be a finite number > 0/],
    [{ maxRetries: 1, retryPolicy: { maxRetries: 2 } }, /^give retryPolicy\.maxRetries or maxRetries, not both/],
  ])('%o', (options, message) => {
    expect(() => new DocumentClient({ endpoint: 'http://127.0.0.1:9', ...options })).toThrow(message);
  });
});

describe('the one retry policy is checked alike for the feed', () => {
  it('refuses a retryPolicy field out of range, naming it', async () => {
    const ops = [{ put: 'id:ns:music::a', fields: {} }];
    await expect(feed(ops, { endpoint: 'http://127.0.0.1:9', retryPolicy: { factor: 0.5 } })).rejects.toThrow(
      /^retryPolicy\.factor must be a finite number >= 1, not 0\.5$/,
    );
  });
});
