import { describe, expect, it } from 'vitest';
import { parseDataType } from '../../src/schema/data-type.js';
import { columnTypeOf, inferColumns } from '../../src/sinks/column-types.js';
import { cellText, columnValue } from '../../src/sinks/column-values.js';
import { exactJsonText, parseExactJson } from '../../src/core/exact-json.js';

const typeOf = (text: string) => columnTypeOf(parseDataType(text, () => undefined));

describe('column values', () => {
  it('keeps integers beyond 2^53 exact, also inside strings untouched and in JSON text', () => {
    const v = parseExactJson(
      '{"a":9007199254740993,"b":[-12345678901234567890,0.12345678901234567],"s":"12345678901234567890"}',
    ) as Record<string, unknown>;
    expect(v).toEqual({
      a: 9007199254740993n,
      b: [-12345678901234567890n, 0.12345678901234567],
      s: '12345678901234567890',
    });
    expect(exactJsonText(v)).toBe(
      '{"a":9007199254740993,"b":[-12345678901234567890,0.12345678901234566],"s":"12345678901234567890"}',
    );
    expect(columnValue(v.a, typeOf('long'))).toBe(9007199254740993n);
    expect(cellText(v.a)).toBe('9007199254740993');
  });

  it('reads a dense tensor from every form the service writes', () => {
    const t = typeOf('tensor<float>(x[2],y[2])');
    const cells = [1, 2, 3, 4];
    expect(
      columnValue(
        {
          type: 'tensor<float>(x[2],y[2])',
          values: [
            [1, 2],
            [3, 4],
          ],
        },
        t,
      ),
    ).toEqual(cells);
    expect(
      columnValue(
        [
          [1, 2],
          [3, 4],
        ],
        t,
      ),
    ).toEqual(cells);
    expect(columnValue('3f8000004000000040400000' + '40800000', t)).toEqual(cells);
    const long = {
      cells: [
        { address: { x: '1', y: '1' }, value: 4 },
        { address: { x: '0', y: '0' }, value: 1 },
        { address: { x: '0', y: '1' }, value: 2 },
        { address: { x: '1', y: '0' }, value: 3 },
      ],
    };
    expect(columnValue(long, t)).toEqual(cells);
    expect(() => columnValue([1, 2, 3], t)).toThrow(/does not fit a vector column/);
  });

  it('maps, weighted sets with int keys, structs, positions and raw', () => {
    expect(columnValue({ 3: 10, 4: 20 }, typeOf('weightedset<int>'))).toEqual([
      { key: 3, value: 10 },
      { key: 4, value: 20 },
    ]);
    expect(columnValue({ k: [1] }, typeOf('map<string,array<long>>'))).toEqual([{ key: 'k', value: [1n] }]);
    expect(columnValue({ lat: 63.4, lng: 10.4 }, typeOf('position'))).toEqual({ lat: 63.4, lng: 10.4 });
    expect(columnValue({ x: 10400000, y: 63400000 }, typeOf('position'))).toEqual({ lat: 63.4, lng: 10.4 });
    expect(columnValue('AQID', typeOf('raw'))).toEqual(new Uint8Array([1, 2, 3]));
    expect(() => columnValue(200, typeOf('byte'))).toThrow(/does not fit a int8 column/);
    expect(columnValue(['a'], typeOf('string'))).toBe('["a"]');
  });

  it('infers columns: integers INT64, mixed numbers DOUBLE, anything else JSON text', () => {
    const cols = inferColumns([
      { i: 1, d: 1, s: 'x', b: true, o: { a: 1 } },
      { i: 2n, d: 0.5, s: null, m: 'x' },
      { m: 1 },
    ]);
    expect(cols.map((c) => [c.name, c.type.kind])).toEqual([
      ['id', 'string'],
      ['i', 'int64'],
      ['d', 'double'],
      ['s', 'string'],
      ['b', 'bool'],
      ['o', 'json'],
      ['m', 'json'],
    ]);
  });
});
