import type { Socket } from 'node:net';

/**
 * A connection still being made: a tunnel through a forward proxy is a connection, a CONNECT exchange and maybe a TLS
 * handshake before the first byte of its own protocol. It resolves with the socket connected (TLS done), paused, with
 * any bytes that came after the proxy's answer put back, for the taker to resume once it listens; it rejects with a
 * `TransportError`. `cancel` gives it up: the promise then never settles and whatever was opened is closed.
 */
export interface PendingSocket {
  readonly promise: Promise<Socket>;
  cancel(): void;
}

export function isPending(socket: Socket | PendingSocket): socket is PendingSocket {
  return 'promise' in socket && 'cancel' in socket;
}
