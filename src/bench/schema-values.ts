import type { DataType, TensorType } from '../schema/data-type.js';
import type { Random } from './random.js';

/**
 * Values for a field of a schema, of the shape the document parser takes and of sizes like real documents:
 * a title is a few words, a `text`/`body` field a paragraph, a `year` a year. Pure: no I/O. What comes out
 * is a JSON value (serialised by the caller); map keys and weighted-set keys are their text.
 */
export function valueOf(type: DataType, field: string, random: Random, namespace: string): unknown {
  switch (type.kind) {
    case 'primitive':
      return primitiveValue(type.name, field, random);
    case 'position':
      // Degrees; the parser takes lat/lng as numbers.
      return { lat: round(random.next() * 180 - 90, 6), lng: round(random.next() * 360 - 180, 6) };
    case 'reference':
      return `id:${namespace}:${type.target}::ref-${random.int(0, 99_999)}`;
    case 'array': {
      const n = random.int(1, 5);
      const items: unknown[] = [];
      for (let i = 0; i < n; i++) items.push(valueOf(type.element, field, random, namespace));
      return items;
    }
    case 'weightedset': {
      const set: Record<string, number> = {};
      const n = random.int(1, 5);
      for (let i = 0; i < n; i++) set[keyText(type.element, field, random, namespace)] = random.int(1, 100);
      return set;
    }
    case 'map': {
      const map: Record<string, unknown> = {};
      const n = random.int(1, 4);
      for (let i = 0; i < n; i++)
        map[keyText(type.key, field, random, namespace)] = valueOf(type.value, field, random, namespace);
      return map;
    }
    case 'struct': {
      const struct: Record<string, unknown> = {};
      for (const [name, memberType] of type.fields) struct[name] = valueOf(memberType, name, random, namespace);
      return struct;
    }
    case 'tensor':
      return tensorValue(type.tensor, random);
    case 'unknown':
      // Annotations and types this model does not know: nothing safe to send.
      return undefined;
  }
}

/** Whether `valueOf` gives a value for the type: fields it does not are left out of generated documents. */
export function canGenerate(type: DataType): boolean {
  return type.kind !== 'unknown';
}

function keyText(type: DataType, field: string, random: Random, namespace: string): string {
  if (type.kind === 'primitive' && type.name === 'string') return random.letters(random.int(3, 9));
  const v = valueOf(type, field, random, namespace);
  return typeof v === 'string' ? v : JSON.stringify(v);
}

const longText = /text|body|content|description|abstract|summary|chunk/i;

function primitiveValue(name: string, field: string, random: Random): unknown {
  switch (name) {
    case 'string':
      return longText.test(field) ? random.words(random.int(40, 200)) : random.words(random.int(1, 8));
    case 'uri':
      return `https://example.com/${random.letters(random.int(4, 10))}/${random.letters(random.int(4, 12))}`;
    case 'int':
      if (/year/i.test(field)) return random.int(1950, 2025);
      if (/age/i.test(field)) return random.int(18, 90);
      return random.int(0, 1_000_000);
    case 'long':
      return random.int(0, 2 ** 40);
    case 'byte':
      return random.int(-128, 127);
    case 'float':
    case 'double':
      return round(random.next() * 1000, 3);
    case 'float16':
      return round(random.next() * 100, 2);
    case 'bool':
      return random.next() < 0.5;
    case 'raw':
      return Buffer.from(random.letters(24)).toString('base64');
    case 'predicate':
      return `${random.pick(['gender', 'region', 'tier'])} in [${random.letters(5)}]`;
    default:
      return random.letters(8);
  }
}

function cellValue(t: TensorType, random: Random): number {
  return t.cellType === 'int8' ? random.int(-128, 127) : round(random.next() * 2 - 1, 4);
}

/**
 * The short forms where the type has one: a dense tensor as `{"values":[...]}`, a mapped one of one
 * dimension as `{label: value}`, a mixed one as `{label: [values]}`; others as `{"cells":[...]}`.
 */
function tensorValue(t: TensorType, random: Random): unknown {
  const dims = t.dimensions;
  const mapped = dims.filter((d) => !d.indexed);
  const indexed = dims.filter((d) => d.indexed);
  const bound = indexed.every((d) => d.size !== undefined);
  if (mapped.length === 0 && bound && indexed.length > 0) {
    const size = indexed.reduce((n, d) => n * d.size!, 1);
    const values: number[] = [];
    for (let i = 0; i < size; i++) values.push(cellValue(t, random));
    return { values };
  }
  if (mapped.length === 1 && indexed.length === 0) {
    const cells: Record<string, number> = {};
    const n = random.int(1, 8);
    for (let i = 0; i < n; i++) cells[random.letters(random.int(3, 8))] = cellValue(t, random);
    return cells;
  }
  if (mapped.length === 1 && indexed.length === 1 && bound) {
    const blocks: Record<string, number[]> = {};
    const n = random.int(1, 4);
    for (let i = 0; i < n; i++) {
      const block: number[] = [];
      for (let j = 0; j < indexed[0].size!; j++) block.push(cellValue(t, random));
      blocks[random.letters(random.int(3, 8))] = block;
    }
    return blocks;
  }
  const cells: { address: Record<string, string>; value: number }[] = [];
  const n = random.int(1, 8);
  for (let i = 0; i < n; i++) {
    const address: Record<string, string> = {};
    for (const d of dims)
      address[d.name] = d.indexed ? String(random.int(0, (d.size ?? 8) - 1)) : random.letters(random.int(3, 8));
    cells.push({ address, value: cellValue(t, random) });
  }
  return { cells };
}

function round(n: number, digits: number): number {
  return Number(n.toFixed(digits));
}
