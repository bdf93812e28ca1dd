import { describe, expect, it } from 'vitest';
import { OperationSplitter, type RawItem } from '../../src/core/operation-splitter.js';
import { resyncPoint } from '../../src/core/array-resync.js';

function split(text: string, chunkSize: number): RawItem[] {
  const s = new OperationSplitter();
  const out: RawItem[] = [];
  const buf = Buffer.from(text);
  for (let i = 0; i < buf.length; i += chunkSize) s.push(buf.subarray(i, i + chunkSize), out);
  s.end(out);
  return out;
}

const op = (n: number, fields = `{"a":${n}}`): string => `{"put":"id:n:t::${n}","fields":${fields}}`;
const view = (items: RawItem[]) =>
  items.map((it) => ({ text: it.bytes.toString(), line: it.line, offset: it.offset, bad: it.error !== undefined }));
const good = (text: string, n: number, line: number) => ({
  text: op(n),
  line,
  offset: text.indexOf(op(n)),
  bad: false,
});

describe('a broken element in a JSON array', () => {
  const cases: Array<[string, string, string]> = [
    [
      'an element without its closing braces',
      `{"put":"id:n:t::2","fields":{"a":"x"`,
      `{"put":"id:n:t::2","fields":{"a":"x"`,
    ],
    [
      'an element with a string not closed',
      `{"put":"id:n:t::2","fields":{"a":"x}},`,
      `{"put":"id:n:t::2","fields":{"a":"x}}`,
    ],
    ['an element with a brace too many', `{"put":"id:n:t::2","fields":{"a":2}}}},`, '}}'],
    [
      'an element with a bracket where a brace closes',
      `{"put":"id:n:t::2","fields":{"a":[1}},`,
      `{"put":"id:n:t::2","fields":{"a":[1}}`,
    ],
    ['garbage for an element', `xx {"a": "}, {"},`, `xx {"a": "}, {"}`],
    [
      'an element with braces inside strings of the broken part',
      `{"put":"id:n:t::2","fields":{"a":"},{\\"put\\":1}, {"`,
      `{"put":"id:n:t::2","fields":{"a":"},{\\"put\\":1}, {"`,
    ],
  ];
  for (const [name, broken, failed] of cases) {
    it(`${name} is one failure with its lines, and every operation after it is read, in any chunking`, () => {
      const text = `[\n${op(1)},\n${broken}\n${op(3)},\n${op(4)}\n]\n`;
      for (const chunk of [1, 2, 7, 64, 1 << 20]) {
        const items = split(text, chunk);
        const v = view(items);
        const at = v.findIndex((i) => i.bad);
        // Before the failure: operation 1 (or it and a well-formed operation 2 with a brace too many after it).
        expect(v.slice(0, at).map((i) => i.text)).toEqual(
          name.includes('too many') ? [op(1), op(2, '{"a":2}')] : [op(1)],
        );
        expect(v.filter((i) => i.bad)).toHaveLength(1);
        expect(v[at].text).toBe(failed);
        expect(v[at].line).toBe(name.includes('too many') ? 3 : 3);
        expect(items[at].error?.code).toMatch(/^VB_BAD_/);
        expect(v.slice(at + 1)).toEqual([good(text, 3, 4), good(text, 4, 5)]);
      }
    });
  }

  it('reads an operation after a missing comma, and fails that one for it', () => {
    const text = `[\n${op(1)}\n${op(2)},\n${op(3)}\n]`;
    for (const chunk of [1, 5, 1 << 20]) {
      const items = split(text, chunk);
      expect(items.map((i) => [i.line, i.error?.message])).toEqual([
        [2, undefined],
        [3, "invalid JSON: no ',' between this operation and the one before"],
        [4, undefined],
      ]);
    }
  });

  it('with no operation after it, is one failure naming the lines it holds, and nothing else is said', () => {
    const text = `[\n${op(1)},\n{"put":"id:n:t::2","fields":{"a":"x\n"b": 1,\n"c": 2}}\n]\n`;
    for (const chunk of [1, 3, 1 << 20]) {
      const items = split(text, chunk);
      expect(items).toHaveLength(2);
      expect(items[1].line).toBe(3);
      expect(items[1].error?.message).toMatch(/lines 3-\d+ could not be read as operations$/);
    }
  });

  it('reads on in a large array whatever the chunking, the broken element one failure', () => {
    const rows = Array.from({ length: 20_000 }, (_, i) => (i === 5 ? op(i).slice(0, -2) : op(i)));
    const text = `[\n${rows.join(',\n')}\n]\n`;
    for (const chunk of [4096, 65536]) {
      const items = split(text, chunk);
      expect(items).toHaveLength(20_000);
      expect(items.filter((i) => i.error !== undefined).map((i) => i.line)).toEqual([7]);
      expect(items[6].bytes.toString()).toBe(op(6));
    }
  });

  it('sees an element cut short at the next one, not at the end of the array, so it holds nothing more', () => {
    const s = new OperationSplitter();
    const out: RawItem[] = [];
    s.push(Buffer.from(`[\n${op(1)},\n{"put":"id:n:t::2","fields":{"a":1,\n${op(3)},\n${op(4)},\n`), out);
    // Before the input's end: operation 3 is out, so the broken one was cut off at its '{'.
    expect(view(out).map((i) => [i.line, i.bad])).toEqual([
      [2, false],
      [3, true],
      [4, false],
      [5, false],
    ]);
    expect(out[1].bytes.toString()).toBe('{"put":"id:n:t::2","fields":{"a":1');
  });

  it('keeps a well-formed array as it was', () => {
    const text = `[\n${op(1)},\n  ${op(2, '{"s":"},{\\"put\\":\\"x\\"}, {"}')} ,\n${op(3)}]`;
    expect(split(text, 3).map((i) => i.error)).toEqual([undefined, undefined, undefined]);
  });
});

describe('resyncPoint', () => {
  it('finds the first object that is an operation followed by , or ]', () => {
    const buf = Buffer.from(`{"a":{"b":1},"c":{"put":"x"} {"put":"id:a:b::1"} ,{"remove":"id:a:b::2"}]`);
    expect(resyncPoint(buf, 1, false).at).toBe(buf.indexOf('{"put":"id'));
  });

  it('waits for more bytes while a candidate goes on past them, and gives up on it at the end', () => {
    const buf = Buffer.from(`xx {"put":"id:a:b::1","fields":{"t":"abc`);
    expect(resyncPoint(buf, 1, false)).toEqual({ resumeFrom: 3 });
    expect(resyncPoint(buf, 1, true).at).toBeUndefined();
  });

  it('takes no object that is not an operation, or not JSON', () => {
    expect(resyncPoint(Buffer.from(`x {"a":1}, {"put":1 2}, {'put':1}]`), 1, true).at).toBeUndefined();
  });
});
