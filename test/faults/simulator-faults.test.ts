import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { type TransportRequest } from '../../src/http/transport.js';
import { createTransport } from '../../src/http/create-transport.js';
import { send, type RawResponse } from '../../src/http/exchange.js';
import { toTransportError } from '../../src/http/transport-error.js';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { validateFaultPatch } from '../../src/simulator/faults.js';
import { overProtocols } from '../support/protocols.js';

/** The simulator's stall, garbage and truncate faults over each protocol, and a restart that keeps the store. */
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
async function start(options: Parameters<typeof startDocumentServer>[0] = {}): Promise<DocumentServer> {
  const server = await startDocumentServer({ port: 0, ...options });
  cleanups.push(() => server.close());
  return server;
}

describe('simulator faults', () => {
  it('validates the new rates and sets them through PUT /_sim/faults', async () => {
    expect(validateFaultPatch({ stallRate: 0.5, garbageRate: 0, truncateRate: 1 })).toBeUndefined();
    expect(validateFaultPatch({ stallRate: 1.5 })).toMatch(/'stallRate' must be a number in \[0, 1\]/);
    expect(validateFaultPatch({ garbageRate: 'x' })).toMatch(/'garbageRate'/);
    const server = await start();
    const res = await request(`${server.url}/_sim/faults`, {
      method: 'PUT',
      body: JSON.stringify({ stallRate: 0.25, garbageRate: 0.5, truncateRate: 0.125 }),
    });
    expect(res.statusCode).toBe(200);
    expect(await res.body.json()).toMatchObject({ stallRate: 0.25, garbageRate: 0.5, truncateRate: 0.125 });
    expect(server.faults.get()).toMatchObject({ stallRate: 0.25, garbageRate: 0.5, truncateRate: 0.125 });
  });
});

describe.each(overProtocols)('simulator faults over $protocol', ({ protocol }) => {
  /** One request to document `id` through a pool of the protocol under test (its own, so a cut connection is its alone). */
  function call(
    server: DocumentServer,
    id: string,
    req: Omit<TransportRequest, 'path'> = { method: 'GET' },
    timeoutMs?: number,
  ): Promise<RawResponse> {
    const pool = createTransport({
      origin: server.url,
      protocol,
      connections: 1,
      ...(timeoutMs !== undefined && { timeoutMs }),
    });
    cleanups.push(() => pool.destroy());
    return send(pool, { ...req, path: `/document/v1/ns/music/docid/${id}` });
  }
  const post = (fields: string): Omit<TransportRequest, 'path'> => ({
    method: 'POST',
    body: Buffer.from(`{"fields":${fields}}`),
  });

  it('garbage: 200 with a body that is not JSON, and the operation not applied', async () => {
    const server = await start({ faults: { garbageRate: 1 } });
    for (let i = 0; i < 2; i++) {
      const res = await call(server, `g${i}`, post('{"a":1}'));
      expect(res.status).toBe(200);
      expect(() => JSON.parse(res.body.toString())).toThrow();
    }
    expect(server.store.size()).toBe(0);
    expect(server.faults.injected()).toEqual({ garbage: 2 });
  });

  it('truncate: the operation applied, the answer shorter than its Content-Length, the connection cut', async () => {
    const server = await start({ faults: { truncateRate: 1 } });
    const err = toTransportError(await call(server, 't1', post('{"a":1}')).catch((e: unknown) => e));
    expect(err.code).toBe('VB_TRANSPORT');
    expect(err.maybeApplied).toBe(true);
    expect(server.store.get('id:ns:music::t1')?.fields).toEqual({ a: 1 });
    expect(server.faults.injected()).toEqual({ truncate: 1 });
  });

  it('stall: no answer and nothing applied; the admission is given back when the client gives up', async () => {
    const server = await start({ faults: { stallRate: 1, queueLimit: 1 } });
    await expect(call(server, 's1', post('{}'), 200)).rejects.toMatchObject({
      code: 'VB_TIMEOUT',
      failure: 'headers-timeout',
    });
    expect(server.store.size()).toBe(0);
    server.faults.set({ stallRate: 0 });
    // With a queue limit of 1, a leaked admission would make this a 429.
    await new Promise((r) => setTimeout(r, 50));
    expect((await call(server, 's2', post('{}'))).status).toBe(200);
  });

  it('a server started with the store of a closed one on its port serves the same documents', async () => {
    const first = await start();
    expect((await call(first, 'kept', post('{"v":1}'))).status).toBe(200);
    const { port, store } = first;
    await first.close();
    await expect(call(first, 'kept')).rejects.toMatchObject({ code: 'VB_TRANSPORT', maybeApplied: false });
    const second = await start({ port, store });
    const res = await call(second, 'kept');
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body.toString())).toMatchObject({ fields: { v: 1 } });
  });
});
