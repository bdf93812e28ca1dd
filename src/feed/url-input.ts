import type { ProxySetting } from '../http/proxy/proxy-route.js';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { decompress } from './decompress.js';
import { type TlsOptions } from '../http/transport.js';
import { createTransport } from '../http/create-transport.js';
import { exchange, header } from '../http/exchange.js';
import { TransportError } from '../http/transport-error.js';
import { VespaBulkError } from '../core/errors.js';
import { defaultRetryPolicy, retryDelay, type RetryPolicy } from '../http/retry-delay.js';

/** True for an input named by an `http://` or `https://` URL. */
export function isUrlInput(name: string): boolean {
  return /^https?:\/\//i.test(name);
}

/**
 * The URL as it may be shown: origin and path, the query replaced by `?…`. A presigned URL's query is a
 * credential, so it stays out of logs, checkpoints and failure reasons; origin and path are what identify
 * the input when a checkpoint is matched to a rerun (whose link may carry a fresh signature).
 */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}${u.search !== '' ? '?…' : ''}`;
  } catch {
    return url.replace(/[?#].*$/s, '?…');
  }
}

export interface UrlInputOptions {
  /** Byte offset in the (decompressed) body to start at: resuming from a checkpoint. Default 0. */
  from?: number;
  /** TLS options of the request (the feed's `tls`: its `ca` is trusted here too). */
  tls?: TlsOptions;
  /** The feed's proxy: see `TransportOptions.proxy` (NO_PROXY and the environment apply to the URL's own host). */
  proxy?: ProxySetting;
  /** See `TransportOptions.proxyTls`. */
  proxyTls?: TlsOptions;
  /** Reconnects after a cut connection or a 5xx, in a row without progress. Default 10. */
  maxRetries?: number;
  /** First backoff delay in ms, doubled per retry up to 5 s (`retryDelay`, without jitter). Default 200. */
  backoffMs?: number;
  /** Bytes per gunzip chunk. */
  chunkBytes?: number;
}

/** What `openUrlInput` returns: the body from `start` on (decompressed when gzip), and where that is. */
export interface UrlInput {
  stream: Readable;
  /** Offset in the decompressed body of the stream's first byte: `from` for plain bodies, 0 for gzip (read from the start; the caller skips). */
  start: number;
}

function isGzip(url: URL, headers: readonly string[]): boolean {
  const value = (name: string): string => (header(headers, name) ?? '').toLowerCase();
  return (
    url.pathname.endsWith('.gz') ||
    value('content-encoding').includes('gzip') ||
    /^application\/(x-)?gzip\b/.test(value('content-type'))
  );
}

/** A response's body as it is read, and the way to leave the rest unread. */
interface Body {
  chunks: AsyncIterable<Buffer>;
  cancel(): void;
}

async function* nothing(): AsyncGenerator<Buffer> {}

/**
 * Opens a URL input as a stream of its body. A plain body is asked for from `from` on with `Range`; a gzip
 * one (by the path's `.gz`, `Content-Encoding: gzip` or `Content-Type: application/gzip`) cannot be entered
 * in the middle, so it is read from the start and the caller skips to the position. A connection cut
 * mid-body is reopened with `Range: bytes=N-` (N: the bytes received so far); a server that ignores Range
 * (200) is re-read from the start with the first N bytes dropped.
 */
/** `onWireBytes` counts the bytes received (compressed for gzip), for the ETA. */
export async function openUrlInput(
  url: string,
  options: UrlInputOptions = {},
  onWireBytes: (n: number) => void = () => {},
): Promise<UrlInput> {
  const shown = redactUrl(url);
  const parsed = new URL(url);
  // A URL input is any web server: HTTP/1.1, which every one speaks.
  const transport = createTransport({
    origin: parsed.origin,
    protocol: 'http1.1',
    connections: 1,
    ...(options.tls !== undefined && { tls: options.tls }),
    proxy: options.proxy,
    proxyTls: options.proxyTls,
  });
  // The one retry policy, without jitter: a GET is safe to repeat, and one reader has no one to spread out from.
  const policy: RetryPolicy = {
    ...defaultRetryPolicy,
    maxRetries: options.maxRetries ?? 10,
    baseDelayMs: options.backoffMs ?? 200,
    maxDelayMs: 5000,
    factor: 2,
    jitter: 0,
  };
  let failures = 0;
  /** Counts one more failure in a row; the wait before the next try, or 0 when the retries are spent. */
  const nextDelay = (): number => retryDelay({ attempt: ++failures, safeToRepeat: true }, policy);

  const fail = (
    message: string,
    code: 'VB_HTTP_STATUS' | 'VB_TRANSPORT' | 'VB_BAD_RESPONSE',
    cause?: unknown,
    status?: number,
  ): VespaBulkError => new VespaBulkError(code, `cannot read input '${shown}': ${message}`, { cause, status });

  /** One response from `at` on (wire bytes); retries 5xx and transport errors. */
  async function get(at: number): Promise<{ body: Body; skip: number; gzip: boolean; length?: number }> {
    for (;;) {
      try {
        const res = await exchange(transport, {
          method: 'GET',
          path: `${parsed.pathname}${parsed.search}`,
          headers: at > 0 ? ['range', `bytes=${at}-`] : [],
        });
        const gzip = isGzip(parsed, res.headers);
        const length = Number(header(res.headers, 'content-length') ?? NaN);
        const body: Body = { chunks: res.chunks(), cancel: () => res.cancel() };
        if (res.status === 206 && at > 0) {
          const contentRange = header(res.headers, 'content-range') ?? '';
          const range = /^bytes (\d+)-/.exec(contentRange);
          if (range === null || Number(range[1]) !== at) {
            res.cancel();
            throw fail(`asked for bytes from ${at}, got Content-Range '${contentRange}'`, 'VB_BAD_RESPONSE');
          }
          return { body, skip: 0, gzip, length: Number.isFinite(length) ? at + length : undefined };
        }
        if (res.status === 416 && at > 0) {
          res.cancel();
          return { body: { chunks: nothing(), cancel: () => undefined }, skip: 0, gzip };
        }
        if (res.status === 200) return { body, skip: at, gzip, length: Number.isFinite(length) ? length : undefined };
        await res.bytes(0).catch(() => {});
        const err = fail(`HTTP ${res.status}`, 'VB_HTTP_STATUS', undefined, res.status);
        if (res.status < 500) throw err;
        throw Object.assign(err, { retriable: true });
      } catch (err) {
        const retriable =
          !(err instanceof VespaBulkError) ||
          err instanceof TransportError ||
          (err as { retriable?: boolean }).retriable === true;
        const delay = retriable ? nextDelay() : 0;
        if (delay === 0)
          throw err instanceof VespaBulkError && !(err instanceof TransportError)
            ? err
            : fail((err as Error).message, 'VB_TRANSPORT', err);
        await sleep(delay);
      }
    }
  }

  // Ranges address the wire bytes: for gzip those are compressed, so a resume there starts over at 0.
  // A .zst body, like a .gz one, cannot be entered in the middle.
  const zstd = parsed.pathname.endsWith('.zst');
  let first = await get(parsed.pathname.endsWith('.gz') || zstd ? 0 : (options.from ?? 0));
  if (first.gzip && !parsed.pathname.endsWith('.gz') && (options.from ?? 0) > 0) {
    first.body.cancel();
    first = await get(0);
  }
  const gzip = first.gzip;
  const wireStart = gzip || zstd ? 0 : (options.from ?? 0);

  async function* wire(): AsyncGenerator<Buffer> {
    let at = wireStart;
    let current = first;
    try {
      for (;;) {
        let skip = current.skip;
        let delay: number;
        try {
          for await (const chunk of current.body.chunks) {
            let buf = chunk;
            if (skip > 0) {
              const drop = Math.min(skip, buf.length);
              skip -= drop;
              buf = buf.subarray(drop);
              if (buf.length === 0) continue;
            }
            at += buf.length;
            failures = 0;
            onWireBytes(buf.length);
            yield buf;
          }
          // A body that ends short of its Content-Length was cut too (not every cut raises an error).
          if (current.length === undefined || at >= current.length) return;
          delay = nextDelay();
          if (delay === 0) throw fail(`body ended at byte ${at} of ${current.length}`, 'VB_TRANSPORT');
        } catch (err) {
          if (err instanceof VespaBulkError && !(err instanceof TransportError)) throw err;
          delay = nextDelay();
          if (delay === 0) throw fail((err as Error).message, 'VB_TRANSPORT', err);
        }
        current.body.cancel();
        await sleep(delay);
        current = await get(at);
      }
    } finally {
      current.body.cancel();
      void transport.destroy().catch(() => {});
    }
  }

  const raw = Readable.from(wire(), { objectMode: false });
  if (!gzip && !zstd) return { stream: raw, start: wireStart };
  // An answer that says gzip (a header can, whatever the path) is gzip, a .zst path included.
  return { stream: decompress(raw, gzip ? 'gzip' : 'zstd', options.chunkBytes ?? 256 * 1024), start: 0 };
}
