import { describe, expect, it } from 'vitest';
import { isSafeToRepeat, operationFromObject, parseOperation } from '../../src/document/operation.js';

const parse = (text: string) => parseOperation(Buffer.from(text));

describe('parseOperation', () => {
  it('reads put, the id alias, update with create and remove with condition, keeping fields raw', () => {
    const put = parse('{"put":"id:ns:music::a/b","fields":{ "title" : "x\\"y",  "n":[1,2] }}');
    expect(put).toMatchObject({ kind: 'put', id: 'id:ns:music::a/b', path: '/document/v1/ns/music/docid/a%2Fb' });
    expect(put.fields!.toString()).toBe('{ "title" : "x\\"y",  "n":[1,2] }');
    expect(parse('{"id":"id:ns:music:n=5:k","fields":{}}')).toMatchObject({
      kind: 'put',
      path: '/document/v1/ns/music/number/5/k',
    });
    const up = parse('{"update":"id:ns:music:g=x y:k","create":true,"fields":{"a":{"increment":1}}}');
    expect(up).toMatchObject({ kind: 'update', create: true, path: '/document/v1/ns/music/group/x%20y/k' });
    const rm = parse('{ "condition": "music.year > 2000", "remove": "id:ns:music::r" }');
    expect(rm).toMatchObject({ kind: 'remove', condition: 'music.year > 2000' });
    expect(rm.fields).toBeUndefined();
  });

  it('decodes escaped ids', () => {
    expect(parse('{"remove":"id:ns:music::\\u00e9\\/x"}').id).toBe('id:ns:music::é/x');
  });

  it('reads escaped keys as their text, and a backslash in the document after an id does not make the id escaped', () => {
    const op = parse('{"p\\u0075t":"id:ns:music::a","f\\u0069elds":{"t":"a\\\\b"}}');
    expect(op).toMatchObject({ kind: 'put', id: 'id:ns:music::a' });
    expect(op.fields!.toString()).toBe('{"t":"a\\\\b"}');
    expect(() => parse('{"putt":"id:ns:music::a","fields":{}}')).toThrow(/unknown key 'putt'/);
  });

  it.each([
    ['{"put":"id:a:b::1","fields":{},"extra":1}', 'VB_BAD_OPERATION', /unknown key 'extra'/],
    ['{"remove":"id:a:b::1","fields":{}}', 'VB_BAD_OPERATION', /must not have 'fields'/],
    ['{"put":"id:a:b::1"}', 'VB_BAD_OPERATION', /needs 'fields'/],
    ['{"update":"id:a:b::1"}', 'VB_BAD_OPERATION', /needs 'fields'/],
    ['{"put":"id:a:b::1","update":"id:a:b::1","fields":{}}', 'VB_BAD_OPERATION', /both/],
    ['{"fields":{}}', 'VB_BAD_OPERATION', /no operation key/],
    ['{"put":"nope","fields":{}}', 'VB_BAD_DOCUMENT_ID', /must start with 'id:'/],
    ['{"put":"id:a:b:n=x:1","fields":{}}', 'VB_BAD_DOCUMENT_ID', /64-bit/],
    ['{"put":7,"fields":{}}', 'VB_BAD_OPERATION', /id string/],
    ['{"put":"id:a:b::1","fields":[]}', 'VB_BAD_OPERATION', /must be an object/],
    ['{"put":"id:a:b::1","fields":{},"create":"yes"}', 'VB_BAD_OPERATION', /true or false/],
    ['{"put":"id:a:b::1","fields":{"a":1}', 'VB_BAD_JSON', /expected|unterminated/],
    ['{"put":"id:a:b::1","fields":{"a":[1}}', 'VB_BAD_JSON', /unexpected/],
    ['{"put":"id:a:b::1","fields":{}} x', 'VB_BAD_JSON', /trailing/],
    ['{"put":"id:a:b::1" "fields":{}}', 'VB_BAD_JSON', /expected ','/],
    ['{"put":"id:a:b::1","fields":{},"create":tru}', 'VB_BAD_JSON', /bad value/],
    ['{}', 'VB_BAD_OPERATION', /empty/],
  ])('rejects %s', (text, code, message) => {
    let err: any;
    try {
      parse(text);
    } catch (e) {
      err = e;
    }
    expect(err?.code).toBe(code);
    expect(err?.message).toMatch(message);
  });

  it('takes operation objects from library callers', () => {
    const op = operationFromObject({ update: 'id:a:b::1', fields: { f: { assign: 1 } }, condition: 'b.f==0' });
    expect(op.fields!.toString()).toBe('{"f":{"assign":1}}');
    expect(() => operationFromObject(['x'])).toThrow(/must be an object/);
  });

  it('treats put, remove and assign-only updates as safe to repeat, unless they have a condition', () => {
    expect(isSafeToRepeat(parse('{"put":"id:a:b::1","fields":{"x":1}}'))).toBe(true);
    expect(isSafeToRepeat(parse('{"remove":"id:a:b::1"}'))).toBe(true);
    expect(isSafeToRepeat(parse('{"update":"id:a:b::1","fields":{"x":{"assign":1},"y":{"assign":null}}}'))).toBe(true);
    expect(isSafeToRepeat(parse('{"update":"id:a:b::1","fields":{"x":{"assign":1},"y":{"increment":1}}}'))).toBe(false);
    expect(isSafeToRepeat(parse('{"update":"id:a:b::1","fields":{"x":{"add":[1]}}}'))).toBe(false);
    // A test-and-set that applied would fail its own condition when sent again.
    expect(isSafeToRepeat(parse('{"put":"id:a:b::1","condition":"b.v == 1","fields":{"v":2}}'))).toBe(false);
    expect(isSafeToRepeat(parse('{"update":"id:a:b::1","condition":"b.v == 1","fields":{"v":{"assign":2}}}'))).toBe(
      false,
    );
    expect(isSafeToRepeat(parse('{"remove":"id:a:b::1","condition":"b.v == 1"}'))).toBe(false);
  });
});
