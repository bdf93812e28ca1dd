import { Client, request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { validateFaultPatch } from '../../src/simulator/faults.js';

/** The simulator's stall, garbage and truncate faults, and a restart that keeps the store. */
describe('simulator faults', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  async function start(options: Parameters<typeof startDocumentServer>[0] = {}): Promise<DocumentServer> {
    const server = await startDocumentServer({ port: 0, ...options });
    cleanups.push(() => server.close());
    return server;
  }
  const doc = (server: DocumentServer, id: string) => `${server.url}/document/v1/ns/music/docid/${id}`;

  it('validates the new rates and sets them through PUT /_sim/faults', async () => {
    expect(validateFaultPatch({ stallRate: 0.5, garbageRate: 0, truncateRate: 1 })).toBeUndefined();
    expect(validateFaultPatch({ stallRate: 1.5 })).toMatch(/'stallRate' must be a number in \[0, 1\]/);
    expect(validateFaultPatch({ garbageRate: 'x' })).toMatch(/'garbageRate'/);
    const server = await start();
    const res = await request(`${server.url}/_sim/faults`, { method: 'PUT', body: JSON.stringify({ stallRate: 0.25, garbageRate: 0.5, truncateRate: 0.125 }) });
    expect(res.statusCode).toBe(200);
    expect(await res.body.json()).toMatchObject({ stallRate: 0.25, garbageRate: 0.5, truncateRate: 0.125 });
    expect(server.faults.get()).toMatchObject({ stallRate: 0.25, garbageRate: 0.5, truncateRate: 0.125 });
  });

  it('garbage: 200 with a body that is not JSON, and the operation not applied', async () => {
    const server = await start({ faults: { garbageRate: 1 } });
    for (let i = 0; i < 2; i++) {
      const res = await request(doc(server, `g${i}`), { method: 'POST', body: '{"fields":{"a":1}}' });
      expect(res.statusCode).toBe(200);
      const text = await res.body.text();
      expect(() => JSON.parse(text)).toThrow();
    }
    expect(server.store.size()).toBe(0);
    expect(server.faults.injected()).toEqual({ garbage: 2 });
  });

  it('truncate: the operation applied, the answer shorter than its Content-Length, the connection cut', async () => {
    const server = await start({ faults: { truncateRate: 1 } });
    await expect(request(doc(server, 't1'), { method: 'POST', body: '{"fields":{"a":1}}' }).then((r) => r.body.text())).rejects.toThrow();
    expect(server.store.get('id:ns:music::t1')?.fields).toEqual({ a: 1 });
    expect(server.faults.injected()).toEqual({ truncate: 1 });
  });

  it('stall: no answer and nothing applied; the admission is given back when the client gives up', async () => {
    const server = await start({ faults: { stallRate: 1, queueLimit: 1 } });
    const client = new Client(server.url, { headersTimeout: 200 });
    cleanups.push(() => client.destroy());
    await expect(client.request({ path: '/document/v1/ns/music/docid/s1', method: 'POST', body: '{"fields":{}}' })).rejects.toMatchObject({ code: 'UND_ERR_HEADERS_TIMEOUT' });
    expect(server.store.size()).toBe(0);
    server.faults.set({ stallRate: 0 });
    // With a queue limit of 1, a leaked admission would make this a 429.
    await new Promise((r) => setTimeout(r, 50));
    const res = await request(doc(server, 's2'), { method: 'POST', body: '{"fields":{}}' });
    expect(res.statusCode).toBe(200);
    await res.body.dump();
  });

  it('a server started with the store of a closed one on its port serves the same documents', async () => {
    const first = await start();
    await (await request(doc(first, 'kept'), { method: 'POST', body: '{"fields":{"v":1}}' })).body.dump();
    const { port, store } = first;
    await first.close();
    await expect(request(doc(first, 'kept'))).rejects.toThrow();
    const second = await start({ port, store });
    const res = await request(doc(second, 'kept'));
    expect(res.statusCode).toBe(200);
    expect(await res.body.json()).toMatchObject({ fields: { v: 1 } });
  });
});
