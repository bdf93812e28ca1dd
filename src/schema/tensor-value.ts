import type { TensorType } from './data-type.js';
import { hexTensorError } from './tensor-hex.js';

/**
 * A tensor's cells read from any JSON form the document parser takes (cells, values, blocks, hex, the bare forms),
 * with each value held as the content node stores it in the field's cell type. What is read here has already
 * been judged (value-reader.ts); what cannot be read throws a plain Error and the caller keeps the text as it was.
 * Pure: no I/O.
 */

/** One cell: a label per dimension, in the type's dimension order (indexed labels as decimal text). */
export interface TensorCell {
  labels: string[];
  value: number;
}

/** The cells by address; a cell given twice keeps its last value, in the place of its first. */
export interface TensorValue {
  type: TensorType;
  cells: Map<string, TensorCell>;
}

/** The key of an address in `TensorValue.cells`. */
export function addressKey(labels: readonly string[]): string {
  return labels.join('\u0000');
}

const int32 = 2 ** 31;

/**
 * A double as the field's cell type stores it: float rounds (Float.floatValue), bfloat16 keeps the top 16 bits
 * of the float, int8 is Java's `(byte) float` (truncate, saturate to int, wrap to a byte). The content node keeps
 * tensors in that binary form, so a get or visit shows these values.
 */
export function storedCellValue(value: number, cellType: TensorType['cellType']): number {
  switch (cellType) {
    case 'double':
      return value;
    case 'float':
      return Math.fround(value);
    case 'bfloat16': {
      const view = new DataView(new ArrayBuffer(4));
      view.setFloat32(0, value);
      view.setUint16(2, 0);
      return view.getFloat32(0);
    }
    case 'int8': {
      const f = Math.fround(value);
      if (Number.isNaN(f)) return 0;
      // Toward zero, held within 32 bits (infinities included), as Java's (int) cast of a float.
      const i = Math.min(int32 - 1, Math.max(-int32, Math.trunc(f)));
      return (i << 24) >> 24;
    }
  }
}

/** Cell text as the tensor reader takes it: numbers, and `inf`, `-inf`, `nan` in any case. */
export function decodeNumberString(text: string): number {
  const s = text.toLowerCase();
  if (s === 'infinity' || s === '+infinity' || s === 'inf' || s === '+inf') return Infinity;
  if (s === '-infinity' || s === '-inf') return -Infinity;
  if (s === 'nan' || s === '+nan' || s === '-nan') return NaN;
  const n = Number(text.trim());
  if (text.trim() === '' || Number.isNaN(n)) throw new Error(`Expected a number but got '${text}'`);
  return n;
}

function cellNumber(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string') return decodeNumberString(v);
  // Exact-number wrappers of the simulator's JSON reader convert through valueOf.
  if (v !== null && typeof v === 'object') return Number(v);
  throw new Error(`Expected a number but got '${String(v)}'`);
}

/** How many cells one dense block holds, and its indexed dimensions' sizes (unbound: undefined). */
function indexedDims(type: TensorType): TensorType['dimensions'] {
  return type.dimensions.filter((d) => d.indexed);
}

function blockSize(type: TensorType): number {
  return indexedDims(type).reduce((n, d) => n * (d.size ?? 0), 1);
}

/** Labels of the indexed dimensions for a row-major index into a block of `dims`. */
function denseLabels(index: number, dims: TensorType['dimensions']): string[] {
  const out = new Array<string>(dims.length);
  for (let d = dims.length - 1; d >= 0; d--) {
    const size = dims[d].size ?? 1;
    out[d] = String(index % size);
    index = Math.floor(index / size);
  }
  return out;
}

/**
 * The double values of a hex string, as the service's HexEncoding reads them: the digits per cell (2, 4, 8 or 16)
 * follow from the length and the dense cell count (the rule is tensor-hex.ts's).
 */
export function decodeHex(hex: string, type: TensorType): number[] {
  const count = blockSize(type);
  const error = hexTensorError(hex, type, count);
  if (error !== undefined) throw new Error(error);
  if (count === 0) return [];
  const digits = hex.length / count;
  const out = new Array<number>(count);
  const view = new DataView(new ArrayBuffer(8));
  for (let i = 0; i < count; i++) {
    const cell = hex.slice(i * digits, (i + 1) * digits);
    if (digits === 2) out[i] = (parseInt(cell, 16) << 24) >> 24;
    else if (digits === 4 || digits === 8) {
      view.setUint32(0, parseInt(cell.padEnd(8, '0'), 16));
      out[i] = view.getFloat32(0);
    } else {
      view.setUint32(0, parseInt(cell.slice(0, 8), 16));
      view.setUint32(4, parseInt(cell.slice(8), 16));
      out[i] = view.getFloat64(0);
    }
  }
  return out;
}

class Builder {
  readonly cells = new Map<string, TensorCell>();
  constructor(readonly type: TensorType) {}

  cell(labels: string[], value: unknown): void {
    const stored = storedCellValue(cellNumber(value), this.type.cellType);
    const key = addressKey(labels);
    const existing = this.cells.get(key);
    if (existing !== undefined) existing.value = stored;
    else this.cells.set(key, { labels, value: stored });
  }

