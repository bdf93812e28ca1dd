import type { Http2Transport } from './h2/h2-transport.js';
import type { Http1Transport } from './http1-transport.js';
import type { ResponseHandler, Transport, TransportRequest, TransportStats, WireProtocol } from './transport.js';
import { TransportError, toTransportError } from './transport-error.js';
import { noTunnelDetail } from './proxy/tunnel.js';
import { unsentFailure } from './h2/unsent.js';

/**
 * `protocol: 'auto'`: HTTP/2 where the server speaks it, else HTTP/1.1. The first request opens an HTTP/2
 * connection (prior knowledge on http://, ALPN offering h2 and http/1.1 on https://); requests wait until it
 * is known how the server answered:
 * - its SETTINGS arrive: HTTP/2 from then on;
 * - it answers something else, chooses http/1.1 by ALPN, or says nothing for the settings timeout: HTTP/1.1;
 * - it closes a cleartext connection without a byte (what some HTTP/1.1-only servers do with the preface): the
 *   preface is tried once more on a new connection, since a server restarting or a balancer with no node ready
 *   closes connections alike; after a second such close, HTTP/1.1 is tried, and kept once it is answered: if its
 *   connection too closes before any answer, nothing is chosen, the requests fail, and the next one asks again;
 * - a forward proxy will not tunnel to an http:// origin: HTTP/1.1, which goes through it as a forwarding proxy;
 * - the connection fails (refused, unknown host, TLS refused): the waiting requests fail with that error, as
 *   they would on either protocol, and the next request tries again.
 */
export class AutoTransport implements Transport {
  private chosen: Http2Transport | Http1Transport | undefined;
  /** HTTP/1.1 chosen after silent closes, until its first answer confirms it. */
  private unconfirmed = false;
  private waiting: { req: TransportRequest; handler: ResponseHandler }[] = [];
  private probing: Promise<void> | undefined;
  /** Cleartext connections closed without a byte in answer to the preface so far. */
  private silentCloses = 0;
  private closed = false;

  constructor(
    private readonly makeH2: () => Http2Transport,
    private readonly makeH1: () => Http1Transport,
    private readonly tls: boolean,
    private readonly onProtocol?: (protocol: WireProtocol, why?: string) => void,
  ) {}

  /** The protocol chosen, once the first connection has told. */
  get protocol(): WireProtocol | undefined {
    return this.chosen?.protocol;
  }

  get stats(): TransportStats {
    return (
      this.chosen?.stats ?? {
        connections: this.probing === undefined ? 0 : 1,
        requests: [],
        waiting: this.waiting.length,
      }
    );
  }

  async detect(): Promise<WireProtocol> {
    while (this.chosen === undefined) {
      if (this.closed) throw new TransportError('shut', 'the transport is closed');
      await this.probe();
    }
    return this.chosen.protocol;
  }

  dispatch(req: TransportRequest, handler: ResponseHandler): void {
    if (this.chosen !== undefined) {
      this.chosen.dispatch(req, this.unconfirmed ? this.confirming(this.chosen, handler) : handler);
      return;
    }
    if (this.closed) {
      const err = new TransportError('shut', 'the transport is closed');
      queueMicrotask(() => handler.onError(err));
      return;
    }
    this.waiting.push({ req, handler });
    this.probe().catch(() => undefined);
  }

  /** Opens an HTTP/2 connection to see what the server speaks (one at a time), and chooses by its answer. */
  private probe(): Promise<void> {
    this.probing ??= this.ask().finally(() => {
      this.probing = undefined;
    });
    return this.probing;
  }

  private async ask(): Promise<void> {
    const h2 = this.makeH2();
    try {
      await h2.whenReady();
    } catch (err) {
      void h2.destroy();
      const e = err as { code?: string; socket?: { bytesRead?: number } };
      const silent = !this.tls && e.code === 'H2_CONNECTION_CLOSED' && e.socket?.bytesRead === 0;
      if (silent) this.silentCloses++;
      if (e.code === 'H2_NOT_SUPPORTED') {
        this.choose(this.makeH1(), false);
        return;
      }
      if (err instanceof TransportError && err.detail === noTunnelDetail) {
        // HTTP/2 to an http:// origin needs a tunnel; HTTP/1.1 goes through a forwarding proxy as it is.
        this.choose(this.makeH1(), false, `${err.message}; HTTP/2 to an http:// endpoint needs a CONNECT tunnel`);
        return;
      }
      if (silent && this.silentCloses >= 2) {
        this.silentCloses = 0;
        this.choose(this.makeH1(), true);
        return;
      }
      // Closed once without a byte: asked again (by the waiting requests, at once).
      if (silent && this.waiting.length > 0 && !this.closed) return this.ask();
      // None of the waiting requests left the process: whatever the connection died of, they were never sent.
      const failure = unsentFailure(err, this.tls);
      const waiting = this.waiting;
      this.waiting = [];
      for (const w of waiting) w.handler.onError(failure);
      throw failure;
    }
    this.choose(h2, false);
  }

  private choose(transport: Http2Transport | Http1Transport, unconfirmed: boolean, why?: string): void {
    this.chosen = transport;
    this.unconfirmed = unconfirmed;
    if (!unconfirmed) this.onProtocol?.(transport.protocol, why);
    const waiting = this.waiting;
    this.waiting = [];
    for (const w of waiting) this.dispatch(w.req, w.handler);
    if (this.closed) void transport.close();
  }

  /** A request on HTTP/1.1 chosen after silent closes: its answer confirms the choice, a close before any answer undoes it. */
  private confirming(transport: Http2Transport | Http1Transport, handler: ResponseHandler): ResponseHandler {
    return {
      onStart: (control) => handler.onStart?.(control),
      onHeaders: (status, headers) => {
        if (this.chosen === transport && this.unconfirmed) {
          this.unconfirmed = false;
          this.onProtocol?.(transport.protocol);
        }
        handler.onHeaders(status, headers);
      },
      onData: (chunk) => handler.onData(chunk),
      onComplete: () => handler.onComplete(),
      onError: (err) => {
        if (this.chosen === transport && this.unconfirmed && err.failure === 'closed') {
          // Neither HTTP/2 nor HTTP/1.1 was answered: the server is not there yet, not an HTTP/1.1 server.
          this.chosen = undefined;
          this.unconfirmed = false;
          void transport.destroy(err);
        }
        handler.onError(err);
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.chosen === undefined && this.waiting.length > 0) await this.probing?.catch(() => undefined);
    await this.chosen?.close();
  }

  async destroy(err?: Error): Promise<void> {
    this.closed = true;
    const failure =
      err === undefined ? new TransportError('shut', 'the transport is destroyed') : toTransportError(err, this.tls);
    const waiting = this.waiting;
    this.waiting = [];
    for (const w of waiting) w.handler.onError(failure);
    await this.chosen?.destroy(err);
  }
}
