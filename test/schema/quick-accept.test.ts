import { describe, expect, it } from 'vitest';
import { parseOperation } from '../../src/document/operation.js';
import type { DocumentModel } from '../../src/schema/document-model.js';
import { judgeDocumentOperation } from '../../src/schema/judge.js';
import { isCertainlyAccepted } from '../../src/schema/quick-accept.js';
import { everyKindTypes } from './fixtures.js';

/**
 * The quick reader may only say "accepted" where the full path (parseOperation, then the judge) accepts: it
 * decides validate's verdicts for the common case, so any disagreement would change a verdict. Checked on
 * every field kind with many values, and on every one-byte corruption of valid operations.
 */
const strict: DocumentModel = { types: everyKindTypes, ignoreUndefinedFields: false, documentApi: true };
const lenient: DocumentModel = { types: everyKindTypes, ignoreUndefinedFields: true, documentApi: true };

/** The full path, as validate runs it when the quick reader is not certain. */
function fullPathAccepts(model: DocumentModel, line: string | Buffer): boolean {
  let op;
  try {
    op = parseOperation(Buffer.isBuffer(line) ? line : Buffer.from(line));
  } catch {
    return false;
  }
  if (op.kind === 'remove' || op.fields === undefined) return true;
  const c1 = op.id.indexOf(':', 3);
  const type = op.id.slice(c1 + 1, op.id.indexOf(':', c1 + 1));
  return judgeDocumentOperation(model, op.kind, op.id, type, `{"fields":${op.fields.toString('utf8')}}`).ok;
}

/** Checks the rule on each line; returns how many the quick reader accepted. */
function check(model: DocumentModel, lines: (string | Buffer)[]): number {
  let quick = 0;
  const wrong: (string | Buffer)[] = [];
  for (const line of lines) {
    if (!isCertainlyAccepted(model, Buffer.isBuffer(line) ? line : Buffer.from(line))) continue;
    quick++;
    if (!fullPathAccepts(model, line)) wrong.push(line);
  }
  expect(wrong).toEqual([]);
  return quick;
}

const values = [
  '0',
  '-0',
  '1',
  '-1',
  '127',
  '128',
  '-128',
  '-129',
  '255',
  '2147483647',
  '2147483648',
  '-2147483648',
  '-2147483649',
  '999999999',
  '1000000000',
  '-999999999',
  '9223372036854775807',
  '9223372036854775808',
  '123456789012345678',
  '1.5',
  '-1.5e3',
  '1E+2',
  '1e400',
  '01',
  '-',
  '1.',
  '.5',
  '"1"',
  '" 2 "',
  '"+3"',
  '"-4"',
  '"1.5"',
  '"abc"',
  '""',
  '"NaN"',
  '"Infinity"',
  '"0x1p3"',
  '"2001"',
  '"true"',
  '"caf\u00e9"',
  '"\\u00e9"',
  '"\\u0001"',
  '"\\n\\t"',
  '"\\ud800"',
  '"\\ud83d\\ude00"',
  '"\ud83d\ude00"',
  '"\\uFDD0"',
  '"\\uFFFE"',
  '"a\\"b"',
  '"\\x"',
  '"\u0001"',
  '"QUJD"',
  '"QUJDR"',
  '"http://a:8/"',
  '"http://a:b/"',
  '"http://a/#x\\ny"',
  '"id:ns:music::1"',
  '"id:ns:all::1"',
  '"id:x"',
  '"1;2"',
  '"N1;E2"',
  '"x"',
  'true',
  'false',
  'null',
  'tru',
  'nul',
  'True',
  '[]',
  '[1,2]',
  '[1,null]',
  '["a","b"]',
  '["a",1]',
  '[[1]]',
  '[["a"],["b"]]',
  '[{"sub":1}]',
  '[{"sub":"x"}]',
  '[1,]',
  '[,1]',
  '{}',
  '{"a":1}',
  '{"a":"1"}',
  '{"a":-5}',
  '{"a":1.5}',
  '{"a":null}',
  '{"a":[1]}',
  '{"1":"x"}',
  '{"x":"y"}',
  '{"a":1,}',
  '{"a" 1}',
  '{"sub":1}',
  '{"sub":"x"}',
  '{"sub":null}',
  '{"name":"n","deep":{"sub":2}}',
  '{"name":"n","deep":{"sub":"q"}}',
  '{"name":"n","nope":1}',
  '{"lat":1,"lng":2}',
  '{"key":"a","value":1}',
  '[{"key":"a","value":1}]',
  '{"cells":[]}',
  '{"values":[1,2,3]}',
  '"abcdef"',
  '{"a":1, "a":2}',
  '{"\\u0061":1}',
  '{"caf\u00e9":1}',
];
const fieldNames = [
  'i',
  'l',
  'b',
  'f',
  'd',
  'h',
  'flag',
  's',
  'r',
  'u',
  'p',
  'pos',
  'ref',
  'arr',
  'tags',
  'ws',
  'wsi',
  'm',
  'mi',
  'st',
  'sts',
  'nested',
  'dense',
  'sparse',
  'nope',
];
const updateOps = [
  'assign',
  'add',
  'remove',
  'increment',
  'decrement',
  'multiply',
  'divide',
  'match',
  'modify',
  'bogus',
];

