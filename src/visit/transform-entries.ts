import { VespaBulkError } from '../core/errors.js';
import { parseExactJson } from '../core/exact-json.js';
import {
  resultOperations,
  type OperationObject,
  type ReturnedOperation,
  type TransformFunction,
} from '../transform/transform.js';
import type { VisitEntry } from '../document/visit-entry.js';
import { toFeedOperation } from '../sinks/json-write.js';

/**
 * An export's transform (`ExportOptions.transform`), applied to visited entries before they are formatted: each
 * document goes to the transform as the feed operation `{"put": id, "fields": {...}}` (a tombstone as
 * `{"remove": id}`), and what it returns is what is written: its operations as feed entries, none for null.
 * Synchronous when the transform is; a promise when it returns one.
 */
export function transformEntries(
  entries: readonly VisitEntry[],
  fn: TransformFunction,
): VisitEntry[] | Promise<VisitEntry[]> {
  const results = entries.map((e) => transformEntry(e, fn));
  if (!results.some((r) => r instanceof Promise)) return (results as VisitEntry[][]).flat();
  return Promise.all(results.map(async (r) => r)).then((r) => r.flat());
}

function transformEntry(entry: VisitEntry, fn: TransformFunction): VisitEntry[] | Promise<VisitEntry[]> {
  let result: unknown;
  try {
    const op: OperationObject =
      entry.kind === 'remove'
        ? { remove: entry.id }
        : (parseExactJson(toFeedOperation(entry).toString('utf8')) as OperationObject);
    result = fn(op);
  } catch (err) {
    throw failed(entry, err);
  }
  if (result instanceof Promise) {
    return result.then(
      (r) => entriesOf(entry, r),
      (err: unknown) => {
        throw failed(entry, err);
      },
    );
  }
  return entriesOf(entry, result);
}

function entriesOf(entry: VisitEntry, result: unknown): VisitEntry[] {
  let ops: ReturnedOperation[];
  try {
    ops = resultOperations(result);
  } catch (err) {
    throw failed(entry, err);
  }
  // The kind and id from the object returned: its bytes are what is written, not parsed back.
  return ops.map(({ op, bytes: buf }) => {
    const remove = typeof op.remove === 'string';
    const id = (remove ? op.remove : (op.put ?? op.update ?? op.id)) ?? entry.id;
    return { kind: remove ? 'remove' : 'put', id, shape: 'feed', buf, start: 0, end: buf.length };
  });
}

/** A transform error stops the export (nothing is left out silently), naming the document. */
function failed(entry: VisitEntry, err: unknown): VespaBulkError {
  const message = err instanceof Error ? err.message : String(err);
  return new VespaBulkError(
    'VB_TRANSFORM',
    `${message.startsWith('transform: ') ? message : `transform: ${message}`} (document ${entry.id})`,
    { cause: err, place: { documentId: entry.id } },
  );
}
