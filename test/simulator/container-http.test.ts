import http2 from 'node:http2';
import net from 'node:net';
import tls from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  startDocumentServer,
  type DocumentServer,
  type DocumentServerOptions,
} from '../../src/simulator/document-api/document-server.js';
import { makeTestPki, type TestPki } from '../support/certs.js';
import { until } from '../support/until.js';
import { h2Request } from './h2-call.js';

/**
 * The simulator's port serves as the container's Jetty does: an HTTP/1.1 connection one request at a time (a
 * pipelined request starts only once the previous response is written), HTTP/2 streams concurrently, up to 512
 * per connection, cleartext (prior knowledge) and over TLS.
 */

const servers: DocumentServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function start(options: DocumentServerOptions = {}): Promise<DocumentServer> {
  const server = await startDocumentServer({ port: 0, ...options });
  servers.push(server);
  return server;
}

interface RawResponse {
  status: number;
  body: string;
}

/** Pipelined puts in one write: `count` requests back to back, before any answer. */
function pipelinedPuts(count: number, prefix: string): string {
  const body = '{"fields":{"n":1}}';
  let batch = '';
  for (let i = 0; i < count; i++)
    batch += `POST /document/v1/ns/t/docid/${prefix}${i} HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
  return batch;
}

/** Reads `count` responses (each with a Content-Length) off a socket. */
function readResponses(socket: net.Socket, count: number): Promise<RawResponse[]> {
  return new Promise((resolve, reject) => {
    let buffered = Buffer.alloc(0);
    const responses: RawResponse[] = [];
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        const headEnd = buffered.indexOf('\r\n\r\n');
        if (headEnd < 0) break;
        const head = buffered.subarray(0, headEnd).toString('latin1');
        const length = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (buffered.length < headEnd + 4 + length) break;
        responses.push({
          status: Number(head.split(' ')[1]),
          body: buffered.subarray(headEnd + 4, headEnd + 4 + length).toString('utf8'),
        });
        buffered = buffered.subarray(headEnd + 4 + length);
      }
      if (responses.length >= count) resolve(responses);
    });
    socket.on('error', reject);
    socket.on('close', () => reject(new Error(`connection closed after ${responses.length} of ${count} responses`)));
  });
}

async function connect(port: number): Promise<net.Socket> {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  return socket;
}

describe('HTTP/1.1: one request at a time per connection', () => {
  it('serves pipelined puts one after the other, in order: N of T ms each take at least N x T', async () => {
    const latencyMs = 30;
    const count = 10;
    const server = await start({ faults: { latencyMs } });
    const socket = await connect(server.port);
    const started = performance.now();
    const answered = readResponses(socket, count);
    socket.write(pipelinedPuts(count, 'p'));
    const responses = await answered;
    const elapsedMs = performance.now() - started;
    socket.destroy();
    expect(responses.map((r) => r.status)).toEqual(Array(count).fill(200));
    expect(responses.map((r) => JSON.parse(r.body).pathId)).toEqual(
      Array.from({ length: count }, (_, i) => `/document/v1/ns/t/docid/p${i}`),
    );
    // Each starts only once the one before it is answered, and each spends latencyMs at the content nodes.
    expect(elapsedMs).toBeGreaterThanOrEqual(count * latencyMs);
    expect(server.stats()).toMatchObject({ inProgress: 0, maxInProgress: 1, maxInProgressOnOneConnection: 1 });
    expect(server.store.size()).toBe(count);
  });

  it('answers every pipelined request of a client that half-closes after writing them', async () => {
    const server = await start({ faults: { latencyMs: 5 } });
    const socket = await connect(server.port);
    const answered = readResponses(socket, 4);
    socket.end(pipelinedPuts(4, 'h'));
    expect((await answered).map((r) => JSON.parse(r.body).pathId)).toEqual(
      [0, 1, 2, 3].map((i) => `/document/v1/ns/t/docid/h${i}`),
    );
    await new Promise((resolve) => socket.once('close', resolve));
  });

  it('runs separate connections concurrently: their requests overlap', async () => {
    const server = await start({ faults: { stallRate: 1 } });
    const sockets = await Promise.all([0, 1, 2].map(() => connect(server.port)));
    sockets.forEach((s, i) => s.write(pipelinedPuts(2, `c${i}-`)));
    // Stalled operations are never answered: each connection's first stays in progress, its second waits.
    await until(() => server.stats().inProgress === 3);
    expect(server.stats()).toMatchObject({ maxInProgress: 3, maxInProgressOnOneConnection: 1 });
    expect(server.faults.injected().stall).toBe(3);
    for (const s of sockets) s.destroy();
    await until(() => server.stats().inProgress === 0);
  });

  it('lets go of requests waiting behind a response whose connection is cut, and holds no content slot for them', async () => {
    const server = await start({ faults: { stallRate: 1, contentSlots: 1, queueLimit: 1 } });
    const socket = await connect(server.port);
    socket.write(pipelinedPuts(3, 's'));
    await until(() => server.stats().queue.atContentNodes === 1);
    // The two behind the stalled one wait on the connection, not in the handler's queue.
    expect(server.stats()).toMatchObject({ inProgress: 1, queue: { waiting: 0, atContentNodes: 1 } });
    socket.destroy();
    await until(() => server.stats().inProgress === 0 && server.stats().queue.atContentNodes === 0);
    server.faults.set({ stallRate: 0, closeRate: 1 });
    // A cut after the first answer: the pipelined ones behind it are dropped with the connection.
    const cut = await connect(server.port);
    const closed = new Promise((resolve) => cut.once('close', resolve));
    cut.on('error', () => {});
    // Read what comes, or the end of the connection is never seen.
    cut.resume();
    cut.write(pipelinedPuts(3, 'k'));
    await closed;
    await until(() => server.stats().inProgress === 0);
    expect(server.faults.injected().close).toBe(1);
    expect(server.store.size()).toBe(1);
    server.faults.set({ closeRate: 0 });
    const again = await connect(server.port);
    const answered = readResponses(again, 2);
    again.write(pipelinedPuts(2, 'a'));
    expect((await answered).map((r) => r.status)).toEqual([200, 200]);
    again.destroy();
  });
});

describe('HTTP/2: streams run concurrently', () => {
  it('has every stream of a connection in progress at once', async () => {
    const server = await start({ faults: { stallRate: 1 } });
    const session = http2.connect(server.url);
    const streams = 64;
    const pending = Array.from({ length: streams }, (_, i) =>
      h2Request(session, 'POST', `/document/v1/ns/t/docid/h${i}`, '{"fields":{}}').catch(() => undefined),
    );
    await until(() => server.stats().inProgress === streams);
    expect(server.stats()).toMatchObject({ maxInProgress: streams, maxInProgressOnOneConnection: streams });
    session.destroy();
    await Promise.all(pending);
    await until(() => server.stats().inProgress === 0);
    expect(server.stats({ reset: true }).inProgress).toBe(0);
    expect(server.stats()).toMatchObject({ maxInProgress: 0, maxInProgressOnOneConnection: 0 });
  });

  it('announces SETTINGS_MAX_CONCURRENT_STREAMS 512 over h2c with prior knowledge', async () => {
    const server = await start();
    const session = http2.connect(server.url);
    const settings = await new Promise<http2.Settings>((resolve) => session.once('remoteSettings', resolve));
    expect(settings.maxConcurrentStreams).toBe(512);
    expect((await h2Request(session, 'GET', '/_sim/stats')).json).toMatchObject({ inProgress: 1 });
    session.close();
  });
});

describe('over TLS', () => {
  let pki: TestPki;
  beforeAll(() => {
    pki = makeTestPki();
  });
  afterAll(() => pki.cleanup());

  it('announces 512 streams to h2 and serves http/1.1 one request at a time (ALPN)', async () => {
    const latencyMs = 20;
    const server = await start({ tls: { cert: pki.pem.serverCert, key: pki.pem.serverKey }, faults: { latencyMs } });
    const session = http2.connect(server.url, { ca: pki.pem.ca });
    const settings = await new Promise<http2.Settings>((resolve) => session.once('remoteSettings', resolve));
    expect(settings.maxConcurrentStreams).toBe(512);
    session.close();

    const socket = tls.connect({
      host: '127.0.0.1',
      port: server.port,
      ca: pki.pem.ca,
      servername: 'localhost',
      ALPNProtocols: ['http/1.1'],
    });
    await new Promise((resolve, reject) => socket.once('secureConnect', resolve).once('error', reject));
    expect(socket.alpnProtocol).toBe('http/1.1');
    server.stats({ reset: true });
    const started = performance.now();
    const answered = readResponses(socket, 5);
    socket.write(pipelinedPuts(5, 't'));
    expect((await answered).map((r) => r.status)).toEqual(Array(5).fill(200));
    expect(performance.now() - started).toBeGreaterThanOrEqual(5 * latencyMs);
    expect(server.stats().maxInProgressOnOneConnection).toBe(1);
    socket.destroy();
  });
});