  /** `{dim: label}` in any key order, to labels in the type's order. */
  address(address: unknown, dims: TensorType['dimensions']): string[] {
    if (address === null || typeof address !== 'object' || Array.isArray(address))
      throw new Error('Expected an address object');
    const given = address as Record<string, unknown>;
    return dims.map((d) => {
      const label = given[d.name];
      if (typeof label === 'string') return label;
      if (typeof label === 'number') return String(label);
      throw new Error(`Missing label of dimension '${d.name}'`);
    });
  }

  /** A block's values (nested arrays flattened, or hex) at the sparse labels `sparse` (empty for a dense tensor). */
  block(sparse: string[], values: unknown): void {
    const dense = indexedDims(this.type);
    const flat = typeof values === 'string' ? decodeHex(values, this.type) : flatten(values);
    if (dense.some((d) => d.size === undefined)) {
      // An unbound dense tensor's values fill its one dimension from 0.
      if (dense.length !== 1 || sparse.length > 0) throw new Error('Values of an unbound tensor need one dimension');
      flat.forEach((v, i) => this.cell([String(i)], v));
      return;
    }
    if (flat.length !== blockSize(this.type))
      throw new Error(`Expected ${blockSize(this.type)} values, but got ${flat.length}`);
    flat.forEach((v, i) => this.cell(this.merge(sparse, denseLabels(i, dense)), v));
  }

  /** Sparse and dense labels interleaved in the type's dimension order. */
  merge(sparse: string[], dense: string[]): string[] {
    let s = 0;
    let d = 0;
    return this.type.dimensions.map((dim) => (dim.indexed ? dense[d++] : sparse[s++]));
  }
}

function flatten(values: unknown): unknown[] {
  if (!Array.isArray(values)) return [values];
  return values.flatMap((v: unknown) => (Array.isArray(v) ? flatten(v) : [v]));
}

function isArrayOfObjects(v: unknown): boolean {
  let x = v;
  while (Array.isArray(x) && x.length > 0) x = x[0];
  return x !== v && x !== null && typeof x === 'object' && !Array.isArray(x);
}

function readCells(b: Builder, cells: unknown): void {
  const dims = b.type.dimensions;
  if (Array.isArray(cells)) {
    for (const cell of cells as unknown[]) {
      const c = cell as { address?: unknown; value?: unknown };
      b.cell(b.address(c.address, dims), c.value);
    }
    return;
  }
  if (cells === null || typeof cells !== 'object') throw new Error("Expected 'cells' to contain an array or an object");
  if (dims.length !== 1) throw new Error('Short cells need a single dimension');
  for (const [label, value] of Object.entries(cells as Record<string, unknown>)) b.cell([label], value);
}

function readBlocks(b: Builder, blocks: unknown): void {
  const mapped = b.type.dimensions.filter((d) => !d.indexed);
  if (Array.isArray(blocks)) {
    for (const block of blocks as unknown[]) {
      const x = block as { address?: unknown; values?: unknown };
      b.block(b.address(x.address, mapped), x.values);
    }
    return;
  }
  if (blocks === null || typeof blocks !== 'object')
    throw new Error("Expected 'blocks' to contain an array or an object");
  if (mapped.length !== 1) throw new Error('Labeled blocks need a single mapped dimension');
  for (const [label, values] of Object.entries(blocks as Record<string, unknown>)) b.block([label], values);
}

/** A value whose form follows from the type alone (no `cells`/`values`/`blocks` key), as the reader decides it. */
function readDirect(b: Builder, v: unknown): void {
  const hasIndexed = b.type.dimensions.some((d) => d.indexed);
  const hasMapped = b.type.dimensions.some((d) => !d.indexed);
  if (isArrayOfObjects(v)) readCells(b, v);
  else if (!hasMapped) b.block([], v);
  else if (hasIndexed) readBlocks(b, v);
  else readCells(b, v);
}

/** Reads one stored tensor field value (parsed JSON) of `type`. */
export function decodeTensor(value: unknown, type: TensorType): TensorValue {
  const b = new Builder(type);
  const allIndexed = type.dimensions.every((d) => d.indexed);
  if (typeof value === 'string') b.block([], value);
  else if (Array.isArray(value)) readDirect(b, value);
  else if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    const known = entries.some(
      ([k, v]) => (k === 'cells' && !primitiveContent(v)) || (k === 'values' && allIndexed) || k === 'blocks',
    );
    if (!known) {
      const rest = entries.filter(([k, v]) => !(k === 'type' && typeof v === 'string'));
      if (rest.length > 0) readDirect(b, Object.fromEntries(rest));
    } else {
      for (const [k, v] of entries) {
        if (k === 'cells') readCells(b, v);
        else if (k === 'values') b.block([], v);
        else if (k === 'blocks') readBlocks(b, v);
      }
    }
  } else throw new Error('Not a tensor value');
  return { type, cells: b.cells };
}

/** `cells` holding a number or an array of numbers is no cells key (a label called "cells" of a short form). */
function primitiveContent(v: unknown): boolean {
  if (typeof v === 'number') return true;
  return Array.isArray(v) && v.length > 0 && typeof v[0] === 'number';
}
