import { fieldValueClass, isDense, isMixed, type DataType, type PrimitiveName, type TensorType } from './data-type.js';
import { firstTokenText, tokenName, tokenText, type JsonNode } from './json-tree.js';
import { geoStringError } from './geo-degrees.js';
import { predicateError } from './predicate-parser.js';
import { hexTensorError } from './tensor-hex.js';
import { mapArrayEntryFault } from './map-array-entry.js';

/**
 * Whether one JSON value is a valid value of a field type, as the service's document parser reads it, with the
 * parser's own messages. Throws ValueError; returns nothing. Pure: no I/O.
 */

/** A refused value: `status` 400 for the parser's IllegalArgumentException, 500 for its other runtime exceptions. */
export class ValueError extends Error {
  override name = 'ValueError';
  constructor(
    message: string,
    readonly status: 400 | 500 = 400,
  ) {
    super(message);
  }
}

export interface ReadContext {
  /** Undefined fields inside structs are skipped rather than refused. */
  ignoreUndefinedFields: boolean;
}

const compositeClass: Record<string, string> = {
  array: 'com.yahoo.document.datatypes.Array',
  weightedset: 'com.yahoo.document.datatypes.WeightedSet',
  map: 'com.yahoo.document.datatypes.MapFieldValue',
  struct: 'com.yahoo.document.datatypes.Struct',
};

/** One value of a field (a top-level field, an element, a map value, a struct member). */
export function readValue(node: JsonNode, type: DataType, context: ReadContext): void {
  if (type.kind === 'tensor') return readTensor(node, type.tensor, type.name);
  if (node.kind !== 'object' && node.kind !== 'array') return readAtomic(tokenText(node), type);
  switch (type.kind) {
    case 'primitive':
      throw new ValueError(`Expected a ${fieldValueClass[type.name]} but got an ${node.kind}`);
    case 'reference':
      throw new ValueError(`Expected a ${fieldValueClass.reference} but got an ${node.kind}`);
    case 'array':
      if (node.kind !== 'array') throw new ValueError(`Expected start of array, got ${tokenName(node)}`);
      for (const item of node.items) {
        if (item.kind === 'null') throw new ValueError('Illegal null value for array entry');
        readValue(item, type.element, context);
      }
      return;
    case 'weightedset':
      if (node.kind !== 'object') throw new ValueError(`Expected start of JSON object, got ${tokenName(node)}`);
      readWeights(node, type.element);
      return;
    case 'map':
      if (node.kind === 'object') {
        for (const [key, value] of node.entries) {
          readAtomic(key, type.key);
          readValue(value, type.value, context);
        }
        return;
      }
      for (const item of node.items) {
        const { key: keyType, value: valueType } = type;
        const fault = mapArrayEntryFault(
          item,
          (key) => readValue(key, keyType, context),
          (value) => readValue(value, valueType, context),
        );
        if (fault !== undefined) throw new ValueError(fault.message, fault.status);
      }
      return;
    case 'struct':
      if (node.kind !== 'object') throw new ValueError(`Expected start of JSON object, got ${tokenName(node)}`);
      readStruct(node, type, context);
      return;
    case 'position':
      if (node.kind !== 'object') throw new ValueError(`Expected start of JSON object, got ${tokenName(node)}`);
      readPositionObject(node);
      return;
    case 'unknown':
      return;
  }
}

/** `{key: weight}` of a weighted set: keys are values of the element type, weights 32-bit integers. */
export function readWeights(node: Extract<JsonNode, { kind: 'object' }>, element: DataType): void {
  for (const [key, weight] of node.entries) {
    readAtomic(key, element);
    const text = firstTokenText(weight);
    if (!isJavaInteger(text, 32)) throw new ValueError(`For input string: "${text}"`);
  }
}

function readStruct(
  node: Extract<JsonNode, { kind: 'object' }>,
  type: Extract<DataType, { kind: 'struct' }>,
  context: ReadContext,
): void {
  // Nested structs are wrapped again, without the document id (the parser only adds it at the top).
  readFields(node, type.fields, `struct type '${type.name}'`, 'null', context);
}

