import { isNumeric, type DataType } from './data-type.js';
import type { DocumentModel, DocumentType } from './document-model.js';
import type { OperationKind } from '../document/operation.js';
import {
  firstTokenText,
  jacksonLocation,
  JsonSyntaxError,
  parseJsonTree,
  tokenName,
  tokenText,
  type JsonNode,
} from './json-tree.js';
import { readAtomic, readFields, readValue, readWeights, ValueError, type ReadContext } from './value-reader.js';

/**
 * The judgement of one put or update body against a deployed package's document model, as the service's
 * /document/v1 handler and document parser give it: accepted, or refused with the status (400 or 500) and the
 * exact message the service answers with. One module, two callers: the simulator answers with it, and
 * `vespa-bulk validate` reports it. Pure: no I/O.
 */
export type Verdict = Accepted | Refused;

export interface Accepted {
  ok: true;
  /** Undefined fields were skipped (ignore-undefined-fields): the answer carries `X-Vespa-Ignored-Fields: true`. */
  ignoredFields: boolean;
  /** The body as read: `fields` (with its place in the text), `condition` and `create` when given. */
  body: DocumentBody;
}

export interface Refused {
  ok: false;
  status: 400 | 500;
  message: string;
}

export interface DocumentBody {
  fields?: Extract<JsonNode, { kind: 'object' }>;
  condition?: string;
  create?: boolean;
}

/** The operations with a body to judge: a remove has none. */
export type JudgedKind = Exclude<OperationKind, 'remove'>;

/**
 * Judges a put (POST) or update (PUT) body. `id` is the document id the path names, `docType` its type;
 * `text` the request body (the whole of it: an empty text is an empty body).
 */
export function judgeDocumentOperation(
  model: DocumentModel,
  kind: JudgedKind,
  id: string,
  docType: string,
  text: string,
): Verdict {
  const envelope = readOperationEnvelope(model, kind, id, docType, text);
  if (!envelope.ok) return envelope;
  const { body, type } = envelope;
  const context: ReadContext = { ignoreUndefinedFields: model.ignoreUndefinedFields };
  try {
    const ignoredFields =
      kind === 'put' ? judgePutFields(body.fields, type!, id, context) : judgeUpdateFields(body.fields, type!, context);
    return { ok: true, ignoredFields, body };
  } catch (err) {
    if (err instanceof ValueError) return refuse(err.status, err.message);
    throw err;
  }
}

/** A body whose envelope the parser accepted: `fields` is there, and `type` is the document type when a model was given. */
export interface Envelope {
  ok: true;
  body: DocumentBody & { fields: Extract<JsonNode, { kind: 'object' }> };
  type: DocumentType | undefined;
}

/**
 * What the document parser reads of a put or update body before the field values: the JSON, the root object,
 * `fields`, `condition` and `create`; every other top-level key is skipped. With `model` null (no package
 * deployed) any document type goes and the fields are not looked into.
 */
export function readOperationEnvelope(
  model: DocumentModel | null,
  kind: JudgedKind,
  id: string,
  docType: string,
  text: string,
): Envelope | Refused {
  let root: JsonNode | undefined;
  try {
    root = parseJsonTree(text);
  } catch (err) {
    if (!(err instanceof JsonSyntaxError)) throw err;
    if (err.trailingToken !== undefined) return refuse(400, `expected end of input, got ${err.trailingToken}`);
    return refuse(400, syntaxMessage(text, err, kind, id, model, docType));
  }
  if (root === undefined || root.kind !== 'object')
    return refuse(400, `expected start of root object, got ${tokenName(root)}`);
  const body: DocumentBody = {};
  let type: DocumentType | undefined;
  for (const [key, value] of root.entries) {
    if (key === 'condition') {
      if (value.kind !== 'string' && value.kind !== 'null')
        return refuse(400, `expected string value for condition, got ${tokenName(value)}`);
      if (value.kind === 'string') body.condition = value.value;
    } else if (key === 'create') {
      if (value.kind !== 'true' && value.kind !== 'false')
        return refuse(
          400,
          `failed parsing document: Current token (${tokenName(value)}) not of boolean type${jacksonLocation(text, value.start)}`,
        );
      body.create = value.kind === 'true';
    } else if (key === 'fields') {
      if (model !== null) {
        type = model.types.get(docType);
        if (type === undefined) return refuse(400, `Document type ${docType} does not exist`);
      }
      if (value.kind !== 'object') return refuse(400, `expected start of JSON object, but got ${tokenName(value)}`);
      body.fields = value;
    }
    // Every other key ("put", "id", "update", typos) is skipped by the parser.
  }
  const { fields } = body;
  if (fields === undefined) return refuse(400, 'document is missing the required "fields" field');
  return { ok: true, body: { ...body, fields }, type };
}

function refuse(status: 400 | 500, message: string): Refused {
  return { ok: false, status, message };
}

