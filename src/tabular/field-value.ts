import type { DataType, TensorType } from '../schema/data-type.js';
import { EpochMicros, JsonNumber, bigintValue, epochIn, type TimestampUnit } from './json-value.js';

/**
 * One cell of a table as a Vespa JSON field value. Pure: no I/O.
 *
 * Without a schema a cell takes JSON's natural form; with one, the form the field's declared type reads (a
 * float list into a dense tensor becomes `{"values":[...]}`, a text cell into an int field a number, and so
 * on). A value the type cannot take throws a `CellError` saying why; the row then fails with the column named.
 */
export class CellError extends Error {}

/** How cells are read. */
export interface CellContext {
  /** What timestamps become. */
  timestampUnit: TimestampUnit;
  /** Cells are text (CSV): numbers, booleans and JSON (for arrays, structs, maps, tensors) are parsed by the declared type. */
  text: boolean;
}

/** A cell in JSON's natural form: bigints exact, timestamps as longs, bytes as base64, maps as objects. Null stays null. */
export function naturalValue(v: unknown, cx: CellContext): unknown {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return v;
    case 'number':
      if (!Number.isFinite(v)) throw new CellError(`${v} has no JSON form`);
      return v;
    case 'bigint':
      return bigintValue(v);
    case 'undefined':
      return null;
    case 'object': {
      if (v === null || v instanceof JsonNumber) return v;
      if (v instanceof EpochMicros || v instanceof Date) return epochIn(v, cx.timestampUnit);
      if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
      if (Array.isArray(v) || ArrayBuffer.isView(v))
        return Array.from(v as ArrayLike<unknown>, (e) => naturalValue(e, cx));
      if (v instanceof Map) {
        const out: Record<string, unknown> = {};
        for (const [k, e] of v) out[String(k)] = naturalValue(e, cx);
        return out;
      }
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(v)) out[k] = naturalValue((v as Record<string, unknown>)[k], cx);
      return out;
    }
    default:
      throw new CellError(`a ${typeof v} has no JSON form`);
  }
}

const intRange: Record<string, [bigint, bigint]> = {
  byte: [-128n, 127n],
  int: [-(2n ** 31n), 2n ** 31n - 1n],
  long: [-(2n ** 63n), 2n ** 63n - 1n],
};

/** A cell converted for a field of `type`; `undefined` for a null cell (the field is left out). */
export function typedValue(v: unknown, type: DataType, cx: CellContext): unknown {
  if (v === null || v === undefined) return undefined;
  // A text cell for a structured field holds JSON (as pandas and DuckDB write such columns to CSV).
  if (cx.text && typeof v === 'string' && isStructured(type)) v = parseJsonCell(v);
  switch (type.kind) {
    case 'primitive':
      return primitiveValue(v, type.name, cx);
    case 'array': {
      const list = listOf(v, type.name);
      return list.map((e, i) => required(typedValue(e, type.element, cx), `element ${i}`));
    }
    case 'weightedset': {
      const out: Record<string, unknown> = {};
      if (Array.isArray(v)) {
        // A plain list is a set: every member weighs 1.
        for (const e of v) out[keyText(e, cx)] = 1;
        return out;
      }
      for (const [k, w] of entriesOf(v, type.name)) out[keyText(k, cx)] = primitiveValue(w, 'int', cx);
      return out;
    }
    case 'map': {
      const out: Record<string, unknown> = {};
      for (const [k, e] of entriesOf(v, type.name)) {
        const value = typedValue(e, type.value, cx);
        if (value !== undefined) out[keyText(k, cx)] = value;
      }
      return out;
    }
    case 'struct': {
      if (typeof v !== 'object' || Array.isArray(v) || v instanceof Uint8Array)
        throw new CellError(`${type.name} needs a struct, got ${describe(v)}`);
      const out: Record<string, unknown> = {};
      for (const [k, e] of entriesOf(v, type.name)) {
        const member = type.fields.get(String(k));
        if (member === undefined) throw new CellError(`struct ${type.name} has no field '${String(k)}'`);
        const value = typedValue(e, member, cx);
        if (value !== undefined) out[String(k)] = value;
      }
      return out;
    }
    case 'tensor':
      return tensorValue(v, type.tensor, type.name, cx);
    case 'position':
      return typeof v === 'string' ? v : naturalValue(v, cx);
    case 'reference':
      if (typeof v !== 'string') throw new CellError(`${type.name} needs a document id, got ${describe(v)}`);
      return v;
    case 'unknown':
      return naturalValue(v, cx);
  }
}

function required(v: unknown, what: string): unknown {
  if (v === undefined) throw new CellError(`${what} is null`);
  return v;
}

function isStructured(type: DataType): boolean {
  return (
    type.kind === 'array' ||
    type.kind === 'weightedset' ||
    type.kind === 'map' ||
    type.kind === 'struct' ||
    type.kind === 'tensor'
  );
}

function parseJsonCell(text: string): unknown {
  const t = text.trim();
  if (!(t.startsWith('[') || t.startsWith('{'))) return text;
  try {
    return JSON.parse(t) as unknown;
  } catch (err) {
    const list = flatListText(t);
    if (list !== undefined) return list;
    throw new CellError(`not valid JSON: ${(err as Error).message}`);
  }
}

