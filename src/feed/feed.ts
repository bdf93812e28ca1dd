import { Feeder } from './feeder.js';
import type { FeedOptions } from './options.js';
import type { FeedSource } from './source.js';
import type { FeedSummary } from './stats.js';

export { resolveWorkers } from './feeder.js';

/**
 * Feeds `source` and resolves with the summary once every operation is finished (or the feed was stopped).
 * Operations that finally failed are in the failure output; see FeedOptions. Rejects with `VB_UNREACHABLE`
 * when nothing answered at the endpoint from the start (the checkpoint, when enabled, is written first).
 * @example
 * ```ts
 * import { feed } from 'vespa-bulk';
 *
 * const summary = await feed(['corpus.jsonl.gz'], {
 *   endpoint: 'http://127.0.0.1:8080',
 *   failures: 'failed.jsonl',
 *   onResult: (r) => { if (!r.ok) console.error(r.id, r.status, r.message); },
 * });
 * console.log(summary.ok, summary.errors, summary.okRate);
 * ```
 */
export async function feed(source: FeedSource, options: FeedOptions = {}): Promise<FeedSummary> {
  const outcome = await new Feeder(options).run(source);
  if (outcome.unreachable !== undefined) throw outcome.unreachable;
  return outcome.summary;
}