/**
 * Reads each field of `node` as its type in `fields` (a document's or a struct's), a null field left out, as the
 * parser does; an error in a field is wrapped with the document id and the field, as the service words it. True when
 * a field not in `fields` was ignored (`context.ignoreUndefinedFields`).
 */
export function readFields(
  node: Extract<JsonNode, { kind: 'object' }>,
  fields: ReadonlyMap<string, DataType>,
  owner: string,
  documentId: string,
  context: ReadContext,
): boolean {
  let ignored = false;
  for (const [name, value] of node.entries) {
    const fieldType = fields.get(name);
    if (fieldType === undefined) {
      if (context.ignoreUndefinedFields) {
        ignored = true;
        continue;
      }
      throw new ValueError(`Field '${name}' is not defined in ${owner}`);
    }
    if (value.kind === 'null') continue;
    try {
      readValue(value, fieldType, context);
    } catch (err) {
      if (err instanceof ValueError && err.status === 400)
        throw new ValueError(
          `In document '${documentId}': Could not parse field '${name}' of type ${fieldType.name}: ${err.message}`,
        );
      throw err;
    }
  }
  return ignored;
}

/** A scalar's token text as the value of a type (`readAtomic` in the parser). */
export function readAtomic(text: string, type: DataType): void {
  switch (type.kind) {
    case 'primitive':
      return readPrimitive(text, type.name);
    case 'position':
      return readPositionString(text);
    case 'reference':
      return readReference(text, type.target);
    case 'array':
    case 'weightedset':
    case 'map':
      throw new ValueError(
        `Class class java.lang.String not applicable to an class ${compositeClass[type.kind]} instance.`,
      );
    case 'struct':
      throw new ValueError(`Type class java.lang.String cannot specify a class ${compositeClass.struct} instance`);
    case 'tensor':
    case 'unknown':
      return;
  }
}

const intRanges = {
  8: [-128n, 127n],
  32: [-2147483648n, 2147483647n],
  64: [-9223372036854775808n, 9223372036854775807n],
} as const;

/** Java's Integer/Long.parseInt rules: an optional sign, ASCII digits, in range. */
export function isJavaInteger(text: string, bits: 32 | 64): boolean {
  if (!/^[+-]?\d+$/.test(text)) return false;
  if (text.length < (bits === 32 ? 10 : 19)) return true;
  const n = BigInt(text);
  return n >= intRanges[bits][0] && n <= intRanges[bits][1];
}

// Java's Double.parseDouble after trimming: decimal with optional exponent and type suffix, NaN, Infinity.
const javaDouble =
  /^[+-]?(?:NaN|Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fFdD]?|0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?\d+[fFdD]?)$/;

/** Java's String.trim: every char up to U+0020 at either end. */
function javaTrim(text: string): string {
  let a = 0;
  let b = text.length;
  while (a < b && text.charCodeAt(a) <= 32) a++;
  while (b > a && text.charCodeAt(b - 1) <= 32) b--;
  return text.slice(a, b);
}

function readPrimitive(text: string, name: PrimitiveName): void {
  switch (name) {
    case 'int':
    case 'long':
      if (!isJavaInteger(text, name === 'int' ? 32 : 64)) throw new ValueError(`For input string: "${text}"`);
      return;
    case 'byte': {
      if (!isJavaInteger(text, 32)) throw new ValueError(`For input string: "${text}"`);
      const n = Number(text);
      if (n < -128 || n > 127) throw new ValueError(`Value out of range. Value:"${text}" Radix:10`);
      return;
    }
    case 'float':
    case 'double':
    case 'float16': {
      const trimmed = javaTrim(text);
      if (trimmed === '') throw new ValueError('empty String');
      if (!javaDouble.test(trimmed)) throw new ValueError(`For input string: "${text}"`);
      return;
    }
    case 'bool':
      // Boolean.parseBoolean: anything but "true" (any case) is false, never an error.
      return;
    case 'string':
      checkText(text);
      return;
    case 'uri':
      checkText(text);
      checkUrl(text);
      return;
    case 'raw':
      checkBase64(text);
      return;
    case 'predicate': {
      const error = predicateError(text);
      if (error !== undefined) throw new ValueError(error);
      return;
    }
  }
}

