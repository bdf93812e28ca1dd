import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { feed } from '../../src/feed/feeder.js';
import { Feeder } from '../../src/feed/feeder.js';
import {
  startDocumentServer,
  type DocumentServer,
  type DocumentServerOptions,
} from '../../src/simulator/document-api/document-server.js';
import { expectSpoke, overProtocols } from '../support/protocols.js';
import {
  expectNothingLost,
  failureLines,
  failureReasons,
  mixedOperations,
  okOf,
  quickRetries,
  storeMap,
  tempDir,
  writeJsonl,
  type Op,
} from './harness.js';

/** The feeder against a simulator that misbehaves on purpose, over each protocol; every test ends with the invariant. */
describe.each(overProtocols)('feed over $protocol survives', ({ protocol }) => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function setup(options: DocumentServerOptions = {}) {
    const server = await startDocumentServer({ port: 0, ...options });
    cleanups.push(() => server.close());
    const tmp = tempDir();
    cleanups.push(tmp.cleanup);
    return { server, dir: tmp.dir };
  }

  it('the simulator killed and restarted mid-feed: the breaker half-opens, the feed resumes, nothing is lost', async () => {
    let server: DocumentServer = (await setup({ faults: { maxOpsPerSecond: 1500 } })).server;
    const { dir } = await setup();
    const ops = mixedOperations(3000, 'kill');
    const input = writeJsonl(join(dir, 'in.jsonl'), ops);
    const failures = join(dir, 'failures.jsonl');
    const store = server.store;
    const port = server.port;
    let restarted = false;
    // Kill once a share of the corpus is stored; restart on the same port with the same store after a pause.
    const killer = setInterval(() => {
      if (restarted || store.size() < 800) return;
      restarted = true;
      clearInterval(killer);
      void (async () => {
        await server.close(); // destroys every connection at once, requests in flight included
        await new Promise((r) => setTimeout(r, 1500));
        server = await startDocumentServer({ port, store, faults: { maxOpsPerSecond: 1500 } });
        cleanups.push(() => server.close());
      })();
    }, 5);
    cleanups.push(() => clearInterval(killer));
    const sizeAtKill: number[] = [];
    const feeder = new Feeder({
      endpoint: server.url,
      protocol,
      failures,
      halfOpenSeconds: 0.3,
      maxFailureSeconds: 30,
      retryPolicy: { maxDelayMs: 1000 },
      onResult: () => {
        if (restarted && sizeAtKill.length === 0) sizeAtKill.push(store.size());
      },
    });
    // The breaker's state as the feed goes (the engine's, private: observed, not driven).
    const breaker = (feeder as unknown as { driver: { breaker: { state(now: number): string } } }).driver.breaker;
    const states = new Set<string>();
    const watch = setInterval(() => states.add(breaker.state(performance.now())), 10);
    cleanups.push(() => clearInterval(watch));
    const { summary, stopped } = await feeder.run(input);
    expect(stopped).toBeUndefined();
    expectSpoke(summary, protocol);
    expect([...states].sort()).toEqual(['closed', 'half-open']);
    expect(restarted).toBe(true);
    expect(sizeAtKill[0]).toBeLessThan(store.size());
    expect(summary.exceptions).toBeGreaterThan(0);
    expect(failureLines(failures)).toEqual([]);
    expectNothingLost(server, ops, okOf(summary), failures);
  });

  it('connection resets after the work was done (10% of operations)', async () => {
    const { server, dir } = await setup({ faults: { closeRate: 0.1, seed: 7 } });
    const ops = mixedOperations(2000, 'reset');
    const failures = join(dir, 'failures.jsonl');
    const summary = await feed(writeJsonl(join(dir, 'in.jsonl'), ops), {
      endpoint: server.url,
      protocol,
      failures,
      retryPolicy: quickRetries,
    });
    expect(server.faults.injected().close).toBeGreaterThan(50);
    expect(summary.retries).toBeGreaterThan(0);
    expect(expectNothingLost(server, ops, okOf(summary), failures).failed).toBe(0);
  });

  it('stalls longer than the per-request timeout are abandoned and sent again', async () => {
    const { server, dir } = await setup({ faults: { stallRate: 0.02, seed: 3 } });
    const ops = mixedOperations(600, 'stall');
    const failures = join(dir, 'failures.jsonl');
    const summary = await feed(writeJsonl(join(dir, 'in.jsonl'), ops), {
      endpoint: server.url,
      protocol,
      failures,
      requestTimeoutMs: 300,
      retryPolicy: quickRetries,
    });
    expect(server.faults.injected().stall).toBeGreaterThan(5);
    expect(expectNothingLost(server, ops, okOf(summary), failures).failed).toBe(0);
  });

  it('an operation whose every attempt stalls fails at its deadline into the failure output, and the rest is fed', async () => {
    const { server, dir } = await setup({ faults: { stallRate: 0.6, seed: 11 } });
    const ops: Op[] = Array.from({ length: 30 }, (_, i) => ({ put: `id:ns:music::dl${i}`, fields: { i } }));
    const failures = join(dir, 'failures.jsonl');
    const summary = await feed(writeJsonl(join(dir, 'in.jsonl'), ops), {
      endpoint: server.url,
      protocol,
      failures,
      connections: 30,
      pipelining: 1,
      deadlineMs: 1500,
      requestTimeoutMs: 300,
      halfOpenSeconds: 100,
      retryPolicy: quickRetries,
    });
    const { failed } = expectNothingLost(server, ops, okOf(summary), failures);
    expect(failed).toBeGreaterThan(0);
    expect(failed).toBeLessThan(ops.length);
    for (const r of failureReasons(failures)) expect(r).toMatchObject({ code: 'VB_TIMEOUT', operation: 'put' });
    // The failure output is feed input: fed again with the stalls gone, the store is complete.
    server.faults.set({ stallRate: 0 });
    const again = await feed(failures, { endpoint: server.url, protocol, failures: join(dir, 'again.jsonl') });
    expect(okOf(again)).toBe(failed);
    expect(storeMap(server).size).toBe(ops.length);
  });

  it('200 answers that are not JSON: operations safe to repeat are sent again, others fail as outcome unknown', async () => {
    const { server, dir } = await setup({ faults: { garbageRate: 0.1, seed: 5 } });
    const ops = mixedOperations(2000, 'garbage');
    const failures = join(dir, 'failures.jsonl');
    const summary = await feed(writeJsonl(join(dir, 'in.jsonl'), ops), {
      endpoint: server.url,
      protocol,
      failures,
      retryPolicy: quickRetries,
    });
    expect(server.faults.injected().garbage).toBeGreaterThan(100);
    expect(expectNothingLost(server, ops, okOf(summary), failures).failed).toBe(0);

    // An increment applied twice would differ, so it is not repeated: it fails with its reason (the simulator
    // did not apply it, and neither is it counted as done).
    server.faults.set({ garbageRate: 1 });
    const unsafeFailures = join(dir, 'unsafe.jsonl');
    const unsafe = await feed(
      writeJsonl(join(dir, 'unsafe-in.jsonl'), [{ update: 'id:ns:music::garbage0', fields: { n: { increment: 1 } } }]),
      {
        endpoint: server.url,
        protocol,
        failures: unsafeFailures,
      },
    );
    expect(okOf(unsafe)).toBe(0);
    expect(failureReasons(unsafeFailures)).toEqual([
      expect.objectContaining({
        status: 200,
        code: 'VB_BAD_RESPONSE',
        attempts: 1,
        message: expect.stringMatching(/not JSON: outcome unknown/),
      }),
    ]);
    expect(server.store.get('id:ns:music::garbage0')!.fields.n).toBe(-1);
  });

  it('responses cut short (Content-Length longer than the body, then the connection closed)', async () => {
    const { server, dir } = await setup({ faults: { truncateRate: 0.1, seed: 9 } });
    const ops = mixedOperations(2000, 'trunc');
    const failures = join(dir, 'failures.jsonl');
    const summary = await feed(writeJsonl(join(dir, 'in.jsonl'), ops), {
      endpoint: server.url,
      protocol,
      failures,
      retryPolicy: quickRetries,
    });
    expect(server.faults.injected().truncate).toBeGreaterThan(50);
    expect(summary.exceptions).toBeGreaterThan(0);
    expect(expectNothingLost(server, ops, okOf(summary), failures).failed).toBe(0);
  });

  it('413 for an oversized document: it lands in the failure output with its reason, the rest is fed', async () => {
    const { server, dir } = await setup({ maxBodyBytes: 4096 });
    const ops = mixedOperations(500, 'big');
    const big: Op = { put: 'id:ns:music::oversized', fields: { text: 'x'.repeat(10_000) } };
    ops.splice(250, 0, big);
    const failures = join(dir, 'failures.jsonl');
    const summary = await feed(writeJsonl(join(dir, 'in.jsonl'), ops), {
      endpoint: server.url,
      protocol,
      failures,
      compression: 'none',
    });
    expect(expectNothingLost(server, ops, okOf(summary), failures).failed).toBe(1);
    expect(failureLines(failures)).toEqual([JSON.stringify(big)]);
    expect(failureReasons(failures)).toEqual([
      expect.objectContaining({
        id: 'id:ns:music::oversized',
        status: 413,
        attempts: 1,
        inputLine: 251,
        message: expect.stringMatching(/exceeds maximum size of 4096 bytes/),
      }),
    ]);
  });

  it('20% mixed faults for a whole feed', async () => {
    const { server, dir } = await setup({
      // Few stalls: each holds its request (and over HTTP/1.1 its connection) until the request timeout.
      faults: {
        errorRate: 0.09,
        errorStatuses: [429, 502, 503, 504, 507],
        closeRate: 0.03,
        stallRate: 0.004,
        garbageRate: 0.04,
        truncateRate: 0.04,
        seed: 2024,
      },
    });
    // 2,000 documents (about 2,600 requests with the retries): each kind of fault still comes dozens of times, the
    // stalls (0.4%) about ten.
    const ops = mixedOperations(2000, 'mixed');
    const failures = join(dir, 'failures.jsonl');
    const summary = await feed(writeJsonl(join(dir, 'in.jsonl'), ops), {
      endpoint: server.url,
      protocol,
      failures,
      requestTimeoutMs: 300,
      retryPolicy: quickRetries,
    });
    const injected = server.faults.injected();
    const total = Object.values(injected).reduce((a, b) => a + b, 0);
    // About a fifth of all requests (retries included) met a fault, of every kind.
    expect(total / summary.requests).toBeGreaterThan(0.12);
    for (const kind of ['error-429', 'error-503', 'error-504', 'error-507', 'close', 'stall', 'garbage', 'truncate'])
      expect(injected[kind], kind).toBeGreaterThan(0);
    expect(expectNothingLost(server, ops, okOf(summary), failures).failed).toBe(0);
  });
});
