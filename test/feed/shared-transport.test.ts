import http from 'node:http';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { feed, DocumentClient, createTransport, bulkOperation, visit } from '../../src/index.js';
import type { WireProtocol } from '../../src/http/transport.js';

/**
 * A transport made with `createTransport` and lent to `feed()` and a `DocumentClient` at once, as docs/library.md
 * shows it: whoever borrows it never destroys or closes it, also when it stops with requests still on the wire.
 */
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

type Answer = (method: string, path: string, respond: (status: number, body: string) => void) => void;

/** A loopback server speaking `protocol` (h2c with prior knowledge, or HTTP/1.1) that answers as `answer` says. */
async function serve(protocol: WireProtocol, answer: Answer): Promise<string> {
  const handle = (
    req: http.IncomingMessage | http2.Http2ServerRequest,
    res: http.ServerResponse | http2.Http2ServerResponse,
  ): void => {
    req.resume();
    req.on('end', () =>
      answer(req.method!, req.url!, (status, body) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(body);
      }),
    );
  };
  if (protocol === 'h2') {
    const server = http2.createServer(handle);
    const sessions = new Set<http2.ServerHttp2Session>();
    server.on('session', (s) => sessions.add(s));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(
      () =>
        new Promise<void>((r) => {
          for (const s of sessions) s.destroy();
          server.close(() => r());
        }),
    );
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }
  const server = http.createServer(handle);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Puts of doc-0..4 and every GET are answered; the later puts hang until their requests end. */
const answerFirstFive: Answer = (method, path, respond) => {
  if (method === 'GET') respond(200, '{"id":"id:ns:t::doc-0","fields":{}}');
  else if (/\/doc-[0-4](\?|$)/.test(path)) respond(200, '{"id":"x"}');
};

describe.each(['h2', 'http1.1'] as const)('a transport lent out, over %s', (protocol) => {
  it('stays usable by a DocumentClient after a feed on it was stopped with requests on the wire', async () => {
    const endpoint = await serve(protocol, answerFirstFive);
    const transport = createTransport({ origin: endpoint, protocol, connections: 4 });
    cleanups.push(() => transport.destroy());
    const client = new DocumentClient({ endpoint, transport, maxRetries: 0 });
    const abort = new AbortController();
    let answered = 0;
    const ops = Array.from({ length: 20 }, (_, i) => ({ put: `id:ns:t::doc-${i}`, fields: { n: i } }));
    const summary = await feed(ops, {
      endpoint,
      transport,
      signal: abort.signal,
      stopGraceMs: 20,
      onResult: (r) => {
        if (r.ok && ++answered === 5) abort.abort();
      },
    });
    expect(summary.ok).toBe(5);
    expect(summary.abandoned).toBe(15);
    expect(summary.errors).toBe(0);

    const read = await client.get('id:ns:t::doc-0');
    expect(read.status).toBe(200);
    expect(transport.stats.connections).toBeGreaterThan(0);
    await client.close();
  });

  it('is left open by a bulk operation that is stopped', async () => {
    let visits = 0;
    const abort = new AbortController();
    const endpoint = await serve(protocol, (method, _path, respond) => {
      if (method === 'DELETE') {
        visits++;
        respond(200, `{"documentCount":1,"continuation":"c${visits}"}`);
        if (visits === 2) abort.abort();
      } else respond(200, '{"id":"id:ns:t::doc-0","fields":{}}');
    });
    const transport = createTransport({ origin: endpoint, protocol });
    cleanups.push(() => transport.destroy());
    const summary = await bulkOperation({
      kind: 'delete-where',
      endpoint,
      transport,
      cluster: 'music',
      selection: 'true',
      namespace: 'ns',
      documentType: 't',
      signal: abort.signal,
    });
    expect(summary.ok).toBe(false);
    const client = new DocumentClient({ endpoint, transport, maxRetries: 0 });
    expect((await client.get('id:ns:t::doc-0')).status).toBe(200);
  });

  it('is left open by a visit left early, with slices still on the wire', async () => {
    const endpoint = await serve(protocol, (method, path, respond) => {
      // The first slice answers one document and goes on; the others never answer.
      if (path.includes('sliceId=0'))
        respond(200, '{"documents":[{"id":"id:ns:t::a","fields":{}}],"continuation":"c"}');
      else if (method === 'GET' && !path.includes('sliceId=')) respond(200, '{"id":"id:ns:t::doc-0","fields":{}}');
    });
    const transport = createTransport({ origin: endpoint, protocol });
    cleanups.push(() => transport.destroy());
    let seen = 0;
    for await (const doc of visit({ endpoint, transport, cluster: 'music', slices: 4 })) {
      expect(doc.id).toBe('id:ns:t::a');
      if (++seen === 1) break;
    }
    const client = new DocumentClient({ endpoint, transport, maxRetries: 0 });
    expect((await client.get('id:ns:t::doc-0')).status).toBe(200);
  });
});
