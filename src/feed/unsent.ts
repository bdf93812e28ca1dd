import { VespaBulkError } from '../core/errors.js';
import type { FailureOutput } from './driver.js';
import type { FeedOperation } from '../document/operation.js';
import { looseOperationId } from '../document/loose-id.js';
import type { OperationResult } from './operation-result.js';
import type { InputPosition } from './source.js';
import type { RawItem } from '../core/operation-splitter.js';
import type { FeedStats } from './stats.js';

/**
 * Items read that end without a request, for the driver that reads them (the engine on one thread, the
 * coordinator of workers): it counts them in its own counters through these.
 */

/** Where the read position stands once `item` of input `input` is read. */
export function positionAfter(input: number, item: RawItem): InputPosition {
  // A transform's output ends where its input operation does.
  return { input, offset: item.offset + (item.span ?? (item.source ?? item.bytes).length), line: item.line };
}

/**
 * Settles `item` of input `input` when it needs no request, counting it in `stats`: skipped (before the resume
 * point), dropped by a transform, or not cut into an operation (a failure at its line). Returns whether it did.
 */
export function settleUnsent(
  stats: FeedStats,
  item: RawItem,
  name: string,
  failures: FailureOutput | undefined,
  onResult: ((r: OperationResult) => void) | undefined,
): boolean {
  if (item.skip) {
    stats.skipped++;
    stats.resumeSkipped++;
    return true;
  }
  if (item.dropped === true) {
    stats.dropped++;
    return true;
  }
  if (item.error === undefined) return false;
  stats.operations++;
  failUnsent(stats, item, name, item.error, item.error.code !== 'VB_TRANSFORM', failures, onResult);
  return true;
}

/**
 * An operation that fails without a request: unreadable (`parse`), or refused before sending (`op` read). Counted
 * in `stats`. The failure output gets the input operation (a transform's input, not its output), so feeding it
 * again with the same transform retries it.
 */
export function failUnsent(
  stats: FeedStats,
  item: RawItem,
  name: string,
  err: unknown,
  parse: boolean,
  failures: FailureOutput | undefined,
  onResult: ((r: OperationResult) => void) | undefined,
  op?: FeedOperation,
): void {
  const e =
    err instanceof VespaBulkError
      ? err
      : new VespaBulkError('VB_BAD_OPERATION', String((err as Error)?.message ?? err));
  stats.errors++;
  if (parse) stats.parseErrors++;
  const message = e.message;
  const named = op ?? looseOperationId(item.source ?? item.bytes);
  const about = named === undefined ? {} : { id: named.id, operation: named.kind };
  failures?.write(
    item.source ?? item.bytes,
    { input: name, inputLine: item.line, ...about, message, attempts: 0, code: e.code },
    op === undefined,
  );
  onResult?.({
    ok: false,
    message,
    attempts: 0,
    input: name,
    line: item.line,
    code: e.code,
    ...(named !== undefined && { id: named.id, kind: named.kind }),
  });
}
