import type { buildConnector as BuildConnector } from 'undici';
import type { Socket } from 'node:net';

/**
 * Gathers what is written to one connection's socket in one turn of the event loop into a single syscall.
 *
 * undici writes each pipelined request between a cork and an uncork of its own, so N requests cost N `writev`
 * calls. The HTTP/1.1 transport holds the socket corked from the first request it hands undici in a turn (`hold`,
 * called before `Client.dispatch`, which writes a request with a body in bytes at once) until a `setImmediate`
 * lets it go: undici's own uncork then only lowers the cork count, and the whole batch leaves in one `writev`
 * once the turn ends. The connector holds a new socket too, for the requests undici writes as it connects.
 * Nothing of the socket is replaced: only its public `cork` and `uncork`.
 */
export class TurnBatch {
  private socket: Socket | undefined;
  /** The socket corked this turn, until `letGo` runs. */
  private held: Socket | undefined;
  private readonly letGo = (): void => {
    const s = this.held;
    this.held = undefined;
    if (s !== undefined && !s.destroyed) s.uncork();
  };

  /** The connection's socket, now `connect` has made it (a reconnect makes another). */
  attach(socket: Socket): void {
    this.socket = socket;
    this.hold();
  }

  /** Corks the socket for the rest of this turn, unless it is already. */
  hold(): void {
    const s = this.socket;
    if (this.held !== undefined || s === undefined || s.destroyed) return;
    this.held = s;
    s.cork();
    setImmediate(this.letGo);
  }
}

/** `connect`, telling `batch` of each socket it makes. */
export function batchingConnector(connect: BuildConnector.connector, batch: TurnBatch): BuildConnector.connector {
  return (opts, callback) =>
    connect(opts, (err, socket) => {
      if (err || !socket) {
        callback(err, null);
        return;
      }
      batch.attach(socket);
      callback(null, socket);
    });
}
