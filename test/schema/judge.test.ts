import { describe, expect, it } from 'vitest';
import type { DocumentModel } from '../../src/schema/document-model.js';
import { judgeDocumentOperation, type Verdict } from '../../src/schema/judge.js';
import { parseJsonTree } from '../../src/schema/json-tree.js';
import { everyKindTypes } from './fixtures.js';

const model: DocumentModel = { types: everyKindTypes, ignoreUndefinedFields: false, documentApi: true };
const id = 'id:ns:all::1';

function put(fields: string, m = model): Verdict {
  return judgeDocumentOperation(m, 'put', id, 'all', `{"fields":${fields}}`);
}
function update(fields: string): Verdict {
  return judgeDocumentOperation(model, 'update', id, 'all', `{"fields":${fields}}`);
}
function message(v: Verdict): string {
  if (v.ok) throw new Error('accepted');
  return `${v.status} ${v.message}`;
}
const prefix = (field: string, type: string): string =>
  `400 In document '${id}': Could not parse field '${field}' of type ${type}: `;

describe('json tree', () => {
  it('keeps number text exactly and knows integer from float', () => {
    const node = parseJsonTree('{"a": 12345678901234567890, "b": 1.50}');
    expect(node).toMatchObject({
      kind: 'object',
      entries: [
        ['a', { kind: 'number', text: '12345678901234567890', integer: true }],
        ['b', { kind: 'number', text: '1.50', integer: false }],
      ],
    });
  });
  it('refuses raw control characters in strings as Jackson does', () => {
    expect(() => parseJsonTree('{"a":"x\u0001"}')).toThrow('Illegal unquoted character ((CTRL-CHAR, code 1))');
  });
});

describe('put: body', () => {
  it('answers the parser messages for the body', () => {
    expect(message(judgeDocumentOperation(model, 'put', id, 'all', ''))).toBe(
      '400 expected start of root object, got null',
    );
    expect(message(judgeDocumentOperation(model, 'put', id, 'all', '[]'))).toBe(
      '400 expected start of root object, got START_ARRAY',
    );
    expect(message(judgeDocumentOperation(model, 'put', id, 'all', '{}'))).toBe(
      '400 document is missing the required "fields" field',
    );
    expect(message(judgeDocumentOperation(model, 'put', id, 'all', '{"fields":null}'))).toBe(
      '400 expected start of JSON object, but got VALUE_NULL',
    );
    expect(message(judgeDocumentOperation(model, 'put', id, 'all', '{"condition":1,"fields":{}}'))).toBe(
      '400 expected string value for condition, got VALUE_NUMBER_INT',
    );
    expect(message(judgeDocumentOperation(model, 'put', 'id:ns:house::1', 'house', '{"fields":{}}'))).toBe(
      '400 Document type house does not exist',
    );
    expect(message(judgeDocumentOperation(model, 'put', id, 'all', '{"fields":{"i":1}} x'))).toMatch(
      /^400 failed parsing document: Unrecognized token 'x'/,
    );
  });
  it('skips unknown top-level keys and accepts empty fields', () => {
    const v = judgeDocumentOperation(
      model,
      'put',
      id,
      'all',
      '{"put":"id:x:y::z","feilds":{},"fields":{},"create":true,"condition":"all.i==1"}',
    );
    expect(v).toMatchObject({ ok: true, ignoredFields: false, body: { create: true, condition: 'all.i==1' } });
  });
});

