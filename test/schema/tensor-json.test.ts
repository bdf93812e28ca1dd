import { describe, expect, it } from 'vitest';
import { parseTensorType } from '../../src/schema/data-type.js';
import { encodeTensor, hexOf, javaDoubleString, tensorEncodingOf } from '../../src/schema/tensor-json.js';
import { decodeHex, decodeTensor, storedCellValue } from '../../src/schema/tensor-value.js';
import { tensorFormats } from '../../src/document/tensor-format.js';

/** The pure reader and writer behind `format.tensors` (vespajlib JsonFormat.encode, HexEncoding, TensorReader). */

const render = (typeText: string, value: unknown, format?: string): string =>
  encodeTensor(decodeTensor(value, parseTensorType(typeText)), tensorEncodingOf(format));

describe('javaDoubleString (slime JsonFormat.encodeDOUBLE: String.valueOf(double))', () => {
  it('writes doubles as Java does', () => {
    const cases: [number, string][] = [
      [1, '1.0'],
      [-2, '-2.0'],
      [0, '0.0'],
      [-0, '-0.0'],
      [1.5, '1.5'],
      [0.001, '0.001'],
      [0.0001, '1.0E-4'],
      [1234567, '1234567.0'],
      [1e7, '1.0E7'],
      [12345678.9, '1.23456789E7'],
      [Math.fround(0.1), '0.10000000149011612'],
      [1e-10, '1.0E-10'],
    ];
    for (const [d, text] of cases) expect(javaDoubleString(d), String(d)).toBe(text);
  });
});

describe('cell types (DenseBinaryFormat / TypedBinaryFormat: what the content node keeps)', () => {
  it('rounds float, truncates bfloat16 to the top 16 bits, and casts int8 as (byte) float', () => {
    expect(storedCellValue(0.1, 'float')).toBe(Math.fround(0.1));
    expect(storedCellValue(3.14159, 'bfloat16')).toBe(3.140625);
    expect([1.7, -1.7, 200, 127, -129].map((v) => storedCellValue(v, 'int8'))).toEqual([1, -1, -56, 127, 127]);
  });
  it('writes hex in the cell type width, upper case, big-endian', () => {
    expect(hexOf([1.5, -2], 'double')).toBe('3FF8000000000000C000000000000000');
    expect(hexOf([Math.fround(0.1), 1], 'float')).toBe('3DCCCCCD3F800000');
    expect(hexOf([1.5, 3.140625], 'bfloat16')).toBe('3FC04049');
    expect(hexOf([1, -1, 127], 'int8')).toBe('01FF7F');
  });
  it('reads hex of any width a type accepts (HexEncoding.decodeHex), but int8 only from 2 digits a cell', () => {
    const f = parseTensorType('tensor<float>(x[2])');
    expect(decodeHex('3DCCCCCD3F800000', f)).toEqual([Math.fround(0.1), 1]);
    expect(decodeHex('3FC04049', f)).toEqual([1.5, 3.140625]);
    expect(decodeHex('01FF', f)).toEqual([1, -1]);
    expect(() => decodeHex('3FC04049', parseTensorType('tensor<int8>(x[2])'))).toThrow(
      'Unexpected hex length: Expected 4 hex digits for tensor<int8>(x[2]) but got 8',
    );
  });
});