/**
 * A flat list as DuckDB (`[a, b]`) and pandas (`['a', 'b']`) write a list column to CSV: elements between
 * commas, each bare (trimmed) or quoted with ' or ". Undefined when the text is not one (nested brackets,
 * text after a closing quote).
 */
export function flatListText(t: string): string[] | undefined {
  if (!t.startsWith('[') || !t.endsWith(']')) return undefined;
  const body = t.slice(1, -1);
  if (body.trim() === '') return [];
  const out: string[] = [];
  let i = 0;
  while (i <= body.length) {
    while (body[i] === ' ') i++;
    const q = body[i];
    let element: string;
    if (q === "'" || q === '"') {
      const end = body.indexOf(q, i + 1);
      if (end < 0) return undefined;
      element = body.slice(i + 1, end);
      i = end + 1;
      while (body[i] === ' ') i++;
      if (i < body.length && body[i] !== ',') return undefined;
    } else {
      let end = body.indexOf(',', i);
      if (end < 0) end = body.length;
      element = body.slice(i, end).trim();
      if (/[[\]{}]/.test(element)) return undefined;
      i = end;
    }
    out.push(element);
    i++;
  }
  return out;
}

function primitiveValue(v: unknown, name: string, cx: CellContext): unknown {
  switch (name) {
    case 'byte':
    case 'int':
    case 'long':
      return integerValue(v, name, cx);
    case 'float':
    case 'double':
    case 'float16': {
      if (typeof v === 'number') {
        if (!Number.isFinite(v)) throw new CellError(`${v} has no JSON form`);
        return v;
      }
      if (typeof v === 'bigint') return Number(v);
      if (typeof v === 'string' && cx.text) {
        const n = Number(v.trim());
        if (v.trim() === '' || !Number.isFinite(n)) throw new CellError(`'${v}' is not a number (field type ${name})`);
        return n;
      }
      throw new CellError(`${name} needs a number, got ${describe(v)}`);
    }
    case 'bool':
      if (typeof v === 'boolean') return v;
      if (typeof v === 'number' && (v === 0 || v === 1)) return v === 1;
      if (typeof v === 'string' && cx.text) {
        const t = v.trim().toLowerCase();
        if (t === 'true' || t === '1') return true;
        if (t === 'false' || t === '0') return false;
      }
      throw new CellError(`bool needs true or false, got ${describe(v)}`);
    case 'raw':
      if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
      if (typeof v === 'string') return v;
      throw new CellError(`raw needs bytes or base64 text, got ${describe(v)}`);
    default:
      // string, uri, predicate: text; a number or a bool in a text field is written as text.
      if (typeof v === 'string') return v;
      if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return String(v);
      if (v instanceof EpochMicros || v instanceof Date)
        return (v instanceof Date ? v : new Date(Number(v.micros / 1000n))).toISOString();
      throw new CellError(`${name} needs text, got ${describe(v)}`);
  }
}

function integerValue(v: unknown, name: string, cx: CellContext): unknown {
  let n: bigint;
  if (typeof v === 'bigint') n = v;
  else if (typeof v === 'number') {
    if (!Number.isInteger(v)) throw new CellError(`${v} is not an integer (field type ${name})`);
    n = BigInt(v);
  } else if (v instanceof EpochMicros || v instanceof Date) {
    const e = epochIn(v, cx.timestampUnit);
    n = typeof e === 'number' ? BigInt(e) : BigInt(e.text);
  } else if (typeof v === 'boolean') n = v ? 1n : 0n;
  else if (typeof v === 'string' && cx.text && /^\s*[+-]?\d+\s*$/.test(v)) n = BigInt(v.trim());
  else throw new CellError(`${name} needs an integer, got ${describe(v)}`);
  const [min, max] = intRange[name];
  if (n < min || n > max) throw new CellError(`${n} is outside the range of ${name}`);
  return bigintValue(n);
}

function keyText(k: unknown, cx: CellContext): string {
  const v = naturalValue(k, cx);
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v instanceof JsonNumber) return v.text;
  throw new CellError(`a key must be text or a number, got ${describe(k)}`);
}

function listOf(v: unknown, typeName: string): unknown[] {
  if (Array.isArray(v)) return v;
  if (ArrayBuffer.isView(v) && !(v instanceof DataView)) return Array.from(v as unknown as ArrayLike<unknown>);
  throw new CellError(`${typeName} needs a list, got ${describe(v)}`);
}

/**
 * Key-value pairs of a map-like cell: a Map, an object, or a list of `{key, value}` entries (how Arrow and
 * some Parquet readers give a MAP column).
 */
function entriesOf(v: unknown, typeName: string): [unknown, unknown][] {
  if (v instanceof Map) return [...(v as Map<unknown, unknown>).entries()];
  if (Array.isArray(v)) {
    return v.map((e) => {
      if (typeof e === 'object' && e !== null && 'key' in e)
        return [(e as { key: unknown }).key, (e as { value?: unknown }).value ?? null];
      throw new CellError(`${typeName} needs a map, got a list`);
    });
  }
  if (typeof v === 'object' && v !== null && !(v instanceof Uint8Array)) return Object.entries(v);
  throw new CellError(`${typeName} needs a map, got ${describe(v)}`);
}