/** Jackson's message, with the wrapping the parser gives it: outside `fields` or inside it. */
function syntaxMessage(
  text: string,
  err: JsonSyntaxError,
  kind: JudgedKind,
  id: string,
  model: DocumentModel | null,
  docType: string,
): string {
  const jackson = `${err.message}${jacksonLocation(text, err.offset, err.extraBytes)}`;
  const fieldsAt = /"fields"\s*:\s*\{/.exec(text);
  const fieldsStart = fieldsAt === null ? -1 : fieldsAt.index + fieldsAt[0].length;
  if (fieldsAt === null || err.offset < fieldsStart || err.offset >= objectEnd(text, fieldsStart - 1))
    return `failed parsing document: ${jackson}`;
  // Without a model the field values are not read against types, so there is no field to name.
  if (model === null) return `failed reading document JSON: ${jackson}`;
  const type = model.types.get(docType);
  if (type === undefined) return `Document type ${docType} does not exist`;
  // In a put, a bad token right after a field's value is met inside that field's reader, which wraps it.
  if (kind === 'put') {
    const before = text.slice(fieldsAt.index + fieldsAt[0].length, err.offset);
    const names = [...before.matchAll(/"((?:[^"\\]|\\.)*)"\s*:/g)];
    const last = names[names.length - 1]?.[1];
    const fieldType = last === undefined ? undefined : type.fields.get(last);
    if (last !== undefined && fieldType !== undefined)
      return `In document '${id}': Could not parse field '${last}' of type ${fieldType.name}: failed reading document JSON: ${jackson}`;
  }
  return `failed reading document JSON: ${jackson}`;
}

function judgePutFields(
  fields: Extract<JsonNode, { kind: 'object' }>,
  type: DocumentType,
  id: string,
  context: ReadContext,
): boolean {
  return readFields(fields, type.fields, `document type '${type.name}'`, id, context);
}

