/**
 * Field types as the document parser knows them, read from a schema's type text (`array<string>`,
 * `map<string,int>`, `tensor<float>(x[3])`, a struct's name...). `name` is the type's name as the service
 * prints it in messages (`DataType.getName()`): `Array<string>`, `Map<string,int>`, `WeightedSet<string>`.
 * Pure: no I/O.
 */
/** The primitive field types of a schema. */
export type PrimitiveName =
  | 'int'
  | 'long'
  | 'byte'
  | 'float'
  | 'double'
  | 'float16'
  | 'bool'
  | 'string'
  | 'raw'
  | 'uri'
  | 'predicate';

/** A field's type, as the document parser reads values of it. */
export type DataType =
  | { kind: 'primitive'; name: PrimitiveName }
  | { kind: 'array'; name: string; element: DataType }
  | { kind: 'weightedset'; name: string; element: DataType }
  | { kind: 'map'; name: string; key: DataType; value: DataType }
  | { kind: 'struct'; name: string; fields: Map<string, DataType> }
  | { kind: 'position'; name: 'position' }
  | { kind: 'reference'; name: string; target: string }
  | { kind: 'tensor'; name: string; tensor: TensorType }
  /** A type this model does not know (annotations, future types): every value is accepted. */
  | { kind: 'unknown'; name: string };

/** One tensor dimension: `x[3]` is indexed (bound when a size is given), `x{}` is mapped. */
export interface TensorDimension {
  name: string;
  /** undefined for a mapped dimension. */
  size?: number;
  indexed: boolean;
}

/** A tensor's cell type and dimensions (sorted by name, as the service prints them). */
export interface TensorType {
  cellType: 'double' | 'float' | 'bfloat16' | 'int8';
  dimensions: TensorDimension[];
}

const primitives = new Set<string>([
  'int',
  'long',
  'byte',
  'float',
  'double',
  'float16',
  'bool',
  'string',
  'raw',
  'uri',
  'predicate',
]);

/** The FieldValue class the service names in "Expected a <class> but got an object". */
export const fieldValueClass: Record<PrimitiveName | 'reference', string> = {
  int: 'com.yahoo.document.datatypes.IntegerFieldValue',
  long: 'com.yahoo.document.datatypes.LongFieldValue',
  byte: 'com.yahoo.document.datatypes.ByteFieldValue',
  float: 'com.yahoo.document.datatypes.FloatFieldValue',
  double: 'com.yahoo.document.datatypes.DoubleFieldValue',
  float16: 'com.yahoo.document.datatypes.Float16FieldValue',
  bool: 'com.yahoo.document.datatypes.BoolFieldValue',
  string: 'com.yahoo.document.datatypes.StringFieldValue',
  raw: 'com.yahoo.document.datatypes.Raw',
  uri: 'com.yahoo.document.datatypes.UriFieldValue',
  predicate: 'com.yahoo.document.datatypes.PredicateFieldValue',
  reference: 'com.yahoo.document.datatypes.ReferenceFieldValue',
};

/** Resolves struct names while reading type text; undefined when no such struct. */
export type StructLookup = (name: string) => DataType | undefined;

/** Reads a type text (whitespace already removed) into a DataType. */
export function parseDataType(text: string, structs: StructLookup): DataType {
  if (primitives.has(text)) return { kind: 'primitive', name: text as PrimitiveName };
  if (text === 'position') return { kind: 'position', name: 'position' };
  if (text.startsWith('tensor')) {
    const tensor = parseTensorType(text);
    return { kind: 'tensor', name: tensorTypeName(tensor), tensor };
  }
  const generic = /^(array|weightedset|map|reference)<(.*)>$/.exec(text);
  if (generic) {
    const [, outer, inner] = generic;
    if (outer === 'array') {
      const element = parseDataType(inner, structs);
      return { kind: 'array', name: `Array<${element.name}>`, element };
    }
    if (outer === 'weightedset') {
      const element = parseDataType(inner, structs);
      return { kind: 'weightedset', name: `WeightedSet<${element.name}>`, element };
    }
    if (outer === 'reference') return { kind: 'reference', name: `Reference<${inner}>`, target: inner };
    const comma = topLevelComma(inner);
    const key = parseDataType(inner.slice(0, comma), structs);
    const value = parseDataType(inner.slice(comma + 1), structs);
    return { kind: 'map', name: `Map<${key.name},${value.name}>`, key, value };
  }
  return structs(text) ?? { kind: 'unknown', name: text };
}

function topLevelComma(text: string): number {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '<' || c === '(') depth++;
    else if (c === '>' || c === ')') depth--;
    else if (c === ',' && depth === 0) return i;
  }
  return text.length;
}

/** `tensor<float>(x[3],y{})` → cell type and dimensions; a tensor type's `name` is its canonical text. */
export function parseTensorType(text: string): TensorType {
  const m = /^tensor(?:<(\w+)>)?\((.*)\)$/.exec(text);
  const cellType = (m?.[1] ?? 'double') as TensorType['cellType'];
  const dimensions: TensorDimension[] = [];
  for (const d of (m?.[2] ?? '').split(',')) {
    if (d === '') continue;
    const indexed = /^(\w+)\[(\d*)\]$/.exec(d);
    if (indexed)
      dimensions.push({ name: indexed[1], indexed: true, ...(indexed[2] !== '' ? { size: Number(indexed[2]) } : {}) });
    else dimensions.push({ name: d.replace(/\{\}$/, ''), indexed: false });
  }
  // The service prints dimensions sorted by name, and no cell type for double.
  dimensions.sort((a, b) => {
    if (a.name === b.name) return 0;
    return a.name < b.name ? -1 : 1;
  });
  return { cellType, dimensions };
}

/** The text the service prints for a tensor type, e.g. `tensor<float>(x[3],y{})`. */
export function tensorTypeName(t: TensorType): string {
  const dims = t.dimensions.map((d) => (d.indexed ? `${d.name}[${d.size ?? ''}]` : `${d.name}{}`)).join(',');
  return `tensor${t.cellType === 'double' ? '' : `<${t.cellType}>`}(${dims})`;
}

/** Whether the tensor has only bound indexed dimensions. */
export function isDense(t: TensorType): boolean {
  return t.dimensions.length > 0 && t.dimensions.every((d) => d.indexed && d.size !== undefined);
}

/** Whether the tensor has mapped dimensions and bound indexed ones. */
export function isMixed(t: TensorType): boolean {
  return (
    t.dimensions.some((d) => !d.indexed) &&
    t.dimensions.some((d) => d.indexed) &&
    t.dimensions.every((d) => !d.indexed || d.size !== undefined)
  );
}

export function isNumeric(type: DataType): boolean {
  return type.kind === 'primitive' && ['int', 'long', 'byte', 'float', 'double', 'float16'].includes(type.name);
}