describe('the quick reader', () => {
  it('accepts only what the full path accepts: every field kind with many values, in puts', () => {
    const lines = fieldNames.flatMap((f) => values.map((v) => `{"put":"id:ns:all::1","fields":{"${f}":${v}}}`));
    for (const model of [strict, lenient]) expect(check(model, lines)).toBeGreaterThan(300);
  });

  it('accepts only what the full path accepts: every field kind, update operation and value', () => {
    const lines = fieldNames.flatMap((f) =>
      updateOps.flatMap((op) => values.map((v) => `{"update":"id:ns:all::1","fields":{"${f}":{"${op}":${v}}}}`)),
    );
    lines.push(
      '{"update":"id:ns:all::1","fields":{"st.name":{"assign":"x"}}}',
      '{"update":"id:ns:all::1","fields":{"i":1}}',
      '{"update":"id:ns:all::1","fields":{"i":{}}}',
    );
    for (const model of [strict, lenient]) expect(check(model, lines)).toBeGreaterThan(300);
  });

  it('accepts only what the full path accepts: envelopes and ids', () => {
    const fields = '{"i":1}';
    const lines = [
      `{"put":"id:ns:all::1","fields":${fields}}`,
      `{"fields":${fields},"put":"id:ns:all::1"}`,
      `{"id":"id:ns:all::1","fields":${fields}}`,
      `{"put":"id:ns:all:n=5:1","fields":${fields}}`,
      `{"put":"id:ns:all:n=x:1","fields":${fields}}`,
      `{"put":"id:ns:all:n=99999999999999999999:1","fields":${fields}}`,
      `{"put":"id:ns:all:g=eu:1","fields":${fields}}`,
      `{"put":"id:ns:all:g=:1","fields":${fields}}`,
      `{"put":"id:ns:all:x=1:1","fields":${fields}}`,
      `{"put":"id:ns:all:::a:b","fields":${fields}}`,
      `{"put":"id:ns:all::","fields":${fields}}`,
      `{"put":"id::all::1","fields":${fields}}`,
      `{"put":"id:ns:::1","fields":${fields}}`,
      `{"put":"id:ns:nosuch::1","fields":${fields}}`,
      `{"put":"id:ns:all::caf\u00e9","fields":${fields}}`,
      `{"put":"id:ns:all::\\u00e9","fields":${fields}}`,
      `{"put":"ID:ns:all::1","fields":${fields}}`,
      `{"put":"id:ns:all::1"}`,
      `{"put":"id:ns:all::1","fields":${fields},"fields":${fields}}`,
      `{"put":"id:ns:all::1","put":"id:ns:all::2","fields":${fields}}`,
      `{"put":"id:ns:all::1","update":"id:ns:all::1","fields":${fields}}`,
      `{"put":"id:ns:all::1","fields":${fields},"condition":"all.i==1","create":true}`,
      `{"put":"id:ns:all::1","fields":${fields},"condition":null}`,
      `{"put":"id:ns:all::1","fields":${fields},"condition":"a\\"b"}`,
      `{"put":"id:ns:all::1","fields":${fields},"create":"true"}`,
      `{"put":"id:ns:all::1","fields":${fields},"create":1}`,
      `{"put":"id:ns:all::1","fields":${fields},"bogus":1}`,
      `{"put":"id:ns:all::1","fields":[]}`,
      `{"put":1,"fields":${fields}}`,
      `{"remove":"id:ns:all::1"}`,
      `{"remove":"id:ns:nosuch::1"}`,
      `{"remove":"id:ns:all::1","fields":${fields}}`,
      `{"remove":"id:ns:all::1","condition":"true"}`,
      `{"update":"id:ns:all::1","fields":{},"create":false}`,
      ` \t{ "put" : "id:ns:all::1" , "fields" : { "i" : 1 } } \r\n`,
      `{"put":"id:ns:all::1","fields":${fields}} x`,
      `{"put":"id:ns:all::1","fields":${fields}`,
      `{}`,
      `[]`,
      ``,
    ];
    const accepted = lines.filter((l) => isCertainlyAccepted(strict, Buffer.from(l)));
    check(strict, lines);
    // The plain forms are decided here, not left to the full path (which would be slow, not wrong).
    expect(accepted).toEqual(
      expect.arrayContaining([
        lines[0],
        lines[1],
        lines[2],
        lines[3],
        lines[6],
        lines[14],
        lines[21],
        lines[29],
        lines[33],
        lines[34],
      ]),
    );
  });

  it('accepts only what the full path accepts: every one-byte corruption of valid operations', () => {
    const valid = [
      '{"put":"id:ns:all::1","fields":{"i":12,"l":-3,"f":1.5e2,"s":"a b","flag":true,"tags":["x","y"],"ws":{"a":1},"m":{"k":2},"st":{"name":"n","deep":{"sub":1}},"u":null}}',
      '{"update":"id:ns:all::1","fields":{"i":{"increment":2},"tags":{"add":["z"]},"ws":{"remove":{"a":0}},"s":{"assign":"q"},"m":{"assign":{"k":1}}},"create":true}',
      '{"put":"id:ns:all:g=eu:1","condition":"all.i>0","fields":{"sts":[{"sub":1},{"sub":2}],"nested":[["a"],[]],"mi":{"1":"x"}}}',
    ];
    const replacements = [
      '"',
      '\\',
      '{',
      '}',
      '[',
      ']',
      ',',
      ':',
      ' ',
      '0',
      '9',
      '-',
      '.',
      'e',
      'x',
      'n',
      '\u00e9',
      '\u0001',
      '\u007f',
    ];
    for (const model of [strict, lenient]) {
      expect(check(model, valid)).toBe(valid.length);
      const lines: string[] = [];
      for (const line of valid) {
        for (let i = 0; i < line.length; i++) {
          lines.push(line.slice(0, i) + line.slice(i + 1));
          for (const r of replacements) lines.push(line.slice(0, i) + r + line.slice(i + 1));
          lines.push(line.slice(0, i) + ' ' + line.slice(i));
        }
      }
      expect(check(model, lines)).toBeGreaterThan(100);
    }
  });

  it('accepts only what the full path accepts: raw bytes that are not valid UTF-8 or not text characters', () => {
    const raw = [
      [0x80],
      [0xc3, 0x28],
      [0xc3],
      [0xed, 0xa0, 0x80],
      [0xef, 0xb7, 0x90],
      [0xef, 0xbf, 0xbe],
      [0xf0, 0x9f, 0xbf, 0xbe],
      [0xf0, 0x9f, 0x98, 0x80],
      [0xc3, 0xa9],
    ];
    const lines = raw.flatMap((bytes) => {
      const b = Buffer.from(bytes);
      const line = (head: string, tail: string): Buffer => Buffer.concat([Buffer.from(head), b, Buffer.from(tail)]);
      return [
        line('{"put":"id:ns:all::1","fields":{"s":"a', 'b"}}'),
        line('{"put":"id:ns:all::1","fields":{"u":"', '"}}'),
        line('{"put":"id:ns:all::1","fields":{"m":{"k', '":1}}}'),
        line('{"put":"id:ns:all::1","fields":{"s', '":"x"}}'),
        line('{"put":"id:ns:all::', '","fields":{"s":"x"}}'),
        line('{"put":"id:ns:all::1","fields":{"i":1', '}}'),
      ];
    });
    for (const model of [strict, lenient]) expect(check(model, lines)).toBeGreaterThan(10);
  });
});
