import { Feeder, type StopReason } from '../feed/feeder.js';
import { type FeedOptions } from '../feed/options.js';
import { type FeedSummary } from '../feed/stats.js';
import type { VisitOptions } from '../visit/options.js';
import { visit } from '../visit/visit.js';
import { validateVisitOptions } from '../visit/query.js';
import { checkUrl } from '../core/options-check.js';
import { checkFeedOptions } from '../feed/options.js';
import type { VisitReport, VisitRun } from '../visit/visitor.js';
import { verifyMigration, type MigrateVerifyOptions } from './migrate-verify.js';
import type { CompareSummary } from '../compare/compare.js';

/**
 * Migration: the visited documents fed straight into another endpoint through the feeder (its throttle,
 * retries, failure file and ordering per document id), as feed operations whose bytes are those received.
 */
export interface MigrateOptions extends VisitOptions {
  /** The endpoint documents are written to. */
  destination: string;
  destinationHeaders?: Record<string, string>;
  /**
   * Further feeder options (connections, compression, failures file, `transform`...). Without a `protocol` (or a
   * `transport`) of its own, the feeder speaks the visit's `protocol`. `shuffle` is on unless
   * given false: visits deliver documents in bucket order, and feeding them so contends for one bucket at a time.
   * A `transform` gets each visited document as `{"put": id, "fields": {...}}` (a tombstone as `{"remove": id}`).
   */
  feed?: Omit<FeedOptions, 'endpoint' | 'headers' | 'signal' | 'workers'>;
  /** Called once the visit runs, e.g. to draw progress from it. */
  onStart?: (run: VisitRun) => void;
  /**
   * After a migration that wrote everything, compare the source with the destination (`compare()`, the same
   * document type and selection on both): the result is the summary's `verify`, and a difference makes it not `ok`.
   * `true`, or the comparison's own options (a diff file...). Not with a time range, `sliceIds` or `resumeFrom`,
   * which migrate part of what the destination holds, nor with `feed.transform`, whose copy differs by design.
   */
  verify?: boolean | MigrateVerifyOptions;
}

/** How a migration ended: the visit report and the feed summary. */
export interface MigrateSummary {
  /** Every slice finished and every operation was written. */
  ok: boolean;
  visit: VisitReport | { error: string };
  feed: FeedSummary;
  /** The feeder's failure output, when an operation failed: feedable again with `vespa-bulk feed`. */
  failuresFile?: string;
  /** Why the feed side stopped early (the destination refused the credentials, or only failed). */
  stopped?: StopReason;
  /** With `verify`, after a migration that wrote everything: the comparison of the source with the destination. */
  verify?: CompareSummary;
}

/**
 * Visits one endpoint and feeds the documents into another; resolves with the summary.
 * @example
 * ```ts
 * import { migrate } from 'vespa-bulk';
 *
 * const summary = await migrate({
 *   endpoint: 'http://old-cluster:8080', cluster: 'content',
 *   destination: 'http://new-cluster:8080', verify: true,
 * });
 * console.log(summary.ok, summary.feed.ok, summary.verify?.equal);
 * ```
 */
export async function migrate(options: MigrateOptions): Promise<MigrateSummary> {
  const { destination, destinationHeaders, feed: feedOptions, onStart, verify, ...visitOptions } = options;
  checkUrl(options, 'destination');
  validateVisitOptions(visitOptions);
  checkFeedOptions(feedOptions ?? {});
  const verifyRun =
    verify === undefined || verify === false ? undefined : verifyMigration(options, verify === true ? {} : verify);
  const documents = visit(visitOptions, { onStart });
  let visitError: string | undefined;
  async function* operations(): AsyncIterable<Buffer> {
    try {
      for await (const d of documents) yield d.toFeedLine();
    } catch (err) {
      // Slices that failed are in the report; what was visited is still fed.
      visitError = err instanceof Error ? err.message : String(err);
    }
  }
  // A proxy that speaks only HTTP/1.1, or a demand for HTTP/2, usually holds for both ends.
  const inherited =
    feedOptions?.protocol === undefined && feedOptions?.transport === undefined && options.protocol !== undefined;
  const outcome = await new Feeder({
    // Migration must not leave a checkpoint of an input that cannot be reread.
    checkpoint: false,
    shuffle: true,
    ...(inherited && { protocol: options.protocol }),
    ...feedOptions,
    endpoint: destination,
    headers: destinationHeaders,
    signal: options.signal,
  }).run(operations());
  const summary = outcome.summary;
  const report = await documents.report.catch((err: unknown) => ({
    error: err instanceof Error ? err.message : String(err),
  }));
  const visitOk = 'ok' in report && report.ok && visitError === undefined;
  const result: MigrateSummary = {
    ok: visitOk && summary.errors === 0 && summary.abandoned === 0 && outcome.stopped === undefined,
    visit: report,
    feed: summary,
  };
  if (outcome.failuresFile !== undefined) result.failuresFile = outcome.failuresFile;
  if (outcome.stopped !== undefined) result.stopped = outcome.stopped;
  if (verifyRun !== undefined && result.ok) {
    result.verify = await verifyRun();
    result.ok = result.verify.equal;
  }
  return result;
}
