import { tensorTypeName, type TensorType } from './data-type.js';
import type { TensorFormat } from '../document/tensor-format.js';
import { addressKey, type TensorValue } from './tensor-value.js';

/**
 * A tensor written as the document interface writes it for each `format.tensors`: the short forms pick values,
 * cells or blocks by the tensor's kind, the long forms always list cells, the `-value` forms leave out the
 * `{"type":...}` wrapper, and hex writes dense cells as one string of the cell type's big-endian bytes. Doubles
 * are written as Java prints them, and a non-finite value as null. Pure: no I/O.
 */

/** The three switches of the service's encoder. */
export interface TensorEncoding {
  shortForm: boolean;
  directValues: boolean;
  hexForDensePart: boolean;
}

/** The encoder switches of a format; any other text is `short`, as the service reads the parameter. */
export function tensorEncodingOf(format: string | undefined): TensorEncoding {
  switch (format as TensorFormat | undefined) {
    case 'hex':
      return { shortForm: true, directValues: false, hexForDensePart: true };
    case 'hex-value':
      return { shortForm: true, directValues: true, hexForDensePart: true };
    case 'short-value':
      return { shortForm: true, directValues: true, hexForDensePart: false };
    case 'long':
      return { shortForm: false, directValues: false, hexForDensePart: false };
    case 'long-value':
      return { shortForm: false, directValues: true, hexForDensePart: false };
    default:
      return { shortForm: true, directValues: false, hexForDensePart: false };
  }
}

/** Java's Double.toString: plain in [1e-3, 1e7) with at least one decimal, else `d.dddE<n>`. */
export function javaDoubleString(d: number): string {
  if (d === 0) return Object.is(d, -0) ? '-0.0' : '0.0';
  const abs = Math.abs(d);
  if (abs >= 1e-3 && abs < 1e7) {
    const s = String(d);
    return s.includes('.') ? s : `${s}.0`;
  }
  const [mantissa, exponent] = d.toExponential().split('e');
  return `${mantissa.includes('.') ? mantissa : `${mantissa}.0`}E${Number(exponent)}`;
}

function cellText(value: number, cellType: TensorType['cellType']): string {
  if (cellType === 'int8') return String(value);
  return Number.isFinite(value) ? javaDoubleString(value) : 'null';
}

/** Dense cells as hex, upper case, in the cell type's width (double 16 digits, float 8, bfloat16 4, int8 2). */
export function hexOf(values: readonly number[], cellType: TensorType['cellType']): string {
  const view = new DataView(new ArrayBuffer(8));
  let out = '';
  for (const v of values) {
    switch (cellType) {
      case 'double':
        view.setFloat64(0, v);
        out += view.getUint32(0).toString(16).padStart(8, '0') + view.getUint32(4).toString(16).padStart(8, '0');
        break;
      case 'float':
        view.setFloat32(0, v);
        out += view.getUint32(0).toString(16).padStart(8, '0');
        break;
      case 'bfloat16':
        view.setFloat32(0, v);
        out += view.getUint16(0).toString(16).padStart(4, '0');
        break;
      case 'int8':
        out += (v & 0xff).toString(16).padStart(2, '0');
        break;
    }
  }
  return out.toUpperCase();
}

type Dims = TensorType['dimensions'];

/** The sizes of indexed dimensions: the bound size, or one past the largest label given (unbound). */
function sizesOf(t: TensorValue, dims: Dims): number[] {
  return dims.map((d) => {
    if (d.size !== undefined) return d.size;
    const at = t.type.dimensions.indexOf(d);
    let max = -1;
    for (const c of t.cells.values()) max = Math.max(max, Number(c.labels[at]));
    return max + 1;
  });
}

/** Every row-major position of a block of `sizes`, as labels. */
function positions(sizes: number[]): string[][] {
  let out: string[][] = [[]];
  for (const size of sizes)
    out = out.flatMap((prefix) => Array.from({ length: size }, (_, i) => [...prefix, String(i)]));
  return out;
}

interface Block {
  sparse: string[];
  values: number[];
}

