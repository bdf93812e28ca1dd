import { describe, expect, it } from 'vitest';
import { rowMapping, type RowOptions } from '../../src/tabular/row-operation.js';
import { EpochMicros } from '../../src/tabular/json-value.js';
import { isVespaBulkError, type VespaBulkError } from '../../src/core/errors.js';
import { documentTypesOf, type DocumentModel } from '../../src/schema/document-model.js';
import { parseSchema } from '../../src/schema/sd-schema.js';
import { kindsSchema } from '../schema/fixtures.js';

const model: DocumentModel = {
  types: documentTypesOf([parseSchema(kindsSchema, 'kinds.sd')]),
  ignoreUndefinedFields: false,
  documentApi: true,
};

function op(options: RowOptions, row: Record<string, unknown>, withModel = false, text = false): unknown {
  return JSON.parse(
    rowMapping(options, Object.keys(row), 'test', withModel ? model : undefined, text)
      .operation(row)
      .toString(),
  );
}

function rowError(options: RowOptions, row: Record<string, unknown>, withModel = false, text = false): VespaBulkError {
  try {
    rowMapping(options, Object.keys(row), 'test', withModel ? model : undefined, text).operation(row);
  } catch (err) {
    if (isVespaBulkError(err)) return err;
    throw err;
  }
  throw new Error('no error');
}

describe('row → operation without a schema', () => {
  it('puts with a template id; the id column stays out of the fields, nulls are left out, natural JSON values', () => {
    const bytes = rowMapping(
      { id: 'id:shop:product::{doc_id}' },
      ['doc_id', 'title', 'n', 'big', 'none', 'list', 'map', 'raw', 'when'],
      'test',
    ).operation({
      doc_id: 42n,
      title: 'a "b"',
      n: 1.5,
      big: 9007199254740993n,
      none: null,
      list: [1, 2],
      map: new Map([['k', 1]]),
      raw: new Uint8Array([1, 2, 3]),
      when: new EpochMicros(1_700_000_000_123_456n),
    });
    // Written as text: the long past 2^53 must arrive digit for digit.
    expect(bytes.toString()).toBe(
      '{"put":"id:shop:product::42","fields":{"title":"a \\"b\\"","n":1.5,"big":9007199254740993,"list":[1,2],"map":{"k":1},"raw":"AQID","when":1700000000}}',
    );
  });

  it('writes timestamps in the unit asked for, rounding down before 1970 too', () => {
    const when = new EpochMicros(1_700_000_000_123_456n);
    expect(op({ idField: 'id', timestampUnit: 'ms' }, { id: 'id:a:b::1', when })).toEqual({
      put: 'id:a:b::1',
      fields: { when: 1_700_000_000_123 },
    });
    expect(op({ idField: 'id', timestampUnit: 'us' }, { id: 'id:a:b::1', when })).toEqual({
      put: 'id:a:b::1',
      fields: { when: 1_700_000_000_123_456 },
    });
    expect(op({ idField: 'id' }, { id: 'id:a:b::1', when: new EpochMicros(-1n) })).toEqual({
      put: 'id:a:b::1',
      fields: { when: -1 },
    });
  });

  it('takes full ids from --id-field, or local parts with --document-type and --namespace; defaults to a column named id', () => {
    expect(op({ idField: 'key' }, { key: 'id:ns:t::x', a: 'v' })).toEqual({ put: 'id:ns:t::x', fields: { a: 'v' } });
    expect(op({ idField: 'key', documentType: 'music', namespace: 'ns' }, { key: 'x/y', a: 'v' })).toEqual({
      put: 'id:ns:music::x/y',
      fields: { a: 'v' },
    });
    expect(op({ idField: 'key', documentType: 'music' }, { key: 7 })).toEqual({ put: 'id:music:music::7', fields: {} });
    expect(op({}, { id: 'id:ns:t::x' })).toEqual({ put: 'id:ns:t::x', fields: {} });
  });

  it('updates assign each field (create when asked); removes use only the id', () => {
    expect(op({ idField: 'id', operation: 'update', create: true }, { id: 'id:a:b::1', x: 1, gone: null })).toEqual({
      update: 'id:a:b::1',
      create: true,
      fields: { x: { assign: 1 } },
    });
    expect(op({ idField: 'id', operation: 'update' }, { id: 'id:a:b::1', x: 'y' })).toEqual({
      update: 'id:a:b::1',
      fields: { x: { assign: 'y' } },
    });
    expect(op({ idField: 'id', operation: 'remove' }, { id: 'id:a:b::1', x: 1 })).toEqual({ remove: 'id:a:b::1' });
  });

  it('fails a row whose id cannot be made, with VB_BAD_ROW and the reason', () => {
    expect(rowError({ id: 'id:a:b::{k}' }, { k: null }).message).toMatch(/column 'k' of the id is empty/);
    expect(rowError({ idField: 'k' }, { k: 'not-an-id' }).code).toBe('VB_BAD_ROW');
    expect(rowError({ idField: 'k' }, { k: 'not-an-id' }).message).toMatch(/must start with 'id:'/);
    expect(rowError({ idField: 'k' }, { k: 'id:a:b::1', x: Number.NaN }).message).toMatch(
      /column 'x': NaN has no JSON form/,
    );
  });

  it('refuses options that cannot work before any row (VB_USAGE)', () => {
    const usage = (o: RowOptions, columns: string[]) => {
      try {
        rowMapping(o, columns, 'f.csv');
      } catch (err) {
        return (err as VespaBulkError).code + ': ' + (err as Error).message;
      }
      return 'accepted';
    };
    expect(usage({}, ['a', 'b'])).toMatch(/^VB_USAGE: f.csv: say where the document id comes from/);
    expect(usage({ idField: 'nope' }, ['a'])).toMatch(/^VB_USAGE: f.csv: no column 'nope'/);
    expect(usage({ id: 'id:a:b::{nope}' }, ['a'])).toMatch(/no column 'nope'/);
    expect(usage({ id: 'id:a:b::x' }, ['a'])).toMatch(/no \{column\} placeholder/);
    expect(usage({ id: 'id:a:b::{a}', idField: 'a' }, ['a'])).toMatch(/not both/);
    expect(usage({ idField: 'a', create: true }, ['a'])).toMatch(/--create applies to --operation update/);
  });
});

