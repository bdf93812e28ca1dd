import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createH2Server, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { createTransport } from '../../src/http/create-transport.js';
import type { Transport, WireProtocol } from '../../src/http/transport.js';
import { defaultRetryPolicy } from '../../src/http/retry-delay.js';
import { SliceVisitor, linesHandedOn } from '../../src/visit/slice-visitor.js';
import type { SliceResumeState } from '../../src/visit/options.js';
import type { VisitBatch } from '../../src/visit/visit-batch.js';

/**
 * The handshake between a slice and a checkpoint, without an export around it: while the consumer holds a
 * delivery (a slow output), the state a checkpoint would save must not cover documents not yet handed on. Resuming
 * from that state, with the documents handed on before it, must give every document (issue 40, lead 1).
 */

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const documents = 3000;

function sliceVisitor(
  url: string,
  transport: Transport,
  deliver: (batch: VisitBatch) => void | Promise<void>,
  resume?: SliceResumeState,
) {
  return new SliceVisitor({
    transport,
    endpoint: url,
    pathPrefix: '',
    visitPath: '/document/v1/ns/music/docid',
    query: new URLSearchParams({ wantedDocumentCount: '1000' }),
    slices: 1,
    sliceId: 0,
    stream: true,
    headers: {},
    requestTimeoutMs: 30_000,
    retry: { ...defaultRetryPolicy, maxRetries: 3 },
    deliver,
    ...(resume !== undefined && { resume }),
  });
}

/**
 * The whole corpus in one answer written at once, a token every 10 documents (a token covers what came before it),
 * so that the answer is in the client's window long before a slow consumer has taken it.
 */
async function tokenServer(protocol: WireProtocol): Promise<{ url: string; close: () => Promise<void> }> {
  const handle = (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse): void => {
    const start = Number(new URL(req.url!, 'http://x').searchParams.get('continuation') ?? '0');
    let out = '';
    for (let i = start; i < documents; i++) {
      out += `{"put":"id:ns:music::${i}","fields":{"n":${i},"pad":"${'x'.repeat(200)}"}}\n`;
      if ((i + 1) % 10 === 0 && i + 1 < documents) out += `{"continuation":{"token":"${i + 1}"}}\n`;
    }
    out += `{"sessionStats":{"documentCount":${documents - start}}}\n{"continuation":{"percentFinished":100.0}}\n`;
    res.writeHead(200, { 'content-type': 'application/jsonl; charset=UTF-8' });
    res.end(out);
  };
  const server = protocol === 'h2' ? createH2Server(handle) : createServer(handle);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        if ('closeAllConnections' in server) server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe.each<WireProtocol>(['h2', 'http1.1'])('a slice held by a slow consumer (%s)', (protocol) => {
  it('saves no token past the documents it handed on', async () => {
    const server = await tokenServer(protocol);
    cleanups.push(() => server.close());
    const transport = createTransport({ origin: server.url, protocol });
    cleanups.push(() => transport.close());

    const handedOn = new Set<string>();
    let release: (() => void) | undefined;
    const held = new Promise<void>((r) => (release = r));
    let batches = 0;
    let stop: (() => void) | undefined;
    const stopped = new Promise<void>((r) => (stop = r));
    const first = sliceVisitor(server.url, transport, (batch) => {
      for (const e of batch.entries) handedOn.add(e.id);
      // The first batch's output is slow: the consumer holds it while more of the answer arrives.
      if (batches++ === 0) {
        stop!();
        return held;
      }
      return undefined;
    });
    const run = first.run().catch(() => undefined);
    await stopped;
    // Let the transport take in what its window allows while the delivery is held.
    for (let i = 0; i < 200; i++) await new Promise((r) => setImmediate(r));
    await linesHandedOn([first]);
    const saved = first.resumeState();
    const before = new Set(handedOn);
    release!();
    await run;

    // Resume from the saved state as a restarted process would, with only the documents handed on before it.
    const after = new Set<string>();
    const second = sliceVisitor(
      server.url,
      transport,
      (batch) => {
        for (const e of batch.entries) after.add(e.id);
      },
      saved,
    );
    await second.run();
    const missing: string[] = [];
    for (let i = 0; i < documents; i++) {
      const id = `id:ns:music::${i}`;
      if (!before.has(id) && !after.has(id)) missing.push(id);
    }
    expect(missing.length).toBe(0);
    for (const id of after) expect(before.has(id)).toBe(false);
  }, 30_000);
});
