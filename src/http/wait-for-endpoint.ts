import type { ConnectionOptions } from './connection-options.js';
import { VespaBulkError } from '../core/errors.js';
import { Reachability, unreachableError } from './reachability.js';
import { createTransport } from './create-transport.js';
import { exchange, headerList } from './exchange.js';
import { TransportError } from './transport-error.js';

/**
 * `--wait S`: before a command starts, ask the endpoint's health check until it answers or S seconds are
 * over, as the official `vespa` CLI does: GET `/ApplicationStatus` every 2 s, each try bounded by 10 s.
 * Unlike it, any answer below 500 counts as up (a 401 or 404 from a proxy means something answers, and
 * the command's own requests will say precisely what is wrong); 5xx (a starting container) means not yet.
 */
export interface WaitForEndpointOptions
  extends Pick<ConnectionOptions, 'headers' | 'tls' | 'proxy' | 'proxyTls' | 'protocol'> {
  /** Base URL of the container; a path prefix is kept. */
  endpoint: string;
  /** How long to wait in total, in ms. 0 asks once. */
  waitMs: number;
  /** Time between probes. Default 2 s. */
  intervalMs?: number;
  /** Bound of one probe. Default 10 s. */
  probeTimeoutMs?: number;
  signal?: AbortSignal;
  /** Called after each probe that found the endpoint not answering, with why. */
  onRetry?: (cause: string, elapsedMs: number) => void;
}

/** What the wait ended with: the status that answered and how long it took. */
export interface EndpointAnswer {
  status: number;
  waitedMs: number;
}

/**
 * Pure: the pause before the next probe, or undefined when the time is up. The last pause is cut to end at
 * the deadline, so the last probe is made then: the whole wait is used, and not exceeded by a pause.
 */
export function nextProbeDelayMs(elapsedMs: number, waitMs: number, intervalMs: number): number | undefined {
  const left = waitMs - elapsedMs;
  return left > 0 ? Math.min(intervalMs, left) : undefined;
}

/**
 * Resolves once the endpoint answers (any status below 500), asked in the `protocol` the command that follows
 * speaks: with `h2`, a server that answers without HTTP/2 ends the wait at once with VB_PROTOCOL (it is up, and
 * waiting will not change what it speaks). Rejects with VB_UNREACHABLE naming the last
 * cause when `waitMs` passed without an answer, or VB_ABORTED when `signal` aborts.
 * @example
 * ```ts
 * import { feed, waitForEndpoint } from 'vespa-bulk';
 *
 * await waitForEndpoint({ endpoint: 'http://127.0.0.1:8080', waitMs: 60_000 });
 * await feed(['corpus.jsonl'], { endpoint: 'http://127.0.0.1:8080' });
 * ```
 */
export async function waitForEndpoint(options: WaitForEndpointOptions): Promise<EndpointAnswer> {
  const url = new URL(options.endpoint);
  const path = `${url.pathname.replace(/\/+$/, '')}/ApplicationStatus`;
  const intervalMs = options.intervalMs ?? 2_000;
  const probeTimeoutMs = options.probeTimeoutMs ?? 10_000;
  // A pool of its own: a refused connection leaves nothing behind in the command's. Pipelining 0 keeps no HTTP/1.1
  // connection between probes, each of which may be seconds apart.
  const transport = createTransport({
    origin: url.origin,
    protocol: options.protocol,
    connections: 1,
    pipelining: 0,
    tls: options.tls,
    proxy: options.proxy,
    proxyTls: options.proxyTls,
    batchWrites: false,
  });
  const headers = headerList(options.headers);
  const started = performance.now();
  try {
    for (;;) {
      if (options.signal?.aborted) throw abortError();
      const elapsed = performance.now() - started;
      const timeout = Math.max(1, Math.min(probeTimeoutMs, Math.max(options.waitMs - elapsed, intervalMs)));
      let cause: string;
      let failure: unknown;
      try {
        const res = await exchange(transport, {
          method: 'GET',
          path,
          headers,
          timeoutMs: timeout,
          ...(options.signal !== undefined && { signal: options.signal }),
        });
        await res.bytes(0).catch(() => undefined);
        if (res.status < 500) return { status: res.status, waitedMs: performance.now() - started };
        cause = `it answered ${res.status}`;
      } catch (err) {
        if (options.signal?.aborted) throw abortError();
        if (!(err instanceof TransportError)) throw err;
        // Up, but not speaking the HTTP/2 insisted on: waiting will not change that.
        if (err.failure === 'not-h2') throw new Reachability(options.endpoint).verdict(err)!;
        failure = err;
        cause = err.unreachable ?? err.message;
      }
      const now = performance.now() - started;
      const delay = nextProbeDelayMs(now, options.waitMs, intervalMs);
      if (delay === undefined) {
        const waited = options.waitMs > 0 ? ` (waited ${Math.round(now / 1000)} s)` : '';
        throw unreachableError(options.endpoint, `${cause}${waited}`, failure);
      }
      options.onRetry?.(cause, now);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        options.signal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
      });
    }
  } finally {
    await transport.destroy().catch(() => undefined);
  }
}

function abortError(): VespaBulkError {
  return new VespaBulkError('VB_ABORTED', 'the wait for the endpoint was stopped');
}
