import { startTcpRelay } from '../../benchmarks/lib/tcp-relay.js';

/** The bytes an HTTP/2 connection opens with (RFC 9113, 3.4); anything else is HTTP/1.x. */
const preface = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/** A TCP relay in front of a server that tells, per connection the client opened, which HTTP it spoke. */
export interface WireTap {
  /** The relay's origin: give it to the client instead of the server's. */
  url: string;
  /** The protocol of each connection the client opened, in the order they spoke first, by their first bytes. */
  readonly connections: ReadonlyArray<'h2' | 'http1.1'>;
  close(): Promise<void>;
}

/**
 * Relays loopback connections to `target` (http://host:port) byte for byte, reading only their first bytes: the
 * server behind it is the real one, and the test sees what went on the wire, not what the client says it sent.
 */
export async function startWireTap(target: string): Promise<WireTap> {
  const connections: Array<'h2' | 'http1.1'> = [];
  const heads = new Map<number, Buffer>();
  const told = new Set<number>();
  const relay = await startTcpRelay(target, {
    onClientData: (chunk, connection) => {
      if (told.has(connection)) return;
      const head = Buffer.concat([heads.get(connection) ?? Buffer.alloc(0), chunk]);
      if (head.length < preface.length && preface.subarray(0, head.length).equals(head)) {
        heads.set(connection, head);
        return;
      }
      heads.delete(connection);
      told.add(connection);
      connections.push(head.subarray(0, preface.length).equals(preface) ? 'h2' : 'http1.1');
    },
  });
  return { url: relay.url, connections, close: () => relay.close() };
}