function numbers(list: unknown[], cx: CellContext, typeName: string): number[] {
  const out = new Array<number>(list.length);
  for (let i = 0; i < list.length; i++) {
    const e = list[i];
    const n = numberOf(e, cx);
    if (!Number.isFinite(n)) throw new CellError(`${typeName}: cell ${i} is ${describe(e)}, not a finite number`);
    out[i] = n;
  }
  return out;
}

/** A list's element as a number: a number or bigint, a string only in a text cell; NaN for anything else. */
function numberOf(e: unknown, cx: CellContext): number {
  if (typeof e === 'number') return e;
  if (typeof e === 'bigint') return Number(e);
  return typeof e === 'string' && cx.text ? Number(e) : NaN;
}

function finite(v: Float32Array | Float64Array, typeName: string): number[] {
  const out = Array.from(v);
  for (let i = 0; i < out.length; i++)
    if (!Number.isFinite(out[i])) throw new CellError(`${typeName}: cell ${i} is ${out[i]}, not a finite number`);
  return out;
}

/** Flattens nested lists (a matrix as a list of rows) in row-major order. */
function flatten(v: unknown[]): unknown[] {
  if (!v.some((e) => Array.isArray(e) || (ArrayBuffer.isView(e) && !(e instanceof DataView)))) return v;
  const out: unknown[] = [];
  for (const e of v) {
    if (Array.isArray(e)) out.push(...flatten(e));
    else if (ArrayBuffer.isView(e) && !(e instanceof DataView))
      out.push(...Array.from(e as unknown as ArrayLike<unknown>));
    else out.push(e);
  }
  return out;
}

/**
 * Tensor cells in the JSON form the type reads: a list (flat, or nested in the order of the type's dimensions)
 * into an indexed tensor is `{"values":[...]}` (its length checked when every dimension is bound); a map of
 * lists into a mixed tensor with one mapped dimension is `{"blocks":{...}}`; a map of numbers into a sparse
 * tensor with one mapped dimension is `{"cells":{...}}`. An object already in one of Vespa's tensor forms
 * (`values`, `cells`, `blocks`, `type`) and hex text pass as they are.
 */
function tensorValue(v: unknown, t: TensorType, typeName: string, cx: CellContext): unknown {
  if (typeof v === 'string') return v;
  const indexed = t.dimensions.filter((d) => d.indexed);
  const mapped = t.dimensions.filter((d) => !d.indexed);
  if (Array.isArray(v) || (ArrayBuffer.isView(v) && !(v instanceof DataView))) {
    if (mapped.length > 0) throw new CellError(`${typeName} has a mapped dimension: a list cannot say its labels`);
    // A float list read from Parquet comes as a typed array: one copy, no per-cell type checks but finiteness.
    const cells =
      v instanceof Float32Array || v instanceof Float64Array
        ? finite(v, typeName)
        : numbers(flatten(listOf(v, typeName)), cx, typeName);
    if (indexed.every((d) => d.size !== undefined)) {
      const size = indexed.reduce((n, d) => n * d.size!, 1);
      if (cells.length !== size) throw new CellError(`${typeName} has ${size} cells, the list ${cells.length}`);
    }
    return { values: cells };
  }
  if (typeof v !== 'object' || v === null || v instanceof Uint8Array)
    throw new CellError(`${typeName} needs a list or a map, got ${describe(v)}`);
  const keys = v instanceof Map ? [] : Object.keys(v);
  if (keys.some((k) => k === 'values' || k === 'cells' || k === 'blocks' || k === 'type')) return naturalValue(v, cx);
  const entries = entriesOf(v, typeName);
  if (mapped.length === 1 && indexed.length === 0) {
    const out: Record<string, number> = {};
    for (const [k, e] of entries) out[keyText(k, cx)] = numbers([e], cx, typeName)[0];
    return { cells: out };
  }
  if (mapped.length === 1 && indexed.length > 0) {
    const size = indexed.every((d) => d.size !== undefined) ? indexed.reduce((n, d) => n * d.size!, 1) : undefined;
    const out: Record<string, number[]> = {};
    for (const [k, e] of entries) {
      const block = numbers(flatten(listOf(e, typeName)), cx, typeName);
      if (size !== undefined && block.length !== size)
        throw new CellError(`${typeName} has blocks of ${size} cells, '${keyText(k, cx)}' has ${block.length}`);
      out[keyText(k, cx)] = block;
    }
    return { blocks: out };
  }
  throw new CellError(`${typeName}: give the cells in Vespa's tensor JSON form ({"cells": ...})`);
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (v instanceof Uint8Array) return 'bytes';
  if (v instanceof EpochMicros || v instanceof Date) return 'a timestamp';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return `'${v.length > 40 ? `${v.slice(0, 40)}…` : v}'`;
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return `${typeof v} ${v}`;
  return typeof v;
}
