import net from 'node:net';

/** The bytes an HTTP/2 connection opens with (RFC 9113, 3.4); anything else is HTTP/1.x. */
const preface = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/** A TCP relay in front of a server that tells, per connection the client opened, which HTTP it spoke. */
export interface WireTap {
  /** The relay's origin: give it to the client instead of the server's. */
  url: string;
  /** The protocol of each connection the client opened, in order, by its first bytes. */
  readonly connections: ReadonlyArray<'h2' | 'http1.1'>;
  close(): Promise<void>;
}

/**
 * Relays loopback connections to `target` (http://host:port) byte for byte, reading only their first bytes: the
 * server behind it is the real one, and the test sees what went on the wire, not what the client says it sent.
 */
export async function startWireTap(target: string): Promise<WireTap> {
  const to = new URL(target);
  const connections: Array<'h2' | 'http1.1'> = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(to.port), to.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    const seen: Buffer[] = [];
    const sniff = (chunk: Buffer): void => {
      seen.push(chunk);
      const head = Buffer.concat(seen);
      if (head.length < preface.length && preface.subarray(0, head.length).equals(head)) return;
      client.off('data', sniff);
      connections.push(head.subarray(0, preface.length).equals(preface) ? 'h2' : 'http1.1');
    };
    client.on('data', sniff);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    connections,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}
