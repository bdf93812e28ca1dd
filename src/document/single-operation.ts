import { isVespaBulkError, VespaBulkError } from '../core/errors.js';
import { parseDocumentId } from './id.js';
import { topLevelValue } from '../core/json-scan.js';
import { parseOperation, type OperationKind } from './operation.js';

/**
 * One put, update or remove given as the official `vespa document` takes it: an id, a document in the forms
 * of a feed file (`{"put":id,"fields":{...},"condition":...}`, `{"fields":{...}}`, `{"remove":id}`) or the
 * fields object alone, and field assignments. Pure: the caller reads files and stdin; every mistake is a
 * VespaBulkError VB_USAGE (VB_BAD_JSON for text that is not JSON), as it is a mistake in what was handed over.
 */

/** The fields of a put/update: `{"fields":{...}}` (as in a feed file, the id key ignored) or the object alone. */
export function fieldsFromText(text: string): Record<string, unknown> {
  const o = documentObjectOf(text);
  return isFeedShaped(o) ? (o.fields as Record<string, unknown>) : o;
}

/** The JSON object a document command was given, or a clear error. */
function documentObjectOf(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new VespaBulkError('VB_BAD_JSON', `the document is not valid JSON: ${(err as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new VespaBulkError('VB_USAGE', 'the document must be a JSON object');
  return value as Record<string, unknown>;
}

/** `{"fields":{...}}`, possibly with the other keys of a feed operation, rather than the fields alone. */
function isFeedShaped(o: Record<string, unknown>): boolean {
  return (
    typeof o.fields === 'object' &&
    o.fields !== null &&
    !Array.isArray(o.fields) &&
    Object.keys(o).every((k) => ['fields', 'put', 'update', 'id', 'condition', 'create'].includes(k))
  );
}

/** What a document given as a feed operation says besides its fields. */
export interface OperationMeta {
  kind?: OperationKind;
  id?: string;
  condition?: string;
  create?: boolean;
}

const operationShapeKeys = new Set(['put', 'id', 'update', 'remove', 'fields', 'condition', 'create']);

/**
 * The operation, id, `condition` and `create` of a document written as a feed operation (`{"put":id,
 * "fields":...,"condition":...}`, `{"fields":...,"create":true}`, `{"remove":id}`); nothing for the fields
 * object alone. Checked as the feed checks an operation, so a file that feeds also works here.
 */
export function operationMetaOf(text: string): OperationMeta {
  const o = documentObjectOf(text);
  const keys = Object.keys(o);
  const hasOperationKey = keys.some((k) => k === 'put' || k === 'id' || k === 'update' || k === 'remove');
  const shaped = keys.every((k) => operationShapeKeys.has(k)) && (isFeedShaped(o) || 'remove' in o);
  if (!shaped) return {};
  if (hasOperationKey) {
    try {
      const op = parseOperation(Buffer.from(text.trim()));
      return {
        kind: op.kind,
        id: op.id,
        ...(op.condition !== undefined && { condition: op.condition }),
        ...(op.create !== undefined && { create: op.create }),
      };
    } catch (err) {
      // A mistake in what the user handed over: bad usage, not a failed operation.
      if (isVespaBulkError(err) && err.code !== 'VB_USAGE')
        throw new VespaBulkError('VB_USAGE', `the document: ${err.message}`, { cause: err });
      throw err;
    }
  }
  if (o.condition !== undefined && typeof o.condition !== 'string')
    throw new VespaBulkError('VB_USAGE', 'the document: "condition" must be a string');
  if (o.create !== undefined && typeof o.create !== 'boolean')
    throw new VespaBulkError('VB_USAGE', 'the document: "create" must be true or false');
  return {
    ...(typeof o.condition === 'string' && { condition: o.condition }),
    ...(typeof o.create === 'boolean' && { create: o.create }),
  };
}

/** A document id rather than a file or JSON text: ids always start with `id:`. */
export function isDocumentId(arg: string): boolean {
  return arg.startsWith('id:');
}

/**
 * The fields of a put or update as JSON text, from the source text and `field=<JSON value>` assignments, without
 * a round trip through JavaScript values: a `long` beyond 2^53 would be sent with other digits than were given.
 * The source is checked as JSON; a field both in it and assigned is refused rather than silently picked. A value
 * that is not JSON is taken as a string.
 */
export function fieldsTextOf(
  text: string | undefined,
  assign: readonly string[] | undefined,
): { text: string; fields: Record<string, unknown> } {
  let sourceText = '{}';
  let fields: Record<string, unknown> = {};
  if (text !== undefined) {
    fields = fieldsFromText(text);
    const buf = Buffer.from(text);
    const span = isFeedShaped(JSON.parse(text) as Record<string, unknown>)
      ? topLevelValue(buf, 0, buf.length, 'fields')
      : undefined;
    sourceText = span === undefined ? text.trim() : buf.toString('utf8', span.start, span.end);
  }
  const members: string[] = [];
  for (const a of assign ?? []) {
    const eq = a.indexOf('=');
    if (eq <= 0)
      throw new VespaBulkError(
        'VB_USAGE',
        `--assign '${a}': expected field=<JSON value>, e.g. year=2001 or title='"x"'`,
      );
    const name = a.slice(0, eq);
    const raw = a.slice(eq + 1);
    if (Object.hasOwn(fields, name))
      throw new VespaBulkError('VB_USAGE', `--assign ${name}: the field is also in the document given; say it once`);
    let value: unknown;
    let valueText: string;
    try {
      value = JSON.parse(raw);
      valueText = raw.trim();
    } catch {
      value = raw;
      valueText = JSON.stringify(raw);
    }
    fields[name] = { assign: value };
    members.push(`${JSON.stringify(name)}:{"assign":${valueText}}`);
  }
  if (members.length === 0) return { text: sourceText, fields };
  const inner = sourceText.slice(1, sourceText.lastIndexOf('}')).trim();
  return { text: `{${inner === '' ? '' : `${inner},`}${members.join(',')}}`, fields };
}

/** A malformed id is a mistake in what was handed over (VB_USAGE), not a failure of the service. */
export function checkGivenId(id: string): void {
  try {
    parseDocumentId(id);
  } catch (err) {
    if (isVespaBulkError(err, 'VB_BAD_DOCUMENT_ID')) throw new VespaBulkError('VB_USAGE', err.message, { cause: err });
    throw err;
  }
}

/**
 * Which of `put [id] file`, `update [id] file`, `remove id|file` positionals is the id and which the document:
 * with two, the first is the id; with one, it is the id when it looks like one (`id:...`), else the document
 * (JSON text, a file name, or `-` for stdin, for the caller to read).
 */
export function splitPositionals(
  first: string | undefined,
  file: string | undefined,
): { id?: string; source?: string } {
  if (file !== undefined) return { ...(first !== undefined && { id: first }), source: file };
  if (first !== undefined && isDocumentId(first)) return { id: first };
  return first === undefined ? {} : { source: first };
}

/** What one put/update/remove sends: the id, the fields (as JSON text) and what the document given says of condition and create. */
export interface SingleOperation {
  kind: OperationKind;
  id: string;
  /** put and update: the fields object as JSON text, sent as it is. */
  fields?: string;
  meta: OperationMeta;
}

/** What `singleOperationOf` reads: an id given apart, the document's text, and assignments (update). */
export interface SingleOperationInput {
  /** The id given apart from the document: it wins over the one in the document. */
  id?: string;
  /** The document as JSON text: a feed operation, `{"fields":{...}}`, or the fields object alone. */
  text?: string;
  /** `field=<JSON value>` assignments, added to the fields as `{"assign":value}`. */
  assign?: readonly string[];
}

/**
 * The operation of `put`, `update` or `remove`, as the official `vespa document` reads them: an id given apart
 * wins over the one in the document; without one, the document must name the same operation and its id. A put
 * needs a document; an update needs at least one field operation.
 */
export function singleOperationOf(kind: OperationKind, input: SingleOperationInput): SingleOperation {
  const { text } = input;
  const meta = text === undefined ? {} : operationMetaOf(text);
  let id = input.id;
  if (id === undefined) {
    if (meta.id === undefined) {
      throw new VespaBulkError(
        'VB_USAGE',
        `no document id: give it before the file (${kind} <id> <file>), or as the "${kind}" key in the JSON`,
      );
    }
    if (meta.kind !== kind)
      throw new VespaBulkError('VB_USAGE', `the command is ${kind}, but the JSON given is a ${meta.kind}`);
    id = meta.id;
  }
  checkGivenId(id);
  if (kind === 'remove') return { kind, id, meta };
  const given = fieldsTextOf(text, input.assign);
  if (kind === 'update' && Object.keys(given.fields).length === 0) {
    throw new VespaBulkError(
      'VB_USAGE',
      'update needs operations: JSON {"fields":{"f":{"assign":v}}}, a file, - for stdin, or --assign f=v',
    );
  }
  if (kind === 'put' && text === undefined)
    throw new VespaBulkError('VB_USAGE', 'put needs the document: JSON {"fields":{...}}, a file, or - for stdin');
  return { kind, id, fields: given.text, meta };
}

/**
 * The condition and create an operation is sent with: as the service does with its query parameters, a value
 * given apart (a command-line flag) wins over the same key in the document.
 */
export function conditionAndCreate(
  meta: OperationMeta,
  given: { condition?: string; create?: boolean },
): { condition?: string; create?: boolean } {
  const condition = given.condition ?? meta.condition;
  const create = given.create ?? meta.create;
  return { ...(condition !== undefined && { condition }), ...(create !== undefined && { create }) };
}