function judgeUpdateFields(
  fields: Extract<JsonNode, { kind: 'object' }>,
  type: DocumentType,
  context: ReadContext,
): boolean {
  let ignored = false;
  for (const [name, operations] of fields.entries) {
    if (operations.kind !== 'object')
      throw new ValueError(`Expected start of JSON object, got ${tokenName(operations)}`);
    if (/[.[{]/.test(name)) {
      judgeFieldPathUpdate(name, operations, type);
      continue;
    }
    const fieldType = type.fields.get(name);
    if (fieldType === undefined) {
      if (context.ignoreUndefinedFields) {
        ignored = true;
        continue;
      }
      throw new ValueError(`Error in '${name}': No field named '${name}' in document type '${type.name}'`);
    }
    try {
      for (const [op, value] of operations.entries) judgeValueUpdate(name, fieldType, op, value, context);
    } catch (err) {
      if (err instanceof ValueError && err.status === 400) throw new ValueError(`Error in '${name}': ${err.message}`);
      throw err;
    }
  }
  return ignored;
}

const fieldPathOperations = new Set(['assign', 'add', 'remove', 'increment', 'decrement', 'multiply', 'divide']);

/** `s.sub`, `m{key}`, `a[3]`: the top field must exist (ignore-undefined-fields does not apply); operations are case-insensitive. */
function judgeFieldPathUpdate(
  path: string,
  operations: Extract<JsonNode, { kind: 'object' }>,
  type: DocumentType,
): void {
  const top = /^[^.[{]*/.exec(path)![0];
  try {
    if (!type.fields.has(top)) throw new ValueError(`Field '${top}' not found in document type '${type.name}'`);
    for (const [op] of operations.entries)
      if (!fieldPathOperations.has(op.toLowerCase()))
        throw new ValueError(`Field path update type '${op}' not supported.`);
  } catch (err) {
    if (err instanceof ValueError) throw new ValueError(`Error in '${path}': ${err.message}`);
    throw err;
  }
}

const collectionClass: Record<string, string> = {
  primitive: '',
  map: 'com.yahoo.document.datatypes.MapFieldValue',
  struct: 'com.yahoo.document.datatypes.Struct',
  position: 'com.yahoo.document.datatypes.Struct',
  reference: 'com.yahoo.document.datatypes.ReferenceFieldValue',
};

function judgeValueUpdate(field: string, type: DataType, op: string, value: JsonNode, context: ReadContext): void {
  switch (op) {
    case 'assign':
      if (value.kind === 'null') return;
      readValue(value, type, context);
      return;
    case 'increment':
    case 'decrement':
    case 'multiply':
    case 'divide': {
      const text = firstTokenText(value);
      readAtomic(text, { kind: 'primitive', name: 'double' });
      if (!isNumeric(type)) throw new ValueError(`Expected numeric type, got ${type.name}.`, 500);
      return;
    }
    case 'add':
    case 'remove':
      judgeAddRemove(field, type, op, value, context);
      return;
    case 'match':
      judgeMatch(type, value, context);
      return;
    case 'modify':
      if (type.kind !== 'tensor')
        throw new ValueError(
          `A modify update can only be applied to tensor fields. Field '${field}' is of type '${type.name}'`,
        );
      judgeModify(field, value);
      return;
    default:
      throw new ValueError(`Operation '${op}' not implemented.`);
  }
}

function judgeAddRemove(
  field: string,
  type: DataType,
  op: 'add' | 'remove',
  value: JsonNode,
  context: ReadContext,
): void {
  if (type.kind === 'array') {
    if (value.kind !== 'array') throw new ValueError(`Expected start of array, got ${tokenName(value)}`);
    for (const item of value.items) {
      if (item.kind === 'null') throw new ValueError('Illegal null value for array entry');
      readValue(item, type.element, context);
    }
    return;
  }
  if (type.kind === 'weightedset') {
    if (value.kind !== 'object') throw new ValueError(`Expected start of JSON object, got ${tokenName(value)}`);
    readWeights(value, type.element);
    return;
  }
  if (type.kind === 'tensor') {
    const word = op === 'add' ? 'An add' : 'A remove';
    if (type.tensor.dimensions.every((d) => d.indexed)) {
      throw new ValueError(
        `${word} update can only be applied to tensors with at least one sparse dimension. Field '${field}' has unsupported tensor type '${type.name}'`,
      );
    }
    const key = op === 'add' ? 'cells' : 'addresses';
    const has = value.kind === 'object' && value.entries.some(([k]) => k === key || (op === 'add' && k === 'blocks'));
    if (!has)
      throw new ValueError(
        `${op === 'add' ? 'Add' : 'Remove'} update for field '${field}' does not contain tensor ${op === 'add' ? 'cells' : 'addresses'}`,
      );
    if (op === 'add') readValue(value, type, context);
    return;
  }
  if (type.kind === 'unknown') return;
  if (value.kind !== 'object' && value.kind !== 'array')
    throw new ValueError(`Expected start of composite, got ${tokenName(value)}`, 500);
  const cls = type.kind === 'primitive' ? primitiveClass(type.name) : collectionClass[type.kind];
  throw new ValueError(
    `Trying to add or remove from a field of a type the reader does not know how to handle: class ${cls}`,
    500,
  );
}

function primitiveClass(name: string): string {
  const classes: Record<string, string> = {
    int: 'IntegerFieldValue',
    long: 'LongFieldValue',
    byte: 'ByteFieldValue',
    float: 'FloatFieldValue',
    double: 'DoubleFieldValue',
    float16: 'Float16FieldValue',
    bool: 'BoolFieldValue',
    string: 'StringFieldValue',
    raw: 'Raw',
    uri: 'UriFieldValue',
    predicate: 'PredicateFieldValue',
  };
  return `com.yahoo.document.datatypes.${classes[name] ?? 'FieldValue'}`;
}

/** `{"element": key, "<op>": value}` on an array (integer index) or a weighted set (integer weights). */
function judgeMatch(type: DataType, value: JsonNode, context: ReadContext): void {
  if (value.kind !== 'object') throw new ValueError(`Expected start of JSON object, got ${tokenName(value)}`);
  if (type.kind === 'map') throw new ValueError(`Field type ${type.name} not supported.`, 500);
  if (type.kind !== 'array' && type.kind !== 'weightedset') {
    if (value.entries[0]?.[0] === 'element')
      throw new ValueError(`Container type ${type.name} not supported for match update.`);
    throw new ValueError(`Unexpected parent type: ${type.name}`, 500);
  }
  for (const [key, inner] of value.entries) {
    if (key === 'element') {
      const text = tokenText(inner);
      if (type.kind === 'array' && !/^[+-]?\d+$/.test(text)) throw new ValueError(`For input string: "${text}"`);
      if (type.kind === 'weightedset') readAtomic(text, type.element);
      continue;
    }
    const elementType: DataType = type.kind === 'array' ? type.element : { kind: 'primitive', name: 'int' };
    judgeValueUpdate('', elementType, key, inner, context);
  }
}

function judgeModify(field: string, value: JsonNode): void {
  if (value.kind !== 'object') throw new ValueError(`Expected start of JSON object, got ${tokenName(value)}`);
  let operation = false;
  let cells = false;
  for (const [key, inner] of value.entries) {
    if (key === 'operation') {
      const op = tokenText(inner);
      if (op !== 'replace' && op !== 'add' && op !== 'multiply')
        throw new ValueError(`Unknown operation '${op}' in modify update for field '${field}'`);
      operation = true;
    } else if (key === 'cells' || key === 'addresses' || key === 'blocks') cells = true;
    else if (key !== 'create')
      throw new ValueError(`Unknown JSON string '${key}' in modify update for field '${field}'`);
  }
  if (!operation) throw new ValueError(`Modify update for field '${field}' does not contain an operation`);
  if (!cells) throw new ValueError(`Modify update for field '${field}' does not contain tensor cells`);
}

/** Offset just after the object opened at `start`, by bracket depth (strings skipped); Infinity if unclosed. */
function objectEnd(text: string, start: number): number {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      for (i++; i < text.length && text.charCodeAt(i) !== 34; i++) if (text.charCodeAt(i) === 92) i++;
    } else if (c === 123 || c === 91) depth++;
    else if (c === 125 || c === 93) {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  // An error at the end of an object never closed is met while the fields are read.
  return Infinity;
}
