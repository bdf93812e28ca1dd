import type { FeedProgress } from '../feed/feeder.js';

/**
 * Time left, when the input size is known: the operations still to finish (the total extrapolated from the
 * share of bytes read so far) at the average rate so far. Counting operations rather than bytes keeps the
 * estimate honest when the reader is far ahead of the acknowledgements.
 */
export function estimateRemainingSeconds(p: FeedProgress): number | undefined {
  if (p.readShare === undefined || p.readShare < 0.001 || p.finished === 0 || p.seconds <= 0) return undefined;
  const total = p.read / p.readShare;
  return Math.max(0, total - p.finished) / (p.finished / p.seconds);
}
