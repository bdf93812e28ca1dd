import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import { serverTlsOptions, type ServerTlsOptions } from './auth.js';
import { InProgress } from './in-progress.js';

/**
 * One TCP port that speaks HTTP/1.1 (keep-alive, pipelining served one request at a time) and cleartext HTTP/2
 * with prior knowledge (512 concurrent streams), as the container's Jetty does: the first bytes of each
 * connection decide. A connection that opens with the HTTP/2 preface goes to an HTTP/2 server, anything else to
 * an HTTP/1.1 server; the sniffed bytes are put back first.
 */
export type RequestListener = (
  req: http.IncomingMessage | http2.Http2ServerRequest,
  res: http.ServerResponse | http2.Http2ServerResponse,
) => void;

const idleTimeoutMs = 65_000;

/** The container's `http2.maxConcurrentStreams` (jdisc.http.connector.def). */
export const maxConcurrentStreams = 512;

const preface = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

export interface Listener {
  server: net.Server;
  /** The requests in progress on this port, per connection and overall. */
  inProgress: InProgress;
  /** Resolves once the port is closed and every connection is gone. */
  close(): Promise<void>;
}

export interface ListenerOptions {
  /** Serve HTTPS instead: HTTP/2 and HTTP/1.1 chosen by ALPN, optionally demanding client certificates. */
  tls?: ServerTlsOptions;
  /** Where the port's requests in progress are counted; a new one by default. */
  inProgress?: InProgress;
}

export function createListener(handler: RequestListener, options: ListenerOptions = {}): Listener {
  const inProgress = options.inProgress ?? new InProgress();
  const handle = inProgress.wrap(handler);
  if (options.tls !== undefined) return createTlsListener(handle, inProgress, options.tls);
  const h1 = http.createServer({ keepAlive: true, noDelay: true }, handle);
  h1.keepAliveTimeout = idleTimeoutMs;
  h1.headersTimeout = idleTimeoutMs + 1000;
  h1.requestTimeout = 0;
  h1.maxRequestsPerSocket = 0;
  // A client that half-closes after its pipelined requests still gets every answer, one after the other, as from
  // Jetty; Node would end the connection at once, dropping the requests that wait their turn. (The socket is
  // made half-open as it goes to this server.)
  (h1 as http.Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  const h2 = http2.createServer({ settings: { maxConcurrentStreams }, maxSessionMemory: 64 }, handle);
  h2.on('sessionError', () => {});

  const connections = new Connections();
  const server = net.createServer({ noDelay: true }, (socket) => {
    connections.add(socket);
    // A connection that never says anything is dropped like an idle keep-alive connection.
    const onIdle = (): void => {
      socket.destroy();
    };
    socket.setTimeout(idleTimeoutMs, onIdle);
    let seen: Buffer | undefined;
    const onData = (chunk: Buffer): void => {
      seen = seen === undefined ? chunk : Buffer.concat([seen, chunk]);
      const n = Math.min(seen.length, preface.length);
      const isH2Prefix = seen.compare(preface, 0, n, 0, n) === 0;
      if (isH2Prefix && seen.length < preface.length) return; // Not enough bytes to tell yet.
      socket.off('data', onData);
      socket.setTimeout(0);
      socket.off('timeout', onIdle);
      if (isH2Prefix) {
        // The HTTP/2 session reads bytes already buffered in the socket (socket.read()) on its first tick, so
        // they are put back and the socket left paused: flowing would hand them to no listener.
        socket.pause();
        socket.unshift(seen);
        h2.emit('connection', socket);
      } else {
        // The HTTP/1.1 server's own 'data' listener parses what was sniffed; later bytes go straight to its parser.
        socket.allowHalfOpen = true;
        h1.emit('connection', socket);
        socket.emit('data', seen);
      }
    };
    socket.on('data', onData);
  });

  return {
    server,
    inProgress,
    close: () => {
      const closed = connections.close(server);
      h1.close();
      h2.close();
      return closed;
    },
  };
}

/** Starts listening on `host`:`port` (0: a free one); resolves with the port taken. */
export function listen(listener: Listener, port: number, host: string): Promise<number> {
  const { server } = listener;
  return new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : port);
    });
  });
}

/**
 * The TLS port: one secure HTTP/2 server that also takes HTTP/1.1 (allowHTTP1), the protocol agreed by ALPN
 * (h2 first, then http/1.1), as the container does over TLS. A client certificate the CA did not sign is
 * refused in the handshake when one is demanded.
 */
function createTlsListener(handle: RequestListener, inProgress: InProgress, tls: ServerTlsOptions): Listener {
  const server = http2.createSecureServer(
    {
      ...serverTlsOptions(tls),
      allowHTTP1: true,
      ALPNProtocols: ['h2', 'http/1.1'],
      settings: { maxConcurrentStreams },
      maxSessionMemory: 64,
    },
    handle,
  );
  // The HTTP/1.1 side reads these as an http.Server would; 0 lets long visits and slow feeds run.
  const h1Settings = server as unknown as { keepAliveTimeout: number; headersTimeout: number; requestTimeout: number };
  h1Settings.keepAliveTimeout = idleTimeoutMs;
  h1Settings.headersTimeout = idleTimeoutMs + 1000;
  h1Settings.requestTimeout = 0;
  server.on('sessionError', () => {});
  // Refused handshakes (no or foreign client certificate, plain HTTP to the TLS port) only end that socket.
  server.on('tlsClientError', (_err, socket: net.Socket) => socket.destroy());
  const connections = new Connections();
  server.on('connection', (socket: net.Socket) => {
    socket.setNoDelay(true);
    connections.add(socket);
  });
  return { server, inProgress, close: () => connections.close(server) };
}

/** The open connections of a port: closing it ends them at once rather than waiting for idle keep-alive ones. */
class Connections {
  private readonly sockets = new Set<net.Socket>();

  add(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    // A peer that resets is that connection's end, not the server's.
    socket.on('error', () => {});
  }

  /** Closes `server`, ending every connection now; resolves once the port is closed. */
  close(server: net.Server): Promise<void> {
    return new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const s of this.sockets) s.destroy();
    });
  }
}
