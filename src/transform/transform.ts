import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { VespaBulkError } from '../core/errors.js';
import { exactJsonText } from '../core/exact-json.js';

// A user's transform (docs/transform.md): its module loaded, and what it returns read as operations. Below both
// feed/ (feed/transform-items.ts applies it to input) and visit/ (visit/transform-entries.ts, to an export).

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
  if (url.startsWith('file:') && !existsSync(fileURLToPath(url)))
    throw new VespaBulkError('VB_USAGE', `cannot load transform '${name}': no such file ${fileURLToPath(url)}`);
  let mod: { default?: unknown };
  try {
    mod = (await import(url)) as { default?: unknown };
  } catch (err) {
    throw new VespaBulkError('VB_USAGE', `cannot load transform '${name}': ${(err as Error).message}`, { cause: err });
  }
  if (typeof mod.default !== 'function')
    throw new VespaBulkError('VB_USAGE', `transform '${name}' has no default export function`);
  return mod.default as TransformFunction;
}

/** VB_TRANSFORM: what a transform did is not what it may do, or it threw. */
export function transformError(message: string, cause?: unknown): VespaBulkError {
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
    if (op === null || typeof op !== 'object' || Array.isArray(op))
      throw transformError(`returned ${describe(op)}, not an operation object`);
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
