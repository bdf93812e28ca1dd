import { VespaBulkError } from '../core/errors.js';
import { parseExactJson } from '../core/exact-json.js';
import type { RawItem } from '../core/operation-splitter.js';
import {
  resultOperations,
  transformError,
  type OperationObject,
  type ReturnedOperation,
  type TransformFunction,
} from '../transform/transform.js';
import type { SourceBatch } from './source.js';

/**
 * The items `item` becomes: each operation the transform returned (`bytes` its JSON, `source` the input's bytes,
 * line and offset the input's, so checkpoints and failures name the input); the item itself marked `dropped` when
 * it returned none; the item with a VB_TRANSFORM `error` when it threw or returned something else.
 */
function itemsOf(item: RawItem, result: unknown): RawItem[] {
  let ops: ReturnedOperation[];
  try {
    ops = resultOperations(result);
  } catch (err) {
    return [{ ...item, error: err as VespaBulkError }];
  }
  if (ops.length === 0) return [{ ...item, dropped: true }];
  return ops.map(({ bytes }) => ({
    bytes,
    line: item.line,
    offset: item.offset,
    source: item.bytes,
    ...(item.span !== undefined && { span: item.span }),
  }));
}

function failed(item: RawItem, err: unknown): RawItem[] {
  return [
    {
      ...item,
      error:
        err instanceof VespaBulkError && err.code === 'VB_TRANSFORM'
          ? err
          : transformError(err instanceof Error ? err.message : String(err), err),
    },
  ];
}

/** `item` through `fn`: synchronously when the transform is (no promise made), else a promise. */
export function transformItem(fn: TransformFunction, item: RawItem): RawItem[] | Promise<RawItem[]> {
  if (item.skip === true || item.error !== undefined) return [item];
  let op: OperationObject;
  try {
    op = parseExactJson(item.bytes.toString('utf8')) as OperationObject;
  } catch {
    // Not JSON: it goes on as it is, to fail where any unreadable input does, with the parser's reason.
    return [item];
  }
  let result: unknown;
  try {
    result = fn(op);
  } catch (err) {
    return failed(item, err);
  }
  if (result !== null && typeof result === 'object' && typeof (result as { then?: unknown }).then === 'function') {
    return (result as Promise<unknown>).then(
      (r) => itemsOf(item, r),
      (err: unknown) => failed(item, err),
    );
  }
  return itemsOf(item, result);
}

/**
 * The batches with every item through `fn`. An async transform's calls for one batch run at once; their results
 * keep the input order, so operations on one id stay in order.
 */
export async function* transformBatches(
  batches: AsyncIterable<SourceBatch>,
  fn: TransformFunction,
): AsyncGenerator<SourceBatch> {
  for await (const batch of batches) {
    const results = batch.items.map((item) => transformItem(fn, item));
    const settled = results.some((r) => r instanceof Promise)
      ? await Promise.all(results.map(async (r) => r))
      : (results as RawItem[][]);
    yield { input: batch.input, name: batch.name, items: settled.flat() };
  }
}
