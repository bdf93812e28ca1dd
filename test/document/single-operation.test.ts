import { describe, expect, it } from 'vitest';
import {
  conditionAndCreate,
  fieldsTextOf,
  operationMetaOf,
  singleOperationOf,
  splitPositionals,
} from '../../src/document/single-operation.js';

describe('splitPositionals', () => {
  it('takes the first of two as the id, one alone as the id when it looks like one, else as the document', () => {
    expect(splitPositionals('id:a:b::c', 'doc.json')).toEqual({ id: 'id:a:b::c', source: 'doc.json' });
    expect(splitPositionals('id:a:b::c', undefined)).toEqual({ id: 'id:a:b::c' });
    expect(splitPositionals('doc.json', undefined)).toEqual({ source: 'doc.json' });
    expect(splitPositionals('-', undefined)).toEqual({ source: '-' });
    expect(splitPositionals(undefined, undefined)).toEqual({});
  });
});

describe('operationMetaOf', () => {
  it('reads the operation, id, condition and create of the feed forms', () => {
    expect(operationMetaOf('{"put":"id:a:b::c","fields":{"x":1},"condition":"b.x==1","create":true}')).toEqual({
      kind: 'put',
      id: 'id:a:b::c',
      condition: 'b.x==1',
      create: true,
    });
    expect(operationMetaOf('{"remove":"id:a:b::c"}')).toEqual({ kind: 'remove', id: 'id:a:b::c' });
    expect(operationMetaOf('{"fields":{"x":1},"create":false}')).toEqual({ create: false });
  });

  it('reads nothing of the fields object alone', () => {
    expect(operationMetaOf('{"x":1,"condition":"not a key here"}')).toEqual({});
  });

  it('refuses what the feed would refuse, as bad usage', () => {
    expect(() => operationMetaOf('{"put":"nope","fields":{}}')).toThrow(expect.objectContaining({ code: 'VB_USAGE' }));
    expect(() => operationMetaOf('{"fields":{},"create":"yes"}')).toThrow(/"create" must be true or false/);
    expect(() => operationMetaOf('[1]')).toThrow(/must be a JSON object/);
    expect(() => operationMetaOf('{')).toThrow(expect.objectContaining({ code: 'VB_BAD_JSON' }));
  });
});

describe('fieldsTextOf', () => {
  it('keeps the fields text as given and adds assignments', () => {
    expect(fieldsTextOf('{"put":"id:a:b::c","fields":{"n":12345678901234567890}}', undefined).text).toBe(
      '{"n":12345678901234567890}',
    );
    expect(fieldsTextOf('{"a":1}', ['b=2', 'c=x']).text).toBe('{"a":1,"b":{"assign":2},"c":{"assign":"x"}}');
    expect(fieldsTextOf(undefined, ['b=2']).text).toBe('{"b":{"assign":2}}');
  });

  it('refuses a field both given and assigned, and an assignment without =', () => {
    expect(() => fieldsTextOf('{"a":1}', ['a=2'])).toThrow(/say it once/);
    expect(() => fieldsTextOf(undefined, ['a'])).toThrow(/expected field=<JSON value>/);
  });
});

describe('singleOperationOf', () => {
  it('takes the id given apart over the one in the document', () => {
    const op = singleOperationOf('put', { id: 'id:a:b::given', text: '{"put":"id:a:b::inside","fields":{"x":1}}' });
    expect(op).toEqual({
      kind: 'put',
      id: 'id:a:b::given',
      fields: '{"x":1}',
      meta: { kind: 'put', id: 'id:a:b::inside' },
    });
  });

  it('takes the id from the document when none is given apart, if it names the same operation', () => {
    expect(
      singleOperationOf('update', { text: '{"update":"id:a:b::c","fields":{"x":{"assign":1}},"create":true}' }),
    ).toMatchObject({ id: 'id:a:b::c', meta: { create: true } });
    expect(singleOperationOf('remove', { text: '{"remove":"id:a:b::c","condition":"b.x==1"}' })).toEqual({
      kind: 'remove',
      id: 'id:a:b::c',
      meta: { kind: 'remove', id: 'id:a:b::c', condition: 'b.x==1' },
    });
    expect(() => singleOperationOf('put', { text: '{"remove":"id:a:b::c"}' })).toThrow(
      /the command is put, but the JSON given is a remove/,
    );
    expect(() => singleOperationOf('put', { text: '{"fields":{"x":1}}' })).toThrow(/no document id/);
  });

  it('refuses a malformed id as bad usage, a put without a document and an update without operations', () => {
    expect(() => singleOperationOf('remove', { id: 'id:nope' })).toThrow(expect.objectContaining({ code: 'VB_USAGE' }));
    expect(() => singleOperationOf('put', { id: 'id:a:b::c' })).toThrow(/put needs the document/);
    expect(() => singleOperationOf('update', { id: 'id:a:b::c', text: '{"fields":{}}' })).toThrow(
      /update needs operations/,
    );
    expect(singleOperationOf('update', { id: 'id:a:b::c', assign: ['x=1'] }).fields).toBe('{"x":{"assign":1}}');
  });
});

describe('conditionAndCreate', () => {
  it('lets a value given apart win over the document, each on its own', () => {
    expect(conditionAndCreate({ condition: 'a', create: true }, {})).toEqual({ condition: 'a', create: true });
    expect(conditionAndCreate({ condition: 'a', create: true }, { condition: 'b', create: false })).toEqual({
      condition: 'b',
      create: false,
    });
    expect(conditionAndCreate({ condition: 'a' }, { create: true })).toEqual({ condition: 'a', create: true });
    expect(conditionAndCreate({}, {})).toEqual({});
  });
});
