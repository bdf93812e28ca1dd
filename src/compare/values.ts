import { parseJsonTree, type JsonNode } from '../schema/json-tree.js';
import { sameNumber } from './numbers.js';
import { sameTensor, sameTypelessTensor } from './tensors.js';

/**
 * The comparison of two documents' fields by meaning, on the JSON as written (numbers keep their text). Equal:
 * numbers of one value whatever their text (numbers.ts); tensors of one type with the same cells whatever their
 * form, short, long, hex or the bare value forms (tensors.ts); objects (structs, weighted sets, maps) whatever
 * their key order; a map written as an object and as an array of `{key, value}` entries; arrays in order. A
 * field that is `null` counts as absent, as a put of it stores nothing. Pure.
 */

/** One field that differs: its JSON text on each side (absent where the side has no value). */
export interface FieldDifference {
  field: string;
  a?: string;
  b?: string;
}

/** The top-level fields of a document's `fields` JSON, by name, the last of a repeated key winning; nulls left out. */
export function fieldsOf(text: string): Map<string, JsonNode> {
  const root = parseJsonTree(text);
  const out = new Map<string, JsonNode>();
  if (root === undefined || root.kind !== 'object') return out;
  for (const [k, v] of root.entries) {
    if (v.kind === 'null') out.delete(k);
    else out.set(k, v);
  }
  return out;
}

/** The fields that differ between two documents' `fields` JSON texts, in name order; empty when they are equal. */
export function differingFields(a: string, b: string): FieldDifference[] {
  if (a === b) return [];
  const fa = fieldsOf(a);
  const fb = fieldsOf(b);
  const names = [...new Set([...fa.keys(), ...fb.keys()])].sort();
  const out: FieldDifference[] = [];
  for (const name of names) {
    const va = fa.get(name);
    const vb = fb.get(name);
    if (va !== undefined && vb !== undefined && sameValue(va, vb)) continue;
    out.push({
      field: name,
      ...(va !== undefined && { a: a.slice(va.start, va.end) }),
      ...(vb !== undefined && { b: b.slice(vb.start, vb.end) }),
    });
  }
  return out;
}

/** Whether two JSON values mean the same field value. */
export function sameValue(a: JsonNode, b: JsonNode): boolean {
  if (a.kind === 'number' && b.kind === 'number') return sameNumber(a.text, b.text);
  const tensor = sameTensor(a, b);
  if (tensor !== undefined) return tensor;
  if (a.kind !== b.kind) return sameAcrossKinds(a, b) || sameAcrossKinds(b, a);
  switch (a.kind) {
    case 'string':
      return a.value === (b as typeof a).value;
    case 'true':
    case 'false':
    case 'null':
      return true;
    case 'object':
      return sameEntries(lastWins(a.entries), lastWins((b as typeof a).entries));
    case 'array': {
      const items = (b as typeof a).items;
      if (a.items.length !== items.length) return false;
      if (a.items.every((x, i) => sameValue(x, items[i]))) return true;
      // A map written as entries may list them in any order.
      const ea = mapEntries(a);
      const eb = mapEntries(b as typeof a);
      return ea !== undefined && eb !== undefined && sameEntries(ea, eb);
    }
    case 'number':
      return false;
  }
}

/** Values of different JSON kinds that still mean one value: a map as an object and as entries, a bare tensor and its wrapped form. */
function sameAcrossKinds(a: JsonNode, b: JsonNode): boolean {
  if (a.kind === 'object' && b.kind === 'array') {
    const entries = mapEntries(b);
    if (entries !== undefined && sameEntries(lastWins(a.entries), entries)) return true;
    // `{"values": [...]}` (a dense tensor as fed) against its bare values.
    const inner =
      a.entries.length === 1 && (a.entries[0][0] === 'values' || a.entries[0][0] === 'cells')
        ? a.entries[0][1]
        : undefined;
    return inner !== undefined && sameValue(inner, b);
  }
  if (a.kind === 'object' && b.kind === 'string') {
    const inner = a.entries.length === 1 && a.entries[0][0] === 'values' ? a.entries[0][1] : undefined;
    return inner !== undefined && sameValue(inner, b);
  }
  if (a.kind === 'string' && b.kind === 'array') return sameTypelessTensor(a.value, b) === true;
  return false;
}

function lastWins(entries: [string, JsonNode][]): Map<string, JsonNode> {
  return new Map(entries);
}

function sameEntries(a: Map<string, JsonNode>, b: Map<string, JsonNode>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) {
    const w = b.get(k);
    if (w === undefined || !sameValue(v, w)) return false;
  }
  return true;
}

/** An array of `{"key": k, "value": v}` objects (a map as entries) by key text; undefined for any other array. */
function mapEntries(node: JsonNode & { kind: 'array' }): Map<string, JsonNode> | undefined {
  const out = new Map<string, JsonNode>();
  for (const item of node.items) {
    if (item.kind !== 'object' || item.entries.length !== 2) return undefined;
    const key = item.entries.find(([k]) => k === 'key')?.[1];
    const value = item.entries.find(([k]) => k === 'value')?.[1];
    if (key === undefined || value === undefined) return undefined;
    if (key.kind === 'string') out.set(key.value, value);
    else if (key.kind === 'number') out.set(key.text, value);
    else return undefined;
  }
  return out;
}
