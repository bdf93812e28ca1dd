import http2 from 'node:http2';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import {
  startDocumentServer,
  type DocumentServer,
  type DocumentServerOptions,
} from '../../src/simulator/document-api/document-server.js';
import { until } from '../support/until.js';
import { h2Request, type H2Answer } from './h2-call.js';

/**
 * The document handler's queue and request size limit over HTTP, with the real handler's messages
 * (DocumentV1ApiHandler.enqueueAndDispatch and documentOperationRequestTooLarge). Each queue test holds the one
 * content slot with a stalled operation, so what comes after it waits as long as the test likes.
 */

const servers: DocumentServer[] = [];
const sessions: http2.ClientHttp2Session[] = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) s.destroy();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function start(
  options: DocumentServerOptions,
): Promise<{ server: DocumentServer; session: http2.ClientHttp2Session }> {
  const server = await startDocumentServer({ port: 0, ...options });
  servers.push(server);
  const session = http2.connect(server.url);
  sessions.push(session);
  return { server, session };
}

/** A put whose body is exactly `bytes` long. */
function putBody(bytes: number): string {
  const frame = '{"fields":{"b":""}}';
  return `{"fields":{"b":"${'x'.repeat(bytes - frame.length)}"}}`;
}

function put(session: http2.ClientHttp2Session, name: string, body = '{"fields":{}}'): Promise<H2Answer | undefined> {
  // Operations left waiting when the test ends are cut with the session.
  return h2Request(session, 'POST', `/document/v1/ns/t/docid/${name}`, body).catch(() => undefined);
}

/** Holds the single content slot with a stalled operation, then switches stalling off for what follows. */
async function holdTheSlot(server: DocumentServer, session: http2.ClientHttp2Session): Promise<void> {
  void put(session, 'stalled');
  await until(() => server.stats().queue.atContentNodes === 1);
  server.faults.set({ stallRate: 0 });
}

describe('the handler queue over HTTP', () => {
  it('refuses the operation after 256 waiting: "256 requests already enqueued"', async () => {
    const { server, session } = await start({ faults: { contentSlots: 1, stallRate: 1 } });
    await holdTheSlot(server, session);
    for (let i = 0; i < 256; i++) void put(session, `w${i}`);
    await until(() => server.stats().queue.waiting === 256);
    const refused = await put(session, 'one-too-many');
    expect(refused).toMatchObject({
      status: 429,
      json: {
        pathId: '/document/v1/ns/t/docid/one-too-many',
        message: 'Rejecting execution due to overload: 256 requests already enqueued',
      },
    });
    expect(Object.keys(refused!.json)).toEqual(['pathId', 'message']);
  });

  it('refuses new operations once the oldest waiting one has waited over 3 s: "3.0 seconds worth of work enqueued"', async () => {
    const { server, session } = await start({ faults: { contentSlots: 1, stallRate: 1 } });
    await holdTheSlot(server, session);
    void put(session, 'oldest');
    // While the oldest is young, more join the queue.
    void put(session, 'young');
    await until(() => server.stats().queue.waiting === 2);
    await until(() => server.stats().queue.oldestWaitingMs > 3000);
    expect(await put(session, 'late')).toMatchObject({
      status: 429,
      json: {
        pathId: '/document/v1/ns/t/docid/late',
        message: 'Rejecting execution due to overload: 3.0 seconds worth of work enqueued',
      },
    });
    expect(server.stats().queue.waiting).toBe(2);
  });

  it('bounds the waiting bytes by a quarter of the heap; a lone operation may pass it: "estimated size of operation is ..."', async () => {
    // A 1 MiB heap: the queue holds at most 256 kB of operations.
    const { server, session } = await start({ heapMb: 1, faults: { contentSlots: 1, stallRate: 1 } });
    await holdTheSlot(server, session);
    void put(session, 'big', putBody(300 * 1024));
    await until(() => server.stats().queue.waiting === 1);
    expect(server.stats().queue).toMatchObject({ waitingBytes: 300 * 1024, maxWaitingBytes: 256 * 1024 });
    expect(await put(session, 'small', putBody(1024))).toMatchObject({
      status: 429,
      json: {
        pathId: '/document/v1/ns/t/docid/small',
        message:
          'Rejecting execution due to overload: estimated size of operation is 1 kB, total size of queue 301 kB would exceed queue limit of 256 kB',
      },
    });
  });

  it('answers 504 for an operation whose timeout passes while it waits, and never applies it', async () => {
    const { server, session } = await start({ faults: { contentSlots: 1, stallRate: 1 } });
    await holdTheSlot(server, session);
    const answer = await h2Request(session, 'POST', '/document/v1/ns/t/docid/late?timeout=50ms', '{"fields":{}}');
    expect(answer).toMatchObject({
      status: 504,
      json: { pathId: '/document/v1/ns/t/docid/late', message: 'Timeout after 50ms' },
    });
    expect(server.stats().queue.waiting).toBe(0);
    expect(server.store.size()).toBe(0);
  });
});

describe('the request size limit', () => {
  const tooLarge = (size: number, max: number): string =>
    `Document operation request size ${size} bytes exceeds maximum size of ${max} bytes. See https://docs.vespa.ai/en/writing/document-v1-api-guide.html#request-size-limit`;

  it('refuses a put or update over the limit with 413, counting the bytes read (chunked ones too, gzipped ones inflated)', async () => {
    const { server, session } = await start({ maxBodyBytes: 1000 });
    const post = await h2Request(session, 'POST', '/document/v1/ns/t/docid/big', putBody(1500));
    expect(post).toMatchObject({
      status: 413,
      json: { pathId: '/document/v1/ns/t/docid/big', message: tooLarge(1500, 1000) },
    });
    expect(Object.keys(post.json)).toEqual(['pathId', 'message']);
    const update = await h2Request(
      session,
      'PUT',
      '/document/v1/ns/t/docid/big',
      `{"fields":{"b":{"assign":"${'y'.repeat(2000)}"}}}`,
    );
    expect(update).toMatchObject({
      status: 413,
      json: { message: tooLarge(2000 + '{"fields":{"b":{"assign":""}}}'.length, 1000) },
    });
    const inflated = putBody(5000);
    const gzipped = await h2Request(session, 'POST', '/document/v1/ns/t/docid/zipped', gzipSync(inflated), {
      'content-encoding': 'gzip',
    });
    expect(gzipSync(inflated).length).toBeLessThan(1000);
    expect(gzipped).toMatchObject({ status: 413, json: { message: tooLarge(5000, 1000) } });
    // HTTP/1.1 without a Content-Length: the chunks are counted as they come.
    const chunked = await request(`${server.url}/document/v1/ns/t/docid/chunked`, {
      method: 'POST',
      body: Readable.from([Buffer.from(putBody(1200).slice(0, 700)), Buffer.from(putBody(1200).slice(700))]),
    });
    expect(chunked.statusCode).toBe(413);
    expect(((await chunked.body.json()) as { message: string }).message).toBe(tooLarge(1200, 1000));
    // A body at the limit is taken.
    expect((await h2Request(session, 'POST', '/document/v1/ns/t/docid/fits', putBody(1000))).status).toBe(200);
    expect(server.store.size()).toBe(1);
  });
});
