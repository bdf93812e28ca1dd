import { plainValue, type JsonNode } from '../schema/json-tree.js';
import { parseTensorType, tensorTypeName, type TensorType } from '../schema/data-type.js';
import { decodeHex, decodeTensor, storedCellValue, type TensorValue } from '../schema/tensor-value.js';

/**
 * Tensors compared by their cells, whatever JSON form each side has (short, long, hex, or the bare `-value`
 * forms), without a schema: a side that names its type (`{"type":"tensor<float>(x[3])",...}`, as every visit form
 * but the `-value` ones writes it) gives the type both sides are read with. Cells are compared as the type's cell
 * type stores them, so `0.1` written out and a float's hex are one value. Pure.
 */

const tensorKeys = new Set(['cells', 'values', 'blocks']);

/** The tensor type a value names, when it is a tensor object with a `type`; undefined otherwise. */
export function namedTensorType(node: JsonNode): string | undefined {
  if (node.kind !== 'object') return undefined;
  let type: string | undefined;
  let content = false;
  for (const [k, v] of node.entries) {
    if (k === 'type' && v.kind === 'string' && /^tensor(?:<\w+>)?\(/.test(v.value)) type = v.value;
    else if (tensorKeys.has(k)) content = true;
    else return undefined;
  }
  return content || type !== undefined ? type : undefined;
}

/**
 * Whether two values are the same tensor, when either names its tensor type; undefined when neither does (or the
 * other side cannot be read as that type), leaving the decision to the structural comparison.
 */
export function sameTensor(a: JsonNode, b: JsonNode): boolean | undefined {
  const ta = namedTensorType(a);
  const tb = namedTensorType(b);
  if (ta === undefined && tb === undefined) return undefined;
  let type: TensorType;
  try {
    type = parseTensorType(ta ?? tb!);
    if (ta !== undefined && tb !== undefined && tensorTypeName(parseTensorType(tb)) !== tensorTypeName(type))
      return false;
  } catch {
    return undefined;
  }
  let va: TensorValue;
  let vb: TensorValue;
  try {
    va = decodeTensor(plainValue(a), type);
    vb = decodeTensor(plainValue(b), type);
  } catch {
    return ta !== undefined && tb !== undefined ? false : undefined;
  }
  return sameCells(va, vb);
}

function sameCells(a: TensorValue, b: TensorValue): boolean {
  if (a.cells.size !== b.cells.size) return false;
  for (const [key, cell] of a.cells) {
    const other = b.cells.get(key);
    if (other === undefined || !sameCellValue(cell.value, other.value)) return false;
  }
  return true;
}

function sameCellValue(x: number, y: number): boolean {
  return x === y || (Number.isNaN(x) && Number.isNaN(y));
}

/**
 * A dense tensor's hex string against its bare values (`hex-value` against `short-value`, neither naming the type):
 * the digits per cell (2, 4, 8 or 16) give the cell type, and the values are compared as that type stores them.
 * Undefined when the array is not numbers or the hex does not fit it.
 */
export function sameTypelessTensor(hex: string, values: JsonNode): boolean | undefined {
  const numbers = flatNumbers(values);
  if (numbers === undefined || numbers.length === 0 || hex.length % numbers.length !== 0) return undefined;
  const cellType = ({ 2: 'int8', 4: 'bfloat16', 8: 'float', 16: 'double' } as const)[hex.length / numbers.length];
  if (cellType === undefined) return undefined;
  let cells: number[];
  try {
    cells = decodeHex(hex, { cellType, dimensions: [{ name: 'x', indexed: true, size: numbers.length }] });
  } catch {
    return undefined;
  }
  return cells.every((c, i) => sameCellValue(c, storedCellValue(numbers[i], cellType)));
}

function flatNumbers(node: JsonNode): number[] | undefined {
  if (node.kind === 'number') return [Number(node.text)];
  if (node.kind !== 'array') return undefined;
  const out: number[] = [];
  for (const item of node.items) {
    const inner = flatNumbers(item);
    if (inner === undefined) return undefined;
    out.push(...inner);
  }
  return out;
}
