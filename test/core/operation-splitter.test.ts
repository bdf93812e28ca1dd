import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { OperationSplitter, type RawItem } from '../../src/core/operation-splitter.js';
import { VespaBulkError } from '../../src/core/errors.js';

function split(text: string, chunkSize = 1 << 20): RawItem[] {
  const s = new OperationSplitter();
  const out: RawItem[] = [];
  const buf = Buffer.from(text);
  for (let i = 0; i < buf.length; i += chunkSize) s.push(buf.subarray(i, i + chunkSize), out);
  s.end(out);
  return out;
}

const view = (items: RawItem[]) =>
  items.map((it) => ({ text: it.bytes.toString(), line: it.line, error: it.error?.message }));

describe('OperationSplitter', () => {
  it('reads JSONL line by line, skipping blank lines, keeping line numbers and offsets', () => {
    const text =
      '{"put":"id:a:b::1","fields":{}}\n\n  {"remove":"id:a:b::2"}\r\n{"put":"id:a:b::3","fields":{"s":"}{"}}';
    const items = split(text);
    expect(view(items)).toEqual([
      { text: '{"put":"id:a:b::1","fields":{}}', line: 1, error: undefined },
      { text: '  {"remove":"id:a:b::2"}', line: 3, error: undefined },
      { text: '{"put":"id:a:b::3","fields":{"s":"}{"}}', line: 4, error: undefined },
    ]);
    expect(items[1].offset).toBe(text.indexOf('  {"remove"'));
  });

  it('keeps a broken JSONL line to itself and reads on', () => {
    const items = split(
      '{"put":"id:a:b::1","fields":{}}\n{"put":"id:a:b::2","fields":{\nnot json\n{"remove":"id:a:b::4"}\n',
    );
    expect(view(items).map((i) => [i.line, i.error !== undefined])).toEqual([
      [1, false],
      [2, false], // cut by line; parseOperation finds it unterminated
      [3, true],
      [4, false],
    ]);
    expect(items[2].bytes.toString()).toBe('not json');
  });

  it('reads a JSON array, pretty-printed, with strings holding brackets and escaped quotes', () => {
    const text =
      '[\n  {\n    "put": "id:a:b::1",\n    "fields": {"t": "a \\"}] b\\\\"}\n  },\n  {"remove": "id:a:b::2"}\n]\n';
    expect(view(split(text))).toEqual([
      { text: '{\n    "put": "id:a:b::1",\n    "fields": {"t": "a \\"}] b\\\\"}\n  }', line: 2, error: undefined },
      { text: '{"remove": "id:a:b::2"}', line: 6, error: undefined },
    ]);
  });

  it('reads whitespace-separated multi-line objects', () => {
    const text = '{\n"put":"id:a:b::1",\n"fields":{}\n}\n{"remove":"id:a:b::2"} {"remove":"id:a:b::3"}\n';
    expect(view(split(text)).map((i) => [i.text, i.line])).toEqual([
      ['{\n"put":"id:a:b::1",\n"fields":{}\n}', 1],
      ['{"remove":"id:a:b::2"}', 5],
      ['{"remove":"id:a:b::3"}', 5],
    ]);
  });

  it('reports garbage between array elements with its line and goes on', () => {
    const items = split('[{"remove":"id:a:b::1"},\nxx yy\n{"remove":"id:a:b::2"}]');
    expect(view(items)).toEqual([
      { text: '{"remove":"id:a:b::1"}', line: 1, error: undefined },
      { text: 'xx yy', line: 2, error: 'expected an operation object' },
      { text: '{"remove":"id:a:b::2"}', line: 3, error: undefined },
    ]);
  });

  // The Go client's decoder reads ']' only where an operation may end (client/go/internal/vespa/document/document.go:324-330):
  // after a ',' it fails, having fed what came before.
  it("reports a trailing comma in an array at the comma's line, after the operations before it, in any chunking", () => {
    const text = '[\n{"remove":"id:a:b::1"},\n{"remove":"id:a:b::2"},\n]\n';
    for (const chunk of [1, 2, 5, 1 << 20]) {
      const items = split(text, chunk);
      expect(view(items)).toEqual([
        { text: '{"remove":"id:a:b::1"}', line: 2, error: undefined },
        { text: '{"remove":"id:a:b::2"}', line: 3, error: undefined },
        { text: ',', line: 3, error: "invalid JSON: trailing comma before the array's closing ']'" },
      ]);
      expect(items[2].error?.code).toBe('VB_BAD_JSON');
      expect(items[2].offset).toBe(text.lastIndexOf(','));
    }
  });

  it('reads an empty array and an array without a trailing comma as before', () => {
    expect(split('[]')).toEqual([]);
    expect(split(' [ \n ] ')).toEqual([]);
    expect(view(split('[{"remove":"id:a:b::1"} ,{"remove":"id:a:b::2"} ]')).map((i) => i.error)).toEqual([
      undefined,
      undefined,
    ]);
  });

  it('reports an unterminated last object', () => {
    const items = split('[{"remove":"id:a:b::1"},\n{"put":"id:a:b::2","fields":{');
    expect(items).toHaveLength(2);
    expect(items[1].error?.code).toBe('VB_BAD_JSON');
    expect(items[1].line).toBe(2);
  });

  it("reports an array cut between operations (no closing ']') at its end, after the operations before it", () => {
    for (const text of [
      '[{"remove":"id:a:b::1"},\n{"remove":"id:a:b::2"}\n',
      '[{"remove":"id:a:b::1"},\n{"remove":"id:a:b::2"},\n',
    ]) {
      expect(view(split(text))).toEqual([
        { text: '{"remove":"id:a:b::1"}', line: 1, error: undefined },
        { text: '{"remove":"id:a:b::2"}', line: 2, error: undefined },
        { text: '', line: 3, error: "unterminated JSON array: the input ends before its closing ']'" },
      ]);
    }
  });

  it('breaks off where the input broke: the operation in progress, or nothing between operations, becomes one failed item', () => {
    const error = new VespaBulkError('VB_BROKEN_INPUT', 'unexpected end of gzip data');
    const broken = (text: string): RawItem[] => {
      const s = new OperationSplitter();
      const out: RawItem[] = [];
      s.push(Buffer.from(text), out);
      s.breakOff(error, out);
      return out;
    };
    const jsonl = '{"remove":"id:a:b::1"}\n{"remove":"id:a:b::2"}\n{"remove":"id:a';
    expect(view(broken(jsonl))).toEqual([
      { text: '{"remove":"id:a:b::1"}', line: 1, error: undefined },
      { text: '{"remove":"id:a:b::2"}', line: 2, error: undefined },
      { text: '{"remove":"id:a', line: 3, error: 'unexpected end of gzip data' },
    ]);
    // A JSONL line whose newline did not come is cut too: it may go on after the break.
    expect(view(broken('{"remove":"id:a:b::1"}\n{"remove":"id:a:b::2"}')).map((i) => [i.text, i.error])).toEqual([
      ['{"remove":"id:a:b::1"}', undefined],
      ['{"remove":"id:a:b::2"}', 'unexpected end of gzip data'],
    ]);
    const between = broken('{"remove":"id:a:b::1"}\n\n');
    expect(between.map((i) => [i.line, i.offset, i.bytes.length, i.error?.code])).toEqual([
      [1, 0, 22, undefined],
      [3, 24, 0, 'VB_BROKEN_INPUT'],
    ]);
    const pretty = broken('[\n{"remove":"id:a:b::1"},\n{\n "remove": "id:a:b::2"\n');
    expect(pretty.map((i) => [i.line, i.bytes.toString(), i.error?.code])).toEqual([
      [2, '{"remove":"id:a:b::1"}', undefined],
      [3, '{\n "remove": "id:a:b::2"', 'VB_BROKEN_INPUT'],
    ]);
  });

  it('gives the same items whatever the chunk size (property)', () => {
    const docs = fc.array(
      fc.record({ id: fc.string({ maxLength: 8 }), text: fc.string({ maxLength: 30 }), n: fc.integer() }),
      { minLength: 1, maxLength: 8 },
    );
    fc.assert(
      fc.property(
        docs,
        fc.integer({ min: 1, max: 17 }),
        fc.constantFrom('jsonl', 'array', 'pretty'),
        (ds, chunk, format) => {
          const ops = ds.map((d) => ({ put: `id:a:b::${d.id}x`, fields: { text: d.text, n: d.n } }));
          const text =
            format === 'jsonl'
              ? ops.map((o) => JSON.stringify(o)).join('\n')
              : format === 'array'
                ? JSON.stringify(ops, null, 1)
                : ops.map((o) => JSON.stringify(o, null, 2)).join('\n');
          const whole = split(text);
          const chunked = split(text, chunk);
          expect(view(chunked)).toEqual(view(whole));
          expect(whole.map((i) => JSON.parse(i.bytes.toString()))).toEqual(ops);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('OperationSplitter format detection', () => {
  it('takes an input whose broken first line ends after a value as JSONL', () => {
    const items = split('{"put":"id:a:b::2","fields":{"a":2}\nbad\n{"remove":"id:a:b::3"}\n');
    expect(items.map((i) => [i.bytes.toString(), i.line, i.error !== undefined])).toEqual([
      ['{"put":"id:a:b::2","fields":{"a":2}', 1, false],
      ['bad', 2, true],
      ['{"remove":"id:a:b::3"}', 3, false],
    ]);
  });
});
