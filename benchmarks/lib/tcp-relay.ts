import net from 'node:net';

/** A TCP relay on 127.0.0.1 in front of a loopback server: the benches' delaying network, the tests' wire tap. */
export interface TcpRelay {
  /** The relay's origin: give it to the client instead of the server's. */
  url: string;
  close(): Promise<void>;
}

export interface TcpRelayOptions {
  /**
   * Holds every chunk this long before passing it on, in each direction: a network with a round trip of twice this
   * and no bandwidth limit. What paces a transfer through it is then the client's and the server's own flow control
   * (HTTP/2 windows), as on a real network: the relay reads as fast as data comes. Default 0: at once.
   */
  oneWayMs?: number;
  /** Sees each chunk the client sends, on each connection (`connection` counts from 0). */
  onClientData?: (chunk: Buffer, connection: number) => void;
}

export async function startTcpRelay(target: string, options: TcpRelayOptions = {}): Promise<TcpRelay> {
  const to = new URL(target);
  const oneWayMs = options.oneWayMs ?? 0;
  const sockets = new Set<net.Socket>();
  // Equal delays keep the order.
  const later = (action: () => void): void => void (oneWayMs > 0 ? setTimeout(action, oneWayMs) : action());
  const forward = (from: net.Socket, into: net.Socket, seen?: (chunk: Buffer) => void): void => {
    from.on('data', (chunk: Buffer) => {
      seen?.(chunk);
      later(() => {
        if (!into.destroyed) into.write(chunk);
      });
    });
    from.on('end', () => later(() => into.end()));
  };
  let connections = 0;
  const server = net.createServer((client) => {
    const connection = connections++;
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
    const onClientData = options.onClientData;
    forward(client, upstream, onClientData === undefined ? undefined : (chunk) => onClientData(chunk, connection));
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