describe('put: fields per type', () => {
  const accepted: [string, string][] = [
    ['i', '2001'],
    ['i', '"2001"'],
    ['i', '"+5"'],
    ['i', 'null'],
    ['l', '9007199254740993'],
    ['l', '"-9223372036854775808"'],
    ['b', '127'],
    ['f', '2001.5'],
    ['f', '1e3'],
    ['f', '"NaN"'],
    ['d', '"Infinity"'],
    ['h', '"2001"'],
    ['flag', 'true'],
    ['flag', '"yes"'],
    ['flag', '1'],
    ['s', '"text"'],
    ['s', '1.50'],
    ['s', 'true'],
    ['s', '"tab\\tnewline\\n"'],
    ['r', '"aGVsbG8="'],
    ['u', '"http://example.com/a?b=c"'],
    ['p', '"gender in [Female]"'],
    ['pos', '"N37.4;W122.0"'],
    ['pos', '"1;2"'],
    ['pos', '{"lat":37.4,"lng":-122.0}'],
    ['pos', '{"x":1,"y":2}'],
    ['ref', '"id:any:music::a"'],
    ['ref', '""'],
    ['arr', '[1,"2"]'],
    ['tags', '["a",1]'],
    ['ws', '{"a":1,"b":"2"}'],
    ['m', '{"a":1}'],
    ['m', '[{"key":"a","value":1}]'],
    ['st', '{"name":"x","deep":{"sub":1}}'],
    ['sts', '[{"sub":1}]'],
    ['dense', '[1,2,3]'],
    ['dense', '{"values":[1,2,3]}'],
    ['dense', '{"cells":[{"address":{"x":"0"},"value":1}]}'],
    ['dense', '"3f8000003f8000003f800000"'],
    ['sparse', '{"cells":[{"address":{"key":"a"},"value":1}]}'],
    ['sparse', '{"a":1,"b":"nan"}'],
    ['sparse', '{"cells":{"a":1}}'],
    ['mixed', '{"blocks":{"a":[1,2]}}'],
    ['mixed', '{"blocks":[{"address":{"key":"a"},"values":[1,2]}]}'],
  ];
  it.each(accepted)('accepts %s = %s', (field, value) => {
    expect(put(`{"${field}":${value}}`)).toMatchObject({ ok: true });
  });

  const refused: [string, string, string][] = [
    ['i', '"notanumber"', `${prefix('i', 'int')}For input string: "notanumber"`],
    ['i', '2001.5', `${prefix('i', 'int')}For input string: "2001.5"`],
    ['i', '1e3', `${prefix('i', 'int')}For input string: "1e3"`],
    ['i', 'true', `${prefix('i', 'int')}For input string: "true"`],
    ['i', '" 1"', `${prefix('i', 'int')}For input string: " 1"`],
    ['i', '281474976710656', `${prefix('i', 'int')}For input string: "281474976710656"`],
    ['i', '{}', `${prefix('i', 'int')}Expected a com.yahoo.document.datatypes.IntegerFieldValue but got an object`],
    ['l', '9223372036854775808', `${prefix('l', 'long')}For input string: "9223372036854775808"`],
    ['b', '300', `${prefix('b', 'byte')}Value out of range. Value:"300" Radix:10`],
    ['f', 'true', `${prefix('f', 'float')}For input string: "true"`],
    ['d', '""', `${prefix('d', 'double')}empty String`],
    ['s', '"a\\u0001"', `${prefix('s', 'string')}The string field value contains illegal code point 0x1`],
    ['s', '"\\uD800"', `${prefix('s', 'string')}The string field value contains illegal code point 0xD800`],
    ['s', '[]', `${prefix('s', 'string')}Expected a com.yahoo.document.datatypes.StringFieldValue but got an array`],
    ['pos', '{"lat":1,"foo":2}', `${prefix('pos', 'position')}Unexpected attribute foo in geo position field`],
    ['pos', '{"lat":1}', `${prefix('pos', 'position')}Missing 'lng' attribute in geo position field`],
    ['pos', '[1,2]', `${prefix('pos', 'position')}Expected start of JSON object, got START_ARRAY`],
    ['ref', '"nonsense"', `${prefix('ref', 'Reference<music>')}Unparseable id 'nonsense': Scheme missing`],
    [
      'ref',
      '"id:ns:user::1"',
      `${prefix('ref', 'Reference<music>')}Can't assign document ID 'id:ns:user::1' (of type 'user') to reference of document type 'music'`,
    ],
    [
      'arr',
      '"x"',
      `${prefix('arr', 'Array<int>')}Class class java.lang.String not applicable to an class com.yahoo.document.datatypes.Array instance.`,
    ],
    ['arr', '{}', `${prefix('arr', 'Array<int>')}Expected start of array, got START_OBJECT`],
    ['arr', '[1,null]', `${prefix('arr', 'Array<int>')}Illegal null value for array entry`],
    ['arr', '[1,"x"]', `${prefix('arr', 'Array<int>')}For input string: "x"`],
    ['ws', '[]', `${prefix('ws', 'WeightedSet<string>')}Expected start of JSON object, got START_ARRAY`],
    ['ws', '{"a":1.5}', `${prefix('ws', 'WeightedSet<string>')}For input string: "1.5"`],
    [
      'ws',
      '1',
      `${prefix('ws', 'WeightedSet<string>')}Class class java.lang.String not applicable to an class com.yahoo.document.datatypes.WeightedSet instance.`,
    ],
    ['m', '{"a":"x"}', `${prefix('m', 'Map<string,int>')}For input string: "x"`],
    ['m', '{"a":null}', `${prefix('m', 'Map<string,int>')}For input string: "null"`],
    [
      'm',
      '"x"',
      `${prefix('m', 'Map<string,int>')}Class class java.lang.String not applicable to an class com.yahoo.document.datatypes.MapFieldValue instance.`,
    ],
    ['st', '{"nope":1}', `${prefix('st', 'outer')}Field 'nope' is not defined in struct type 'outer'`],
    [
      'st',
      '{"deep":{"sub":"x"}}',
      `${prefix('st', 'outer')}In document 'null': Could not parse field 'deep' of type inner: In document 'null': Could not parse field 'sub' of type int: For input string: "x"`,
    ],
    [
      'st',
      '"x"',
      `${prefix('st', 'outer')}Type class java.lang.String cannot specify a class com.yahoo.document.datatypes.Struct instance`,
    ],
    ['dense', '[1,2]', `${prefix('dense', 'tensor<float>(x[3])')}Expected 3 values, but got 2`],
    ['dense', '[1,2,"x"]', `${prefix('dense', 'tensor<float>(x[3])')}Expected a number but got 'x'`],
    [
      'dense',
      '""',
      `${prefix('dense', 'tensor<float>(x[3])')}Bad string input for tensor with type tensor<float>(x[3])`,
    ],
    [
      'sparse',
      '{"values":[1]}',
      `${prefix('sparse', 'tensor(key{})')}The 'values' field can only be used with dense tensors. Use 'cells' or 'blocks' instead`,
    ],
    [
      'sparse',
      '{"blocks":[]}',
      `${prefix('sparse', 'tensor(key{})')}The 'blocks' field can only be used with mixed tensors with bound dimensions. Use 'cells' or 'values' instead`,
    ],
    [
      'mixed',
      '{"blocks":{"a":[1]}}',
      `${prefix('mixed', 'tensor(key{},x[2])')}At {key:a}: Expected 2 values, but got 1`,
    ],
  ];
  it.each(refused)('refuses %s = %s', (field, value, expected) => {
    expect(message(put(`{"${field}":${value}}`))).toBe(expected);
  });

  it('refuses a map entry without key or value with 500', () => {
    expect(message(put('{"m":[{"key":"a"}]}'))).toBe('500 Missing key or value for map entry.');
  });

  it('refuses undefined fields, or skips them with ignore-undefined-fields', () => {
    expect(message(put('{"nosuchfield":1}'))).toBe("400 Field 'nosuchfield' is not defined in document type 'all'");
    const lenient = { ...model, ignoreUndefinedFields: true };
    expect(put('{"nosuchfield":1,"i":1}', lenient)).toMatchObject({ ok: true, ignoredFields: true });
    // Inside a struct the field is skipped too, but the flag is not raised (the service drops it there).
    expect(put('{"st":{"nope":1}}', lenient)).toMatchObject({ ok: true, ignoredFields: false });
  });
});

