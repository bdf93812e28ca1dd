import net from 'node:net';

/**
 * A TCP relay on 127.0.0.1 that holds every chunk `oneWayMs` before passing it on, in each direction: a network
 * with a round trip of 2 x `oneWayMs` and no bandwidth limit, between a client and a loopback server. What
 * paces a transfer through it is the client's and the server's own flow control (HTTP/2 windows), as on a real
 * network, not the relay: it reads as fast as data comes.
 */
export interface DelayRelay {
  url: string;
  close(): Promise<void>;
}

export async function startDelayRelay(target: string, oneWayMs: number): Promise<DelayRelay> {
  const to = new URL(target);
  const sockets = new Set<net.Socket>();
  const forward = (from: net.Socket, into: net.Socket): void => {
    from.on('data', (chunk: Buffer) => {
      // Equal delays keep the order.
      setTimeout(() => {
        if (!into.destroyed) into.write(chunk);
      }, oneWayMs);
    });
    from.on('end', () => setTimeout(() => into.end(), oneWayMs));
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(to.port), to.hostname);
    for (const s of [client, upstream]) {
      s.setNoDelay(true);
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    forward(client, upstream);
    forward(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}
