import { afterEach } from 'vitest';
import { send as sendNow } from '../../src/http/exchange.js';
import { Http2Transport } from '../../src/http/h2/h2-transport.js';
import type { H2PoolOptions } from '../../src/http/h2/pool-options.js';
import type { H2Error } from '../../src/http/h2/errors.js';
import { toTransportError, type TransportError } from '../../src/http/transport-error.js';
import type { TransportRequest } from '../../src/http/transport.js';
import { Peer } from './h2-peer.js';

/**
 * The client side of the frame-level peer tests (test/http/h2/peer-*.test.ts): pools on fresh peers, closed after
 * each test, and the ways a test sends and expects a failure.
 */

const cleanups: (() => unknown)[] = [];

/** Registers the closing of what `peerPool` and `later` opened, after each test of the calling file. */
export function closeAfterEach(): void {
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
}

/** Closes `c` after the current test. */
export function later(c: () => unknown): void {
  cleanups.push(c);
}

/** A pool on a fresh peer; its timeouts long enough that no test passes or fails by one. */
export async function peerPool(options: H2PoolOptions = {}): Promise<{ peer: Peer; pool: Http2Transport }> {
  const peer = await Peer.start();
  later(() => peer.close());
  const pool = new Http2Transport(peer.url, { connections: 1, timeoutMs: 30_000, ...options });
  later(() => pool.destroy());
  return { peer, pool };
}

/** send(), with its failure taken care of whenever the test awaits it (often after other things, or never). */
export function send(pool: Http2Transport, req: TransportRequest): ReturnType<typeof sendNow> {
  const p = sendNow(pool, req);
  p.catch(() => undefined);
  return p;
}

/** The failure of a request that must fail; an answer fails the test, naming it. */
export async function fails(p: Promise<unknown>): Promise<TransportError> {
  const out = await p.then(
    (res) => ({ res }),
    (err: unknown) => ({ err }),
  );
  if (!('err' in out)) throw new Error(`expected the request to fail; it was answered: ${JSON.stringify(out.res)}`);
  return toTransportError(out.err);
}

/** The H2Error under a failed request. */
export function h2Cause(err: unknown): H2Error {
  return (err as TransportError).cause as H2Error;
}
