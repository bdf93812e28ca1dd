import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { VespaBulkError } from '../core/errors.js';
import { exactJsonText, parseExactJson } from '../core/exact-json.js';
import type { RawItem } from '../core/operation-splitter.js';
import type { SourceBatch } from './source.js';

/**
 * A feed operation as a plain object, the shape of one line of feed JSON: one of `put`, `update`, `remove` (or
 * `id`, the same as `put`) holding the document id, with `fields` for puts and updates.
 */
export interface OperationObject {
  put?: string;
  update?: string;
  remove?: string;
  id?: string;
  fields?: Record<string, unknown>;
  condition?: string;
  create?: boolean;
}

/** What a transform returns: an operation, several (fed in this order), or null/undefined to drop the input operation. */
export type TransformResult = OperationObject | readonly OperationObject[] | null | undefined;

/**
 * The default export of a transform module (see docs/transform.md): called once per operation, in input order
 * per document id, with the operation as an object it may change and return.
 */
export type TransformFunction = (operation: OperationObject) => TransformResult | Promise<TransformResult>;

/**
 * A transform as options give it: the path (relative to the working directory) or `file:`/`data:` URL of an ES
 * module whose default export is a {@link TransformFunction}, or (on one thread only) the function itself.
 */
export type TransformSpec = string | URL | TransformFunction;

function moduleUrl(spec: string | URL): string {
  if (spec instanceof URL) return spec.href;
  if (/^(file|data):/.test(spec)) return spec;
  return pathToFileURL(isAbsolute(spec) ? spec : resolve(spec)).href;
}

/** The function of `spec`, its module imported; VB_USAGE when the module cannot be loaded or exports no default function. */
export async function loadTransform(spec: TransformSpec): Promise<TransformFunction> {
  if (typeof spec === 'function') return spec;
  const name = spec instanceof URL ? spec.href : spec;
  const url = moduleUrl(spec);
  // Said before import() does: its message names the module that imported it, here our own source file.
  if (url.startsWith('file:') && !existsSync(fileURLToPath(url))) throw new VespaBulkError('VB_USAGE', `cannot load transform '${name}': no such file ${fileURLToPath(url)}`);
  let mod: { default?: unknown };
  try {
    mod = (await import(url)) as { default?: unknown };
  } catch (err) {
    throw new VespaBulkError('VB_USAGE', `cannot load transform '${name}': ${(err as Error).message}`, { cause: err });
  }
  if (typeof mod.default !== 'function') throw new VespaBulkError('VB_USAGE', `transform '${name}' has no default export function`);
  return mod.default as TransformFunction;
}

function transformError(message: string, cause?: unknown): VespaBulkError {
  return new VespaBulkError('VB_TRANSFORM', `transform: ${message}`, cause === undefined ? undefined : { cause });
}

/** An operation a transform returned, as the object it returned and as its JSON bytes. */
export interface ReturnedOperation {
  op: OperationObject;
  bytes: Buffer;
}

/**
 * The operations `result` holds, each with its JSON bytes; throws VB_TRANSFORM when it is not an operation, an
 * array of them, or null/undefined. The operations themselves are checked later, as any input operation is.
 */
export function resultOperations(result: unknown): ReturnedOperation[] {
  if (result === null || result === undefined) return [];
  const list: readonly unknown[] = Array.isArray(result) ? result : [result];
  const out: ReturnedOperation[] = [];
  for (const op of list) {
    if (op === null || typeof op !== 'object' || Array.isArray(op)) throw transformError(`returned ${describe(op)}, not an operation object`);
    let text: string;
    try {
      text = exactJsonText(op);
    } catch (err) {
      throw transformError(`returned an operation that is not JSON: ${(err as Error).message}`, err);
    }
    out.push({ op, bytes: Buffer.from(text) });
  }
  return out;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'string' ? 'a string' : typeof value;
}

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
  return ops.map(({ bytes }) => ({ bytes, line: item.line, offset: item.offset, source: item.bytes, ...(item.span !== undefined && { span: item.span }) }));
}

function failed(item: RawItem, err: unknown): RawItem[] {
  return [{ ...item, error: err instanceof VespaBulkError && err.code === 'VB_TRANSFORM' ? err : transformError(err instanceof Error ? err.message : String(err), err) }];
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
export async function* transformBatches(batches: AsyncIterable<SourceBatch>, fn: TransformFunction): AsyncGenerator<SourceBatch> {
  for await (const batch of batches) {
    const results = batch.items.map((item) => transformItem(fn, item));
    const settled = results.some((r) => r instanceof Promise) ? await Promise.all(results.map(async (r) => r)) : (results as RawItem[][]);
    yield { input: batch.input, name: batch.name, items: settled.flat() };
  }
}
