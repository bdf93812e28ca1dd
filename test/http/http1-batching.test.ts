import { createServer, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Http1Transport } from '../../src/http/http1-transport.js';
import { send } from '../../src/http/exchange.js';

/** HTTP/1.1 write batching: the requests of one turn leave in one write, on a new connection and on an open one. */
const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

/**
 * A raw HTTP/1.1 server that answers every GET and records how many requests each read of a connection held; with
 * `closeAfter`, each connection's answer to that many requests says `connection: close` and the socket ends.
 */
async function countingServer(closeAfter = Infinity): Promise<{
  url: string;
  reads: number[];
  connections: () => number;
}> {
  const reads: number[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    let pending = '';
    let answered = 0;
    socket.on('data', (chunk: Buffer) => {
      pending += chunk.toString('latin1');
      const requests = pending.split('\r\n\r\n');
      pending = requests.pop()!;
      reads.push(requests.length);
      for (let i = 0; i < requests.length; i++) {
        const last = ++answered === closeAfter;
        socket.write(
          `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n${last ? 'connection: close\r\n' : ''}\r\n{}`,
        );
        if (last) socket.end();
      }
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(
    () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  );
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    reads,
    connections: () => sockets.size,
  };
}

describe('HTTP/1.1 write batching', () => {
  it('sends the pipelined requests of one turn in one write, as the connection opens and once it is open', async () => {
    const { url, reads, connections } = await countingServer();
    const pool = new Http1Transport(url, { connections: 1, pipelining: 8, batchWrites: true });
    closers.push(() => pool.destroy());
    const batch = (n: number): Promise<number[]> =>
      Promise.all(
        Array.from({ length: n }, (_, i) => send(pool, { method: 'GET', path: `/${i}` }).then((r) => r.status)),
      );

    expect(await batch(8)).toEqual(Array(8).fill(200));
    expect(reads).toEqual([8]);
    expect(await batch(8)).toEqual(Array(8).fill(200));
    expect(reads).toEqual([8, 8]);
    expect(connections()).toBe(1);
  });

  it('goes on batching on the socket undici makes after the server closed the first', async () => {
    // The first connection's fourth answer closes it: the next batch goes on a socket the connector makes anew.
    const { url, reads, connections } = await countingServer(4);
    const pool = new Http1Transport(url, { connections: 1, pipelining: 4, batchWrites: true });
    closers.push(() => pool.destroy());
    const batch = (): Promise<number[]> =>
      Promise.all(
        Array.from({ length: 4 }, (_, i) => send(pool, { method: 'GET', path: `/${i}` }).then((r) => r.status)),
      );
    expect(await batch()).toEqual([200, 200, 200, 200]);
    expect(await batch()).toEqual([200, 200, 200, 200]);
    expect(reads).toEqual([4, 4]);
    expect(connections()).toBe(2);
  });
});