describe('encodeTensor per format (JsonFormat.encode)', () => {
  it('dense: nested values in the short forms, every cell in the long forms, one hex string in the hex forms', () => {
    const t = 'tensor<float>(x[2],y[2])';
    const v = {
      values: [
        [1, 2],
        [3, 4],
      ],
    };
    expect(render(t, v, 'short')).toBe('{"type":"tensor<float>(x[2],y[2])","values":[[1.0,2.0],[3.0,4.0]]}');
    expect(render(t, v, 'short-value')).toBe('[[1.0,2.0],[3.0,4.0]]');
    expect(render(t, v, 'long-value')).toBe(
      '[{"address":{"x":"0","y":"0"},"value":1.0},{"address":{"x":"0","y":"1"},"value":2.0},{"address":{"x":"1","y":"0"},"value":3.0},{"address":{"x":"1","y":"1"},"value":4.0}]',
    );
    expect(render(t, v, 'hex')).toBe('{"type":"tensor<float>(x[2],y[2])","values":"3F800000400000004040000040800000"}');
    expect(render(t, v, 'hex-value')).toBe('"3F800000400000004040000040800000"');
  });
  it('sparse: short cells by label for one dimension, cells with addresses otherwise; hex changes nothing', () => {
    expect(render('tensor(key{})', { cells: { a: 1, b: 2.5 } }, 'hex')).toBe(
      '{"type":"tensor(key{})","cells":{"a":1.0,"b":2.5}}',
    );
    expect(render('tensor(key{})', { cells: { a: 1 } }, 'long')).toBe(
      '{"type":"tensor(key{})","cells":[{"address":{"key":"a"},"value":1.0}]}',
    );
    expect(render('tensor(a{},b{})', [{ address: { b: 'y', a: 'x' }, value: 2 }], 'hex-value')).toBe(
      '[{"address":{"a":"x","b":"y"},"value":2.0}]',
    );
  });
  it('mixed: labeled blocks for one mapped dimension, addressed blocks for more, hex per block', () => {
    expect(render('tensor<float>(cat{},x[2])', { blocks: { p: [1, 2], q: [3, 4] } }, 'hex')).toBe(
      '{"type":"tensor<float>(cat{},x[2])","blocks":{"p":"3F80000040000000","q":"4040000040800000"}}',
    );
    expect(
      render('tensor(a{},b{},x[2])', { blocks: [{ address: { a: 'u', b: 'v' }, values: [1, 2] }] }, 'short-value'),
    ).toBe('[{"address":{"a":"u","b":"v"},"values":[1.0,2.0]}]');
    expect(render('tensor<int8>(cat{},x[2])', { p: '01FF' }, 'long-value')).toBe(
      '[{"address":{"cat":"p","x":"0"},"value":1},{"address":{"cat":"p","x":"1"},"value":-1}]',
    );
  });
  it('writes a non-finite cell as null, and reads every form it writes back to the same cells', () => {
    expect(render('tensor(x[2])', { values: ['inf', 'nan'] })).toBe('{"type":"tensor(x[2])","values":[null,null]}');
    const types = [
      'tensor(x[2])',
      'tensor<bfloat16>(x[3])',
      'tensor<int8>(x[2])',
      'tensor(key{})',
      'tensor(a{},b{})',
      'tensor<float>(cat{},x[2])',
      'tensor(a{},b{},x[2])',
    ];
    const values: unknown[] = [
      [1.5, -2],
      [1, 2, 3],
      [1, -1],
      { a: 1, b: 2 },
      [{ address: { a: 'x', b: 'y' }, value: 3 }],
      { p: [1, 2] },
      { blocks: [{ address: { a: 'u', b: 'v' }, values: [1, 2] }] },
    ];
    types.forEach((type, i) => {
      const first = render(type, values[i], 'short');
      // A bare array of objects is read as cells (TensorReader.java:217-218): the value forms of addressed blocks do not read back.
      const formats =
        type === 'tensor(a{},b{},x[2])'
          ? tensorFormats.filter((f) => f !== 'short-value' && f !== 'hex-value')
          : tensorFormats;
      for (const format of formats)
        expect(render(type, JSON.parse(render(type, values[i], format)), 'short'), `${type} ${format}`).toBe(first);
    });
    expect(() => render('tensor(a{},b{},x[2])', [{ address: { a: 'u', b: 'v' }, values: [1, 2] }])).toThrow(
      "Missing label of dimension 'x'",
    );
  });
  it('takes an unknown format as short, as the handler does', () => {
    expect(tensorEncodingOf('bogus')).toEqual(tensorEncodingOf('short'));
    expect(tensorEncodingOf(undefined)).toEqual({ shortForm: true, directValues: false, hexForDensePart: false });
  });
});