describe('update: operations per type', () => {
  const accepted: [string, string][] = [
    ['i', '{"assign":"2001"}'],
    ['i', '{"increment":1}'],
    ['f', '{"multiply":"2.5"}'],
    ['i', '{"assign":null}'],
    ['arr', '{"add":[1,2]}'],
    ['arr', '{"remove":[1]}'],
    ['ws', '{"add":{"a":1}}'],
    ['arr', '{"match":{"element":0,"assign":5}}'],
    ['ws', '{"match":{"element":"a","increment":1}}'],
    ['sparse', '{"add":{"cells":[{"address":{"key":"a"},"value":1}]}}'],
    ['sparse', '{"remove":{"addresses":[{"key":"a"}]}}'],
    ['dense', '{"modify":{"operation":"add","cells":[{"address":{"x":"0"},"value":1}]}}'],
    ['m{a}', '{"assign":1}'],
    ['st.name', '{"ASSIGN":"x"}'],
  ];
  it.each(accepted)('accepts %s: %s', (field, ops) => {
    expect(update(`{"${field}":${ops}}`)).toMatchObject({ ok: true });
  });

  const refused: [string, string, string][] = [
    ['nosuchfield', '{"assign":1}', "400 Error in 'nosuchfield': No field named 'nosuchfield' in document type 'all'"],
    ['i', '{"assign":"notanumber"}', `400 Error in 'i': For input string: "notanumber"`],
    ['i', '{"foo":1}', "400 Error in 'i': Operation 'foo' not implemented."],
    ['i', '{"Assign":1}', "400 Error in 'i': Operation 'Assign' not implemented."],
    ['i', '{"increment":"x"}', `400 Error in 'i': For input string: "x"`],
    ['s', '{"increment":1}', '500 Expected numeric type, got string.'],
    ['s', '{"add":"x"}', '500 Expected start of composite, got VALUE_STRING'],
    [
      's',
      '{"add":["x"]}',
      '500 Trying to add or remove from a field of a type the reader does not know how to handle: class com.yahoo.document.datatypes.StringFieldValue',
    ],
    ['arr', '{"add":[null]}', "400 Error in 'arr': Illegal null value for array entry"],
    ['m', '{"match":{"element":"a","assign":1}}', '500 Field type Map<string,int> not supported.'],
    ['i', '{"match":{"element":0,"assign":1}}', "400 Error in 'i': Container type int not supported for match update."],
    [
      's',
      '{"modify":{"operation":"add","cells":[]}}',
      "400 Error in 's': A modify update can only be applied to tensor fields. Field 's' is of type 'string'",
    ],
    [
      'dense',
      '{"modify":{"operation":"divide","cells":[]}}',
      "400 Error in 'dense': Unknown operation 'divide' in modify update for field 'dense'",
    ],
    [
      'dense',
      '{"add":{"cells":[]}}',
      "400 Error in 'dense': An add update can only be applied to tensors with at least one sparse dimension. Field 'dense' has unsupported tensor type 'tensor<float>(x[3])'",
    ],
    ['nosuch.sub', '{"assign":1}', "400 Error in 'nosuch.sub': Field 'nosuch' not found in document type 'all'"],
    ['st.name', '{"frob":1}', "400 Error in 'st.name': Field path update type 'frob' not supported."],
  ];
  it.each(refused)('refuses %s: %s', (field, ops, expected) => {
    expect(message(update(`{"${field}":${ops}}`))).toBe(expected);
  });

  it('refuses a field update that is not an object, without the field prefix', () => {
    expect(message(update('{"i":1}'))).toBe('400 Expected start of JSON object, got VALUE_NUMBER_INT');
  });
});
