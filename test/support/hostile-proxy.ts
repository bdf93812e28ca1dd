import net, { type AddressInfo } from 'node:net';

/**
 * A proxy of our own for the cases squid cannot do: it misbehaves at the byte level. It reads a CONNECT request's
 * head (up to the blank line) and then does what the test asked. A tunnel is a plain byte pipe, nothing parsed
 * after the head, so TLS and h2 pass through untouched. Use squid (./squid.ts) for a proxy that behaves.
 */
export type ProxyBehaviour =
  /** A correct tunnel: 200, then pipes to the target (the CONNECT authority). */
  | { kind: 'tunnel' }
  /** Writes these bytes (e.g. a 407 with Proxy-Authenticate), then closes. */
  | { kind: 'answer'; raw: string | Buffer }
  /** Closes without a byte after reading the head. */
  | { kind: 'close' }
  /** Resets the connection (RST) after reading the head. */
  | { kind: 'reset' }
  /** Reads the head and never answers. */
  | { kind: 'silent' }
  /** Tunnels, then destroys both sides once `afterBytes` bytes have come from the target. */
  | { kind: 'tunnel-then-cut'; afterBytes: number };

type Behave = ProxyBehaviour | ((index: number) => ProxyBehaviour);

export interface HostileProxy {
  /** http://127.0.0.1:PORT */
  url: string;
  port: number;
  /** CONNECT request heads received, raw text up to and with the blank line, in order. */
  requests: string[];
  /** Behaviour for the next connections; a function gets the connection's index (0 for the first accepted). */
  behave(b: Behave): void;
  /** Destroys every connection, both sides, and stops listening. */
  close(): Promise<void>;
}

const headEnd = Buffer.from('\r\n\r\n');
/** A head longer than this is not a CONNECT request: the connection is closed. */
const maxHead = 64 * 1024;

/** host:port from a CONNECT request line's authority, IPv6 literals in brackets. */
function target(head: string): { host: string; port: number } | undefined {
  const m = /^CONNECT (\S+) HTTP\/1\.[01]\r\n/.exec(head);
  const authority = m ? /^\[?([^\]]+?)\]?:(\d+)$/.exec(m[1]) : null;
  return authority ? { host: authority[1], port: Number(authority[2]) } : undefined;
}

export async function startHostileProxy(initial: Behave = { kind: 'tunnel' }): Promise<HostileProxy> {
  let behaviour = initial;
  let accepted = 0;
  const requests: string[] = [];
  const sockets = new Set<net.Socket>();
  const track = (s: net.Socket) => {
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
  };

  const act = (client: net.Socket, b: ProxyBehaviour, head: string, rest: Buffer) => {
    switch (b.kind) {
      case 'answer':
        client.end(b.raw);
        return;
      case 'close':
        client.end();
        return;
      case 'reset':
        client.resetAndDestroy();
        return;
      case 'silent':
        return;
      case 'tunnel':
      case 'tunnel-then-cut': {
        const to = target(head);
        if (to === undefined) {
          client.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
          return;
        }
        const upstream = net.connect(to.port, to.host);
        track(upstream);
        upstream.on('error', () => client.destroy());
        upstream.on('connect', () => {
          client.write('HTTP/1.1 200 Connection established\r\n\r\n');
          if (rest.length > 0) upstream.write(rest);
          client.pipe(upstream);
          if (b.kind === 'tunnel') {
            upstream.pipe(client);
            return;
          }
          let left = b.afterBytes;
          upstream.on('data', (chunk: Buffer) => {
            if (left <= 0) return;
            const part = chunk.subarray(0, left);
            left -= part.length;
            client.write(part);
            if (left <= 0) {
              client.destroy();
              upstream.destroy();
            }
          });
        });
        // Either side ending ends the other, as a tunnel does; a destroy cuts both.
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
        return;
      }
    }
  };

  const server = net.createServer((client) => {
    const index = accepted++;
    track(client);
    let buffered = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf(headEnd);
      if (end < 0) {
        if (buffered.length > maxHead) client.destroy();
        return;
      }
      client.off('data', onData);
      client.pause();
      const head = buffered.subarray(0, end + headEnd.length).toString('latin1');
      requests.push(head);
      const b = typeof behaviour === 'function' ? behaviour(index) : behaviour;
      act(client, b, head, buffered.subarray(end + headEnd.length));
    };
    client.on('data', onData);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    behave(b) {
      behaviour = b;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
