import type { buildConnector as BuildConnector } from 'undici';
import type { Socket } from 'node:net';

/**
 * A connector whose sockets gather every write made in one turn of the event loop into a single syscall.
 *
 * undici writes each pipelined request with its own cork/uncork pair, so N requests cost N `writev` calls.
 * Here the first write of a turn corks the socket and a `setImmediate` uncorks it: undici's own uncork then
 * only lowers the cork count, and the whole batch leaves in one `writev` once the turn ends.
 */
export function batchingConnector(connect: BuildConnector.connector): BuildConnector.connector {
  return (opts, callback) =>
    connect(opts, (err, socket) => {
      if (err || !socket) {
        callback(err, null);
        return;
      }
      batchWrites(socket);
      callback(null, socket);
    });
}

/** Corks `socket` on its first write of a turn and uncorks it on the next `setImmediate`. */
export function batchWrites(socket: Socket): void {
  // Called with the socket as `this` below, as undici would call it.
  // eslint-disable-next-line @typescript-eslint/unbound-method
  const write = socket.write;
  let corked = false;
  const flush = (): void => {
    corked = false;
    if (!socket.destroyed) socket.uncork();
  };
  socket.write = function batchedWrite(this: Socket, ...args: unknown[]): boolean {
    if (!corked && !socket.destroyed) {
      corked = true;
      socket.cork();
      setImmediate(flush);
    }
    return (write as (...a: unknown[]) => boolean).apply(this, args);
  };
}
