import { VespaBulkError } from '../core/errors.js';
import { parseDocumentId, toDocumentPath } from './id.js';
import {
  COLON,
  COMMA,
  LBRACE,
  QUOTE,
  RBRACE,
  decodeString,
  knownString,
  knownStrings,
  skipString,
  skipValue,
  skipWhitespace,
  syntaxError,
} from '../core/json-scan.js';

/**
 * One feed operation as routing needs it. The document itself stays the raw bytes of `fields`: it is sent as
 * `{"fields":<raw>}` and never parsed into objects or serialised again.
 */
export type OperationKind = 'put' | 'update' | 'remove';

/** One parsed feed operation. `fields` holds the bytes of the input, sent as they are. */
export interface FeedOperation {
  kind: OperationKind;
  id: string;
  /** /document/v1 path of the id, encoded. */
  path: string;
  condition?: string;
  create?: boolean;
  /** Raw bytes of the `fields` value (put and update). */
  fields?: Buffer;
}

const operationKeys: Record<string, OperationKind> = { put: 'put', id: 'put', update: 'update', remove: 'remove' };
/** The keys an operation has, recognised in its bytes without decoding them (`put` and `fields` on every line). */
const operationKeyStrings = knownStrings('put', 'fields', 'id', 'update', 'remove', 'condition', 'create');

function badOperation(message: string): VespaBulkError {
  return new VespaBulkError('VB_BAD_OPERATION', message);
}

/** Parses one operation from its JSON bytes (`{"put":...,"fields":{...}}`). Throws VB_BAD_JSON, VB_BAD_OPERATION or VB_BAD_DOCUMENT_ID. */
export function parseOperation(buf: Buffer): FeedOperation {
  const end = buf.length;
  let i = skipWhitespace(buf, 0, end);
  if (buf[i] !== LBRACE) throw syntaxError('expected an operation object', i);
  i = skipWhitespace(buf, i + 1, end);
  let kind: OperationKind | undefined;
  let kindKey = '';
  let id: unknown;
  let condition: unknown;
  let create: unknown;
  let fields: Buffer | undefined;
  let hasCondition = false;
  let hasCreate = false;
  if (buf[i] === RBRACE) throw badOperation('empty operation object');
  for (;;) {
    if (buf[i] !== QUOTE) throw syntaxError('expected a key', i);
    const keyEnd = skipString(buf, i, end);
    const key = knownString(buf, i, keyEnd, operationKeyStrings) ?? decodeString(buf, i, keyEnd);
    i = skipWhitespace(buf, keyEnd, end);
    if (buf[i] !== COLON) throw syntaxError("expected ':'", i);
    const valueStart = skipWhitespace(buf, i + 1, end);
    const valueEnd = skipValue(buf, valueStart, end);
    const opKind = operationKeys[key];
    if (opKind !== undefined) {
      if (kind !== undefined) throw badOperation(`operation has both '${kindKey}' and '${key}'`);
      kind = opKind;
      kindKey = key;
      id =
        buf[valueStart] === QUOTE
          ? decodeString(buf, valueStart, valueEnd)
          : JSON.parse(buf.toString('utf8', valueStart, valueEnd));
    } else if (key === 'fields') {
      if (buf[valueStart] !== LBRACE) throw badOperation("'fields' must be an object");
      fields = buf.subarray(valueStart, valueEnd);
    } else if (key === 'condition') {
      hasCondition = true;
      condition =
        buf[valueStart] === QUOTE
          ? decodeString(buf, valueStart, valueEnd)
          : JSON.parse(buf.toString('utf8', valueStart, valueEnd));
    } else if (key === 'create') {
      hasCreate = true;
      create = JSON.parse(buf.toString('utf8', valueStart, valueEnd));
    } else {
      throw badOperation(`unknown key '${key}' (expected put, id, update, remove, fields, condition, create)`);
    }
    i = skipWhitespace(buf, valueEnd, end);
    if (buf[i] === COMMA) {
      i = skipWhitespace(buf, i + 1, end);
      continue;
    }
    if (buf[i] === RBRACE) {
      i = skipWhitespace(buf, i + 1, end);
      break;
    }
    throw syntaxError("expected ',' or '}'", i);
  }
  if (i !== end) throw syntaxError('trailing characters after the operation', i);
  if (kind === undefined) throw badOperation('no operation key (put, id, update or remove)');
  if (typeof id !== 'string') throw badOperation(`'${kindKey}' must be a document id string`);
  if (hasCondition && typeof condition !== 'string') throw badOperation("'condition' must be a string");
  if (hasCreate && typeof create !== 'boolean') throw badOperation("'create' must be true or false");
  if (kind === 'remove' && fields !== undefined) throw badOperation("a remove must not have 'fields'");
  if (kind !== 'remove' && fields === undefined)
    throw badOperation(`a${kind === 'update' ? 'n update' : ' put'} needs 'fields'`);
  const path = toDocumentPath(parseDocumentId(id));
  const op: FeedOperation = { kind, id, path };
  if (fields !== undefined) op.fields = fields;
  if (hasCondition) op.condition = condition as string;
  if (hasCreate) op.create = create as boolean;
  return op;
}

/** An operation given as an object (library callers); `fields` is serialised once, here. */
export function operationFromObject(value: unknown): FeedOperation {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw badOperation('an operation must be an object');
  return parseOperation(Buffer.from(JSON.stringify(value)));
}

/**
 * Whether sending the operation twice leaves the same result: put and remove always; an update only when
 * every field operation is one that applies once (`isRepeatSafeUpdate`: assign, remove). Never with a `condition`:
 * a test-and-set sent again tests the document its first attempt may have written, so one that applied would
 * come back 412 and be reported as a condition not met.
 */
export function isSafeToRepeat(op: Pick<FeedOperation, 'kind' | 'condition' | 'fields'>): boolean {
  if (op.condition !== undefined) return false;
  if (op.kind !== 'update') return true;
  if (op.fields === undefined) return true;
  return isRepeatSafeUpdate(op.fields.toString('utf8'));
}

/**
 * Whether an update's fields object (JSON text) holds nothing but field operations that leave the same document
 * when applied twice: `assign`, and `remove` (of map or weighted set keys, array values equal to one given, tensor
 * cells: gone after the first, nothing to remove the second time). increment, add and the rest would apply twice.
 */
export function isRepeatSafeUpdate(fieldsJson: string): boolean {
  try {
    return updatesRepeatSafely(JSON.parse(fieldsJson));
  } catch {
    return false;
  }
}

/** `isRepeatSafeUpdate` of a parsed fields object: the one rule, also for the bulk update's chunks. */
export function updatesRepeatSafely(fields: unknown): boolean {
  if (fields === null || typeof fields !== 'object' || Array.isArray(fields)) return false;
  for (const v of Object.values(fields as Record<string, unknown>)) {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
    const keys = Object.keys(v);
    if (keys.length === 0 || !keys.every((k) => k === 'assign' || k === 'remove')) return false;
  }
  return true;
}