describe('row → operation typed by the schema', () => {
  const id = 'id:ns:kinds::1';
  it('shapes each value by its field type: tensors, structs, maps, weighted sets, longs', () => {
    const row = {
      id,
      year: 2001n,
      big: new EpochMicros(5_000_000n),
      emb: new Float32Array([1, 2, 3]),
      sparse: { a: 1, b: 2 },
      nested: { sub: 3 },
      ratings: [
        { key: 'x', value: 1 },
        { key: 'y', value: null },
      ],
      weights: { w: 5 },
      tags: ['t'],
      title: 12,
    };
    expect(op({ idField: 'id' }, row, true)).toEqual({
      put: id,
      fields: {
        year: 2001,
        big: 5,
        emb: { values: [1, 2, 3] },
        sparse: { cells: { a: 1, b: 2 } },
        nested: { sub: 3 },
        ratings: { x: 1 },
        weights: { w: 5 },
        tags: ['t'],
        title: '12',
      },
    });
  });

  it('parses CSV text cells by type: numbers, bools, JSON for structured fields; empty cells are absent', () => {
    const row = {
      id,
      year: ' 1999 ',
      score: '2.5',
      flag: 'TRUE',
      big: '-9223372036854775808',
      emb: '[1, 2, 3]',
      nested: '{"sub": 4}',
      tags: '["a","b"]',
      title: '',
    };
    expect(rowMapping({ idField: 'id' }, Object.keys(row), 't', model, true).operation(row).toString()).toBe(
      '{"put":"id:ns:kinds::1","fields":{"year":1999,"score":2.5,"flag":true,"big":-9223372036854775808,"emb":{"values":[1,2,3]},"nested":{"sub":4},"tags":["a","b"]}}',
    );
  });

  it("reads list cells as DuckDB ([a, b]) and pandas (['a', 'b']) write them to CSV", () => {
    const row = { id, tags: '[\'x, y\', "z"]', emb: '[1, 2.5, -3]', weights: '[a, b]' };
    expect(op({ idField: 'id' }, row, true, true)).toEqual({
      put: id,
      fields: { tags: ['x, y', 'z'], emb: { values: [1, 2.5, -3] }, weights: { a: 1, b: 1 } },
    });
  });

  it('keeps an id column that is a field of the document type', () => {
    expect(op({ id: 'id:ns:kinds::{title}' }, { title: 'x', year: 1 }, true)).toEqual({
      put: 'id:ns:kinds::x',
      fields: { title: 'x', year: 1 },
    });
  });

  it('fails the row naming the column and the reason when the type cannot take the value', () => {
    expect(rowError({ idField: 'id' }, { id, emb: [1, 2] }, true).message).toBe(
      "column 'emb': tensor<float>(x[3]) has 3 cells, the list 2",
    );
    expect(rowError({ idField: 'id' }, { id, year: 2 ** 40 }, true).message).toMatch(
      /column 'year': 1099511627776 is outside the range of int/,
    );
    expect(rowError({ idField: 'id' }, { id, year: 'x' }, true, true).message).toMatch(
      /column 'year': int needs an integer/,
    );
    expect(rowError({ idField: 'id' }, { id, nope: 1 }, true).message).toBe(
      "column 'nope': no field 'nope' in document type 'kinds'",
    );
    expect(rowError({ idField: 'id' }, { id, nested: { other: 1 } }, true).message).toMatch(
      /struct inner has no field 'other'/,
    );
    expect(rowError({ idField: 'id' }, { id, flag: 'maybe' }, true, true).message).toMatch(
      /column 'flag': bool needs true or false/,
    );
    expect(rowError({ idField: 'id' }, { id: 'id:ns:other::1', year: 1 }, true).message).toMatch(
      /document type 'other' is not in the application package/,
    );
    expect(rowError({ idField: 'id' }, { id, tags: '[1,' }, true, true).message).toMatch(
      /column 'tags': not valid JSON/,
    );
  });
});
