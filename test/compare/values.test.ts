import { describe, expect, it } from 'vitest';
import { differingFields } from '../../src/compare/values.js';
import { canonicalNumber, sameNumber } from '../../src/compare/numbers.js';

const fieldsDiffer = (a: unknown, b: unknown): string[] =>
  differingFields(typeof a === 'string' ? a : JSON.stringify(a), typeof b === 'string' ? b : JSON.stringify(b)).map(
    (d) => d.field,
  );

describe('values compared by meaning', () => {
  it('numbers by value whatever their text; longs beyond 2^53 exactly', () => {
    expect(['1', '1.0', '1e0', '10E-1', '0.1e1'].map(canonicalNumber)).toEqual(Array(5).fill('1e0'));
    expect(sameNumber('-0.50', '-5e-1')).toBe(true);
    expect(sameNumber('0', '-0.0')).toBe(true);
    expect(fieldsDiffer('{"n":9007199254740993}', '{"n":9007199254740992}')).toEqual(['n']);
    expect(fieldsDiffer('{"n":9007199254740993}', '{"n":9007199254740993.0}')).toEqual([]);
    // A float written out in full equals its short form; a double that differs beyond float precision does not.
    expect(sameNumber('0.1', '0.10000000149011612')).toBe(true);
    expect(sameNumber('1.5', '1.5000000001')).toBe(false);
    expect(sameNumber('16777217', '16777216')).toBe(false);
  });

  it('tensors across short, long and hex forms, cells in any order', () => {
    const type = 'tensor<float>(x[3])';
    const short = { t: { type, values: [1, 0.5, 0.1] } };
    const long = {
      t: {
        type,
        cells: [
          { address: { x: '2' }, value: 0.1 },
          { address: { x: '0' }, value: 1 },
          { address: { x: '1' }, value: 0.5 },
        ],
      },
    };
    const hex = { t: { type, values: '3F8000003F0000003DCCCCCD' } };
    expect(fieldsDiffer(short, long)).toEqual([]);
    expect(fieldsDiffer(short, hex)).toEqual([]);
    expect(fieldsDiffer(hex, { t: [1, 0.5, 0.1] })).toEqual([]);
    expect(fieldsDiffer(hex, { t: { values: [1, 0.5, 0.1] } })).toEqual([]);
    expect(fieldsDiffer(short, { t: { type, values: [1, 0.5, 0.2] } })).toEqual(['t']);
    const mapped = { m: { type: 'tensor(k{})', cells: { a: 1, b: 2 } } };
    expect(
      fieldsDiffer(mapped, {
        m: {
          type: 'tensor(k{})',
          cells: [
            { address: { k: 'b' }, value: 2 },
            { address: { k: 'a' }, value: 1 },
          ],
        },
      }),
    ).toEqual([]);
    expect(fieldsDiffer(mapped, { m: { type: 'tensor(k{})', cells: { a: 1 } } })).toEqual(['m']);
    expect(fieldsDiffer(mapped, { m: { type: 'tensor(j{})', cells: { a: 1, b: 2 } } })).toEqual(['m']);
    // Neither side names its type: hex against the bare values.
    expect(fieldsDiffer({ t: '3F8000003F000000' }, { t: [1, 0.5] })).toEqual([]);
  });

  it('weighted sets and maps in any order, map entries against objects, arrays in order, nulls as absent', () => {
    expect(fieldsDiffer({ w: { a: 1, b: 2 } }, { w: { b: 2, a: 1 } })).toEqual([]);
    expect(fieldsDiffer({ w: { a: 1, b: 2 } }, { w: { b: 3, a: 1 } })).toEqual(['w']);
    expect(
      fieldsDiffer(
        { m: { x: 's', y: 't' } },
        {
          m: [
            { key: 'y', value: 't' },
            { key: 'x', value: 's' },
          ],
        },
      ),
    ).toEqual([]);
    expect(
      fieldsDiffer(
        {
          m: [
            { key: 1, value: 'a' },
            { key: 2, value: 'b' },
          ],
        },
        {
          m: [
            { key: 2, value: 'b' },
            { key: 1, value: 'a' },
          ],
        },
      ),
    ).toEqual([]);
    expect(fieldsDiffer({ l: [1, 2] }, { l: [2, 1] })).toEqual(['l']);
    expect(fieldsDiffer({ s: 'x', gone: null }, { s: 'x' })).toEqual([]);
    expect(fieldsDiffer({ s: '1' }, { s: 1 })).toEqual(['s']);
    expect(fieldsDiffer({ a: 1 }, { b: 1 })).toEqual(['a', 'b']);
  });

  it('reports each differing field with its text on both sides, absent as undefined', () => {
    const d = differingFields('{"n": 12345678901234567890, "s":"x"}', '{"s":"y"}');
    expect(d).toEqual([
      { field: 'n', a: '12345678901234567890' },
      { field: 's', a: '"x"', b: '"y"' },
    ]);
  });
});
