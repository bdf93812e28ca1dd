import { tensorTypeName, type TensorType } from './data-type.js';

/**
 * Whether a hex string is a dense tensor's cells as the service decodes them (HexEncoding.decodeHex): the
 * digits per cell are inferred from the length, 2 (int8), 4 (bfloat16), 8 (float) or 16 (double); any of these
 * converts to a float type, only int8 hex goes into an int8 tensor. Returns the service's message, or undefined.
 * `cells` is the number of cells the hex fills: the whole tensor, or one dense block of a mixed one.
 */
export function hexTensorError(hex: string, t: TensorType, cells: number): string | undefined {
  const typeName = tensorTypeName(t);
  if (cells === 0) return hex === '' ? undefined : `Hex value must be empty for ${typeName}`;
  const perCell = { int8: 2, bfloat16: 4, float: 8, double: 16 }[t.cellType];
  const wrongLength = `Unexpected hex length: Expected ${cells * perCell} hex digits for ${typeName} but got ${hex.length}`;
  if (hex.length % cells !== 0) return wrongLength;
  const given = hex.length / cells;
  if (![2, 4, 8, 16].includes(given))
    return `Unexpected hex digits per cell: Expecting 2, 4, 8 or 16, but was ${given}`;
  if (t.cellType === 'int8' && given !== 2) return wrongLength;
  // Digits are decoded one by one after the length checks, so the first bad one is named.
  const bad = /[^0-9a-fA-F]/.exec(hex);
  if (bad !== null) return `Invalid digit '${bad[0]}' at index ${bad.index} in input ${hex}`;
  return undefined;
}
