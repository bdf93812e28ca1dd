import { Feeder } from './feeder.js';
import type { FeedOptions } from './options.js';
import type { FeedSource } from './source.js';
import type { FeedSummary } from './stats.js';

export { resolveWorkers } from './feeder.js';

/**
 * Feeds `source` and resolves with the summary once every operation is finished (or the feed was stopped).
 * Operations that finally failed are in the failure output; see FeedOptions. Rejects with `VB_UNREACHABLE`
 * when nothing answered at the endpoint from the start (the checkpoint, when enabled, is written first).
 */
export async function feed(source: FeedSource, options: FeedOptions = {}): Promise<FeedSummary> {
  const outcome = await new Feeder(options).run(source);
  if (outcome.unreachable !== undefined) throw outcome.unreachable;
  return outcome.summary;
}