/** Vespa's text rule: no control characters but tab, LF, CR; no lone surrogates; no non-characters. */
export function checkText(text: string): void {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x20 && c < 0xd800) {
      if (c >= 0xfdd0 && c <= 0xfddf) throw illegalCodePoint(c);
      continue;
    }
    if (c < 0x20) {
      if (c === 9 || c === 10 || c === 13) continue;
      throw illegalCodePoint(c);
    }
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        const cp = (c - 0xd800) * 0x400 + (d - 0xdc00) + 0x10000;
        if ((cp & 0xfffe) === 0xfffe) throw illegalCodePoint(cp);
        i++;
        continue;
      }
      throw illegalCodePoint(c);
    }
    if (c >= 0xdc00 && c <= 0xdfff) throw illegalCodePoint(c);
    if ((c >= 0xfdd0 && c <= 0xfddf) || c === 0xfffe || c === 0xffff) throw illegalCodePoint(c);
  }
}

// com.yahoo.net.Url's pattern, which UriFieldValue matches the text against; Java's '.' stops at these line ends.
const javaUrl =
  /^(([^:/?#]+):)?(\/\/((([^:@/?#]+)(:([^@/?#]+))?@))?(((\[([^\]]+)\]|[^:/?#]+)(:([^/?#]+))?)))?([^?#]+)?(\?([^#]*))?(#([^\n\r\u0085\u2028\u2029]*))?$/;

/** Url.fromString: the pattern must match the whole text, and a port (group 14) must be an Integer.valueOf. */
function checkUrl(text: string): void {
  const m = javaUrl.exec(text);
  if (m === null) throw new ValueError('Malformed URL.');
  const port = m[14];
  if (port !== undefined && !isJavaInteger(port, 32)) throw new ValueError(`For input string: "${port}"`);
}

function illegalCodePoint(cp: number): ValueError {
  return new ValueError(`The string field value contains illegal code point 0x${cp.toString(16).toUpperCase()}`);
}

/** Java's MIME base64 decoder skips characters outside the alphabet; only a lone trailing character fails. */
function checkBase64(text: string): void {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '=') break;
    if (/[A-Za-z0-9+/]/.test(c)) count++;
  }
  if (count % 4 === 1) throw new ValueError('Last unit does not have enough valid bits');
}

function readPositionString(text: string): void {
  const error = geoStringError(text);
  if (error !== undefined) throw new ValueError(error);
}

function readPositionObject(node: Extract<JsonNode, { kind: 'object' }>): void {
  let lat = false;
  let lng = false;
  for (const [key, value] of node.entries) {
    if (key === 'lat' || key === 'latitude' || key === 'y') lat = true;
    else if (key === 'lng' || key === 'longitude' || key === 'x') lng = true;
    else throw new ValueError(`Unexpected attribute ${key} in geo position field`);
    if (value.kind !== 'number') throw new ValueError(`Expected a number but got '${tokenText(value)}`);
  }
  if (!lat) throw new ValueError("Missing 'lat' attribute in geo position field");
  if (!lng) throw new ValueError("Missing 'lng' attribute in geo position field");
}

function readReference(text: string, target: string): void {
  if (text === '') return;
  const colon = text.indexOf(':');
  if (colon < 0) throw new ValueError(`Unparseable id '${text}': Scheme missing`);
  const scheme = text.slice(0, colon);
  if (scheme !== 'id') throw new ValueError(`Unparseable id '${text}': Unknown id scheme '${scheme}'`);
  const parts = text.split(':');
  if (parts.length < 2 || parts[1] === undefined) throw new ValueError(`Unparseable id '${text}': Namespace missing`);
  if (parts.length < 3) throw new ValueError(`Unparseable id '${text}': Document type missing`);
  if (parts.length < 5) throw new ValueError(`Unparseable id '${text}': Key/value section missing`);
  const type = parts[2];
  if (type !== target)
    throw new ValueError(
      `Can't assign document ID '${text}' (of type '${type}') to reference of document type '${target}'`,
    );
}

// --- tensors -------------------------------------------------------------------------------------------------

const jsonTokenArray = '[Lcom.fasterxml.jackson.core.JsonToken;@0';

function denseSize(t: TensorType): number {
  return t.dimensions.filter((d) => d.indexed).reduce((n, d) => n * (d.size ?? 1), 1);
}

function readTensor(node: JsonNode, t: TensorType, typeName: string): void {
  if (node.kind === 'string') {
    if (!isDense(t)) throw new ValueError(`Expected one of ${jsonTokenArray} but got ${tokenName(node)}`);
    checkHex(node.value, t, typeName);
    return;
  }
  if (node.kind === 'object') {
    const keys = new Map(node.entries);
    const known = keys.has('cells') || keys.has('values') || keys.has('blocks');
    if (!known) {
      if (keys.has('type') && node.entries.length === 1) return;
      if (isMixed(t)) return readBlocks(node, t);
      return readShortCells(node, t, typeName);
    }
    for (const [key, value] of node.entries) {
      if (key === 'cells') readCells(value, t, typeName);
      else if (key === 'values') {
        if (!isDense(t))
          throw new ValueError(
            "The 'values' field can only be used with dense tensors. Use 'cells' or 'blocks' instead",
          );
        if (value.kind === 'string' && value.value === '')
          throw new ValueError("The 'values' string does not contain any values");
        if (value.kind === 'string') checkHex(value.value, t, typeName);
        else readDenseValues(value, t);
      } else if (key === 'blocks') {
        if (!isMixed(t))
          throw new ValueError(
            "The 'blocks' field can only be used with mixed tensors with bound dimensions. Use 'cells' or 'values' instead",
          );
        readBlocks(value, t);
      }
    }
    return;
  }
  if (node.kind === 'array') {
    if (isArrayOfObjects(node)) return readCells(node, t, typeName);
    if (isDense(t)) return readDenseValues(node, t);
    if (isMixed(t)) return readBlocks(node, t);
    return readCells(node, t, typeName);
  }
  throw new ValueError(`Expected one of ${jsonTokenArray} but got ${tokenName(node)}`);
}

function checkHex(text: string, t: TensorType, typeName: string, cells = denseSize(t)): void {
  if (text === '') throw new ValueError(`Bad string input for tensor with type ${typeName}`);
  const error = hexTensorError(text, t, cells);
  if (error !== undefined) throw new ValueError(error);
}

function checkCellValue(node: JsonNode): void {
  if (node.kind === 'number') return;
  if (node.kind === 'string' && /^[+-]?(inf|infinity|nan)$/i.test(node.value)) return;
  if (node.kind === 'string' && /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/.test(node.value)) return;
  throw new ValueError(`Expected a number but got '${tokenText(node)}'`);
}

/** The first item past any nested arrays is an object (TensorReader.isArrayOfObjects). */
function isArrayOfObjects(node: JsonNode): boolean {
  let first: JsonNode | undefined = node;
  while (first?.kind === 'array') first = first.items[0];
  return first?.kind === 'object';
}

function readCells(node: JsonNode, t: TensorType, typeName: string): void {
  if (node.kind === 'object') return readShortCells(node, t, typeName);
  if (node.kind !== 'array') throw new ValueError(`Expected start of array, got ${tokenName(node)}`);
  for (const cell of node.items) {
    if (cell.kind !== 'object') throw new ValueError(`Expected start of JSON object, got ${tokenName(cell)}`);
    let address = false;
    let value = false;
    for (const [key, inner] of cell.entries) {
      if (key === 'value') {
        checkCellValue(inner);
        value = true;
      } else if (key === 'address') {
        checkAddress(inner, t);
        address = true;
      }
    }
    if (!address) throw new ValueError("Expected an object in a tensor 'cells' array to contain an 'address' field");
    if (!value) throw new ValueError("Expected an object in a tensor 'cells' array to contain a 'value' field");
  }
}

function readShortCells(node: Extract<JsonNode, { kind: 'object' }>, t: TensorType, typeName: string): void {
  if (t.dimensions.length !== 1)
    throw new ValueError(`Expected a tensor with a single dimension but got '${typeName}'`);
  for (const [label, value] of node.entries) {
    checkLabel(t.dimensions[0], label, t);
    checkCellValue(value);
  }
}

function checkAddress(node: JsonNode, t: TensorType): void {
  if (node.kind !== 'object') throw new ValueError(`Expected start of JSON object, got ${tokenName(node)}`);
  for (const [dim, label] of node.entries) {
    const d = t.dimensions.find((x) => x.name === dim);
    if (d === undefined) throw new ValueError(`${tensorName(t)} does not contain dimension '${dim}'`);
    checkLabel(d, tokenText(label), t);
  }
  // TensorAddress.Builder.validate (vespajlib TensorAddress.java:245-250): every dimension needs a label.
  const missing = t.dimensions.find((d) => !node.entries.some(([dim]) => dim === d.name));
  if (missing !== undefined)
    throw new ValueError(`Missing a label for dimension '${missing.name}' for ${tensorName(t)}`);
}

function checkLabel(d: TensorType['dimensions'][number], label: string, t: TensorType): void {
  if (!d.indexed) return;
  if (!/^\d+$/.test(label)) throw new ValueError(`Dimension '${d.name}' has label '${label}' which is not an integer`);
  if (d.size !== undefined && Number(label) >= d.size) {
    throw new ValueError(`Dimension '${d.name}' has label '${label}' but type is ${tensorName(t)}`);
  }
}

function tensorName(t: TensorType): string {
  const dims = t.dimensions.map((d) => (d.indexed ? `${d.name}[${d.size ?? ''}]` : `${d.name}{}`)).join(',');
  return `tensor${t.cellType === 'double' ? '' : `<${t.cellType}>`}(${dims})`;
}

function countValues(node: JsonNode, out: { n: number }): void {
  if (node.kind === 'array') for (const item of node.items) countValues(item, out);
  else {
    checkCellValue(node);
    out.n++;
  }
}

function readDenseValues(node: JsonNode, t: TensorType, size = denseSize(t)): void {
  const count = { n: 0 };
  countValues(node, count);
  if (count.n === 0 && node.kind === 'array') throw new ValueError("The 'values' array does not contain any values");
  if (count.n !== size) throw new ValueError(`Expected ${size} values, but got ${count.n}`);
}

function readBlocks(node: JsonNode, t: TensorType): void {
  const dense: TensorType = { cellType: t.cellType, dimensions: t.dimensions.filter((d) => d.indexed) };
  const size = denseSize(dense);
  if (node.kind === 'object') {
    for (const [label, values] of node.entries) readBlockValues(values, t, size, blockAt(t, label));
    return;
  }
  if (node.kind !== 'array') throw new ValueError(`Expected start of array, got ${tokenName(node)}`);
  for (const block of node.items) {
    if (block.kind !== 'object') throw new ValueError(`Expected start of JSON object, got ${tokenName(block)}`);
    let at = '';
    let address = false;
    let values = false;
    for (const [key, value] of block.entries) {
      // The address is known to the values' message only when it comes first.
      if (key === 'address' && value.kind === 'object') at = blockAt(t, ...value.entries.map(([, l]) => tokenText(l)));
      if (key === 'address') address = true;
      if (key === 'values') {
        readBlockValues(value, t, size, at);
        values = true;
      }
    }
    if (!address) throw new ValueError("Expected a 'blocks' array object to contain an object 'address'");
    if (!values) throw new ValueError("Expected a 'blocks' array object to contain an array 'values'");
  }
}

/** "At {dim:label}: ", as TensorAddress.toString(type) prints a block's mapped address (names taken from the full type, in order). */
function blockAt(t: TensorType, ...labels: string[]): string {
  const parts = labels.map((l, i) => `${t.dimensions[i]?.name ?? ''}:${labelText(l)}`);
  return `At {${parts.join(',')}}: `;
}

/** A label as the address prints it: bare when it is a plain word, else quoted with the quote it does not hold. */
function labelText(label: string): string {
  if (/^[-_@A-Za-z0-9][_@$A-Za-z0-9]*$/.test(label)) return label;
  return label.includes("'") ? `"${label}"` : `'${label}'`;
}

/** One dense block of a mixed tensor: values (nested arrays flattened) or the block's cells in hex. */
function readBlockValues(node: JsonNode, t: TensorType, size: number, at: string): void {
  if (node.kind === 'string') {
    const error = hexTensorError(node.value, t, size);
    if (error !== undefined) throw new ValueError(error);
    return;
  }
  const count = { n: 0 };
  countValues(node, count);
  if (count.n !== size) throw new ValueError(`${at}Expected ${size} values, but got ${count.n}`);
}
