import type { Dispatcher as DispatcherType } from 'undici';
import { Dispatcher } from './undici-parts.js';
import type { Http2Pool } from './h2/pool.js';
import type { Http1Pool } from './http1-pool.js';

/** The protocol a pool speaks, once known. */
export type WireProtocol = 'h2' | 'http1.1';

/**
 * `protocol: 'auto'`: HTTP/2 where the server speaks it, else HTTP/1.1. The first request opens an HTTP/2
 * connection (prior knowledge on http://, ALPN offering h2 and http/1.1 on https://); requests wait until it
 * is known how the server answered:
 * - its SETTINGS arrive: HTTP/2 from then on;
 * - it answers something else, chooses http/1.1 by ALPN, says nothing for the settings timeout, or closes a
 *   cleartext connection without a byte (what HTTP/1.1-only servers do with the preface): HTTP/1.1;
 * - the connection fails (refused, unknown host, TLS refused): the waiting requests fail with that error, as
 *   they would on either protocol, and the next request tries again.
 */
export class AutoPool extends Dispatcher {
  private chosen: Http2Pool | Http1Pool | undefined;
  private waiting: { opts: DispatcherType.DispatchOptions; handler: DispatcherType.DispatchHandler }[] = [];
  private probing: Http2Pool | undefined;
  private closed = false;

  constructor(
    private readonly makeH2: () => Http2Pool,
    private readonly makeH1: () => Http1Pool,
    private readonly tls: boolean,
    private readonly onProtocol?: (protocol: WireProtocol) => void,
  ) {
    super();
  }

  /** The protocol chosen, once the first connection has told. */
  get protocol(): WireProtocol | undefined {
    return this.chosen?.protocol;
  }

  /** Resolves with the protocol once the server has told (opening a connection to ask, if none is open). */
  async detect(): Promise<WireProtocol> {
    if (this.chosen !== undefined) return this.chosen.protocol;
    await this.probe();
    return this.chosen!.protocol;
  }

  override dispatch(opts: DispatcherType.DispatchOptions, handler: DispatcherType.DispatchHandler): boolean {
    if (this.chosen !== undefined) return this.chosen.dispatch(opts, handler);
    if (this.closed) {
      const err = Object.assign(new Error('The client is closed'), { code: 'UND_ERR_CLOSED' });
      queueMicrotask(() => (handler as { onError?: (e: Error) => void }).onError?.(err));
      return false;
    }
    this.waiting.push({ opts, handler });
    this.probe().catch(() => undefined);
    return false;
  }

  private probe(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const h2 = this.probing ?? this.makeH2();
      const first = this.probing === undefined;
      this.probing = h2;
      h2.whenReady().then(
        () => {
          if (first) this.choose(h2);
          resolve();
        },
        (err: Error & { code?: string; socket?: { bytesRead?: number } }) => {
          const notH2 = err.code === 'H2_NOT_SUPPORTED' || (!this.tls && err.code === 'UND_ERR_SOCKET' && err.socket?.bytesRead === 0);
          if (first) {
            this.probing = undefined;
            if (notH2) {
              void h2.destroy();
              this.choose(this.makeH1());
            } else {
              void h2.destroy();
              const waiting = this.waiting;
              this.waiting = [];
              for (const w of waiting) (w.handler as { onError?: (e: Error) => void }).onError?.(err);
            }
          }
          if (notH2) resolve();
          else reject(err);
        },
      );
    });
  }

  private choose(pool: Http2Pool | Http1Pool): void {
    this.chosen = pool;
    this.onProtocol?.(pool.protocol);
    const waiting = this.waiting;
    this.waiting = [];
    for (const w of waiting) pool.dispatch(w.opts, w.handler);
  }

  override close(callback?: () => void): Promise<void> {
    this.closed = true;
    const done = (this.chosen ?? this.probing)?.close() ?? Promise.resolve();
    if (callback !== undefined) {
      void done.then(callback);
      return undefined as unknown as Promise<void>;
    }
    return done;
  }

  override destroy(err?: Error | null | (() => void), callback?: () => void): Promise<void> {
    if (typeof err === 'function') {
      callback = err;
      err = undefined;
    }
    this.closed = true;
    const failure = err ?? Object.assign(new Error('The client is destroyed'), { code: 'UND_ERR_DESTROYED' });
    const waiting = this.waiting;
    this.waiting = [];
    for (const w of waiting) (w.handler as { onError?: (e: Error) => void }).onError?.(failure);
    const done = Promise.all([this.chosen?.destroy(failure), this.probing !== this.chosen ? this.probing?.destroy(failure) : undefined]).then(() => undefined);
    if (callback !== undefined) {
      void done.then(callback);
      return undefined as unknown as Promise<void>;
    }
    return done;
  }
}
