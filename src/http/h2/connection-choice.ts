/**
 * Which of a pool's HTTP/2 connections takes the next request, and when a connection is renewed: the policy,
 * pure, so that the pool (h2-transport.ts) only applies it and the tests check it without a socket.
 *
 * A layer-4 balancer places each new connection on a container node and never moves it, so a pool's connections
 * are its view of the nodes and a connection's latency is its node's. Requests go by power of two choices over the
 * ready connections, each scored `(streams open + 1) × peak-EWMA latency` (Finagle's P2C/PeakEWMA): two
 * connections drawn at random, the lower score wins. The streams spread the load at once, before any answer; the
 * latency moves it away from a node that is slow or overloaded; the random draw keeps every connection sampled and
 * costs the same whatever the count. Connections are renewed after an age (less a random part, so they go one by
 * one) because the balancer places only new ones: renewal is how a restarted or added node gets traffic again.
 */
import { isOverloaded } from '../retry-delay.js';

/** What the choice reads of a connection, and the latency estimate it keeps on it. */
export interface Choosable {
  /** Streams open now. */
  readonly active: number;
  /** More streams it takes now (0: full, or no longer taking any). */
  readonly room: number;
  /** Peak-EWMA of its latency, in ms; 0 until its first sample. */
  cost: number;
  /** When `cost` took its last sample, on the clock of `now` (ms). */
  sampledAt: number;
  /** When its oldest request still without an answer's headers was sent, on the clock of `now`; Infinity: none. */
  readonly unansweredSince: number;
}

/**
 * How fast the estimate forgets, in ms: a sample's weight is 1 - e^(-gap/latencyDecayMs), gap the time since the
 * connection's previous sample, so the estimate weighs time, not request counts (a busy connection does not forget
 * faster than a quiet one). 10 s, Finagle's and Linkerd's default: long next to a round trip, short next to a
 * connection's age.
 */
export const latencyDecayMs = 10_000;

/**
 * Added to every cost so that connections without a sample (the pool's first moments) are still told apart by
 * their streams, and a cost decayed to nothing does not make every stream count on it free.
 */
const costFloorMs = 0.001;

/** Below this much time since a connection's last sample its cost is read as it is: e^(-0.1 s / 10 s) is 0.99. */
const noDecayMs = 100;

/**
 * Takes one latency sample: a sample above the estimate replaces it at once (the peak: a node that turns slow is
 * avoided from its first slow answer), a lower one moves it by its time weight (a node that turns fast again wins
 * its share back over seconds).
 */
export function observeLatency(c: Choosable, sampleMs: number, now: number): void {
  if (sampleMs >= c.cost) c.cost = sampleMs;
  else {
    const w = Math.exp((c.sampledAt - now) / latencyDecayMs);
    c.cost = c.cost * w + sampleMs * (1 - w);
  }
  c.sampledAt = now;
}

/**
 * The score the choice compares: `(active + 1) × cost`. A connection left without samples has its cost read as
 * decaying toward 0, so one that was slow once is tried again before long rather than shunned for good. But a
 * connection without samples because it stopped answering (a GC pause, a black-holed path) must not look cheaper
 * for it: once its oldest unanswered request has waited longer than its estimate, that wait is its cost, and grows
 * while nothing comes back.
 */
export function loadOf(c: Choosable, now: number): number {
  const waited = now - c.unansweredSince;
  let cost: number;
  if (waited > c.cost) cost = waited;
  else {
    const idle = now - c.sampledAt;
    cost = idle < noDecayMs ? c.cost : c.cost * Math.exp(-idle / latencyDecayMs);
  }
  return (c.active + 1) * (cost + costFloorMs);
}

/**
 * The connection for the next request: the better of two drawn at random among `ready` (those with room; the
 * least loaded of all when both drawn are full), or undefined when none has room. `random` is `Math.random` but
 * for tests. No allocation, and O(1) unless the two drawn are full.
 */
export function chooseConnection<T extends Choosable>(
  ready: readonly T[],
  now: number,
  random: () => number,
): T | undefined {
  const n = ready.length;
  if (n === 0) return undefined;
  if (n === 1) return ready[0].room > 0 ? ready[0] : undefined;
  const i = Math.floor(random() * n);
  let j = Math.floor(random() * (n - 1));
  if (j >= i) j++;
  const a = ready[i];
  const b = ready[j];
  const aRoom = a.room > 0;
  const bRoom = b.room > 0;
  if (aRoom && bRoom) return loadOf(a, now) <= loadOf(b, now) ? a : b;
  if (aRoom) return a;
  if (bRoom) return b;
  let best: T | undefined;
  let bestLoad = Infinity;
  for (let k = 0; k < n; k++) {
    const c = ready[k];
    if (c.room <= 0) continue;
    const load = loadOf(c, now);
    if (load < bestLoad) {
      best = c;
      bestLoad = load;
    }
  }
  return best;
}

/**
 * The latency sample an answer gives: the time to its headers; an answer that says the node is overloaded (429,
 * 503) is no sign of a fast node, however fast it came, so it counts as at least twice the pool's typical latency.
 */
export function latencySample(status: number, elapsedMs: number, typicalMs: number): number {
  return isOverloaded(status) ? Math.max(elapsedMs, 2 * typicalMs) : elapsedMs;
}

/**
 * The pool's typical latency after one more sample: an average over its last few dozen answers, whichever
 * connection they came on. A new connection starts from it, so it gets a share at once, neither all the load
 * (as a cost of 0 would) nor none (as a peak would).
 */
export function nextTypical(typicalMs: number, sampleMs: number): number {
  return typicalMs === 0 ? sampleMs : typicalMs + (sampleMs - typicalMs) / 32;
}

/**
 * After a connection is lost (its node killed or shut down, or it went away), renewals come this many times
 * faster for `lossWindowAges` ages: the lost connections were replaced at once on the nodes still there, and only
 * renewals can place one on the node when it is back.
 */
export const lossSpeedup = 4;
export const lossWindowAges = 2;

/**
 * ms from a connection's start until it takes no new streams and is replaced: `maxAgeMs` less a random part of up
 * to half, so that the pool's connections are renewed one by one and not all at once; `lossSpeedup` times sooner
 * while a connection was lost within `lossWindowAges` ages. Infinity when `maxAgeMs` is 0 (never).
 *
 * With C connections renewed at a mean of 3/4 of the age, a new connection is placed every 3·age/(4·C) on average:
 * at 16 connections and 60 s, one every 2.8 s, so a round-robin balancer of 6 nodes places one on a node that came
 * back within 6 of them, about 17 s (within a minute up to 21 nodes); one that places at random reaches a node of
 * 6 within a minute with a probability of 1 - (5/6)^21 = 0.98, and, after a loss, of 16 with 1 - (15/16)^85 = 0.996.
 */
export function retireAfterMs(maxAgeMs: number, msSinceLoss: number, random: () => number): number {
  if (!(maxAgeMs > 0)) return Infinity;
  const age = msSinceLoss < lossWindowAges * maxAgeMs ? maxAgeMs / lossSpeedup : maxAgeMs;
  return age * (1 - random() / 2);
}
