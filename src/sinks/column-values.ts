import { decodeHex, decodeNumberString, decodeTensor } from '../schema/tensor-value.js';
import type { ColumnType } from './column-types.js';
import { exactJsonText } from '../core/exact-json.js';

/**
 * A field's value (parsed JSON, as the service sent it) as a column of its type holds it: the values a Parquet
 * writer takes, or a CSV cell's text. Pure: no I/O.
 */

/** A value that does not fit its column; the caller names the document and field. */
export class ColumnMismatch extends Error {
  override name = 'ColumnMismatch';
}

/** The value for a Parquet column of `type`; null for an absent field. */
export function columnValue(v: unknown, type: ColumnType): unknown {
  if (v === null || v === undefined) return null;
  switch (type.kind) {
    case 'int32':
    case 'int8':
      return integer(v, type.kind);
    case 'int64':
      if (typeof v === 'bigint') return v;
      if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
      if (typeof v === 'string' && /^-?\d+$/.test(v)) return BigInt(v);
      throw mismatch(v, type);
    case 'float':
    case 'double':
      if (typeof v === 'number') return v;
      if (typeof v === 'bigint') return Number(v);
      if (typeof v === 'string') return decodeNumberString(v);
      throw mismatch(v, type);
    case 'bool':
      if (typeof v === 'boolean') return v;
      throw mismatch(v, type);
    case 'string':
      // A string column holds text: a value of another kind is its JSON text.
      return typeof v === 'string' ? v : exactJsonText(v);
    case 'json':
      return exactJsonText(v);
    case 'bytes':
      // raw fields come as base64.
      if (typeof v === 'string') return new Uint8Array(Buffer.from(v, 'base64'));
      throw mismatch(v, type);
    case 'vector':
      return denseCells(v, type);
    case 'list':
      if (!Array.isArray(v)) throw mismatch(v, type);
      return v.map((e) => columnValue(e, type.element));
    case 'map':
      // Maps and weighted sets come as objects: key to value (weight).
      if (typeof v !== 'object' || Array.isArray(v)) throw mismatch(v, type);
      return Object.entries(v as Record<string, unknown>).map(([key, value]) => ({
        key: columnValue(key, type.key),
        value: columnValue(value, type.value),
      }));
    case 'struct': {
      if (typeof v !== 'object' || Array.isArray(v)) throw mismatch(v, type);
      const o = v as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (const f of type.fields) out[f.name] = columnValue(o[f.name], f.type);
      return out;
    }
    case 'position':
      return position(v);
  }
}

/** The text of a CSV cell: empty for an absent field, nested values as JSON text. */
export function cellText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  return exactJsonText(v);
}

/** A number as it is, a string of digits as the number it writes; NaN for anything else. */
function integerOf(v: unknown): number {
  if (typeof v === 'number') return v;
  return typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : NaN;
}

function integer(v: unknown, kind: 'int32' | 'int8'): number {
  const n = integerOf(v);
  const bound = kind === 'int8' ? 128 : 2 ** 31;
  if (!Number.isInteger(n) || n < -bound || n >= bound) throw mismatch(v, { kind });
  return n;
}

/** A dense tensor's cells in row-major order, from any form the service writes (values, bare, hex, cells). */
function denseCells(v: unknown, type: Extract<ColumnType, { kind: 'vector' }>): number[] {
  let cells: unknown = v;
  if (cells !== null && typeof cells === 'object' && !Array.isArray(cells) && 'values' in cells) cells = cells.values;
  let out: number[] | undefined;
  if (typeof cells === 'string') out = decodeHex(cells, type.tensor);
  else if (Array.isArray(cells)) {
    const flat = cells.flat(type.tensor.dimensions.length) as unknown[];
    if (flat.every((c) => typeof c === 'number')) out = flat;
  }
  if (out === undefined) out = fromCells(v, type);
  if (out.length !== type.size) throw mismatch(v, type);
  return out;
}

/** The cells of any other form, placed by their indexes. */
function fromCells(v: unknown, type: Extract<ColumnType, { kind: 'vector' }>): number[] {
  let tensor;
  try {
    tensor = decodeTensor(v, type.tensor);
  } catch {
    throw mismatch(v, type);
  }
  const out = new Array<number>(type.size).fill(0);
  for (const cell of tensor.cells.values()) {
    let index = 0;
    type.tensor.dimensions.forEach((d, i) => (index = index * d.size! + Number(cell.labels[i])));
    out[index] = cell.value;
  }
  return out;
}

/** A position as degrees: the service's `{"lat","lng"}`, or `{"x","y"}` in micro-degrees. */
function position(v: unknown): { lat: number; lng: number } {
  if (typeof v !== 'object' || v === null) throw mismatch(v, { kind: 'position' });
  const p = v as Record<string, unknown>;
  const lat = p.lat ?? p.latitude;
  const lng = p.lng ?? p.longitude;
  if (typeof lat === 'number' && typeof lng === 'number') return { lat, lng };
  if (typeof p.x === 'number' && typeof p.y === 'number') return { lat: p.y / 1e6, lng: p.x / 1e6 };
  throw mismatch(v, { kind: 'position' });
}

function mismatch(v: unknown, type: ColumnType): ColumnMismatch {
  const text = typeof v === 'string' ? JSON.stringify(v) : exactJsonText(v);
  return new ColumnMismatch(
    `${text.length > 60 ? `${text.slice(0, 60)}...` : text} does not fit a ${type.kind} column`,
  );
}