/** The tensor as dense blocks per sparse address (one block with no labels for a dense tensor), missing cells 0. */
function blocksOf(t: TensorValue): { blocks: Block[]; dense: Dims; sizes: number[] } {
  const dense = t.type.dimensions.filter((d) => d.indexed);
  const sizes = sizesOf(t, dense);
  const offsets = positions(sizes);
  const blocks = new Map<string, Block>();
  const sparseOf = (labels: string[]): string[] => labels.filter((_, i) => !t.type.dimensions[i].indexed);
  const denseOf = (labels: string[]): string[] => labels.filter((_, i) => t.type.dimensions[i].indexed);
  const size = offsets.length;
  if (dense.length === t.type.dimensions.length)
    blocks.set('', { sparse: [], values: new Array<number>(size).fill(0) });
  for (const cell of t.cells.values()) {
    const sparse = sparseOf(cell.labels);
    const key = addressKey(sparse);
    let block = blocks.get(key);
    if (block === undefined) blocks.set(key, (block = { sparse, values: new Array<number>(size).fill(0) }));
    let index = 0;
    denseOf(cell.labels).forEach((label, i) => (index = index * sizes[i] + Number(label)));
    block.values[index] = cell.value;
  }
  return { blocks: [...blocks.values()], dense, sizes };
}

function nested(values: number[], sizes: number[], cellType: TensorType['cellType']): string {
  if (sizes.length === 0) return `[${values.map((v) => cellText(v, cellType)).join(',')}]`;
  const walk = (offset: number, d: number): string => {
    const stride = sizes.slice(d + 1).reduce((a, b) => a * b, 1);
    const parts: string[] = [];
    for (let i = 0; i < sizes[d]; i++)
      parts.push(d === sizes.length - 1 ? cellText(values[offset + i], cellType) : walk(offset + i * stride, d + 1));
    return `[${parts.join(',')}]`;
  };
  return walk(0, 0);
}

function addressJson(dims: Dims, labels: string[]): string {
  return `{${dims.map((d, i) => `${JSON.stringify(d.name)}:${JSON.stringify(labels[i])}`).join(',')}}`;
}

/** Every cell with its address: all positions of each dense block, in order. */
function cellsJson(t: TensorValue): string {
  const { cellType, dimensions } = t.type;
  const out: string[] = [];
  const cell = (labels: string[], value: number): void =>
    void out.push(`{"address":${addressJson(dimensions, labels)},"value":${cellText(value, cellType)}}`);
  if (dimensions.every((d) => !d.indexed)) {
    for (const c of t.cells.values()) cell(c.labels, c.value);
  } else {
    const { blocks, sizes } = blocksOf(t);
    const offsets = positions(sizes);
    for (const b of blocks) {
      offsets.forEach((dense, i) => {
        let s = 0;
        let d = 0;
        cell(
          dimensions.map((dim) => (dim.indexed ? dense[d++] : b.sparse[s++])),
          b.values[i],
        );
      });
    }
  }
  return `[${out.join(',')}]`;
}

/** The one key and value the encoder writes (`values`, `cells` or `blocks`). */
function body(t: TensorValue, e: TensorEncoding): [string, string] {
  const { cellType, dimensions } = t.type;
  if (!e.shortForm) return ['cells', cellsJson(t)];
  const mapped = dimensions.filter((d) => !d.indexed);
  const denseValues = (b: Block, sizes: number[]): string =>
    e.hexForDensePart ? JSON.stringify(hexOf(b.values, cellType)) : nested(b.values, sizes, cellType);
  if (mapped.length === 0) {
    const { blocks, sizes } = blocksOf(t);
    return ['values', denseValues(blocks[0], sizes)];
  }
  if (mapped.length === dimensions.length) {
    if (dimensions.length !== 1) return ['cells', cellsJson(t)];
    return [
      'cells',
      `{${[...t.cells.values()].map((c) => `${JSON.stringify(c.labels[0])}:${cellText(c.value, cellType)}`).join(',')}}`,
    ];
  }
  const { blocks, sizes } = blocksOf(t);
  if (mapped.length === 1)
    return ['blocks', `{${blocks.map((b) => `${JSON.stringify(b.sparse[0])}:${denseValues(b, sizes)}`).join(',')}}`];
  return [
    'blocks',
    `[${blocks.map((b) => `{"address":${addressJson(mapped, b.sparse)},"values":${denseValues(b, sizes)}}`).join(',')}]`,
  ];
}

/** The tensor's JSON text in the given encoding. */
export function encodeTensor(t: TensorValue, e: TensorEncoding): string {
  const [key, value] = body(t, e);
  if (e.directValues) return value;
  return `{"type":${JSON.stringify(tensorTypeName(t.type))},${JSON.stringify(key)}:${value}}`;
}
