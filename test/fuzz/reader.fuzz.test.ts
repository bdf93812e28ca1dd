import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { OperationSplitter, type RawItem } from '../../src/core/operation-splitter.js';
import { parseOperation } from '../../src/document/operation.js';
import { isVespaBulkError } from '../../src/core/errors.js';

function split(buf: Buffer, chunkSize: number): RawItem[] {
  const s = new OperationSplitter();
  const out: RawItem[] = [];
  for (let i = 0; i < buf.length; i += chunkSize) s.push(buf.subarray(i, i + chunkSize), out);
  s.end(out);
  return out;
}

/** What the feeder makes of one item: an operation, or a rejection that names its line and reason. */
function outcome(item: RawItem): { line: number; ok: boolean; reason?: string } {
  expect(item.line).toBeGreaterThanOrEqual(1);
  if (item.error !== undefined) {
    expect(isVespaBulkError(item.error)).toBe(true);
    expect(item.error.message.length).toBeGreaterThan(0);
    return { line: item.line, ok: false, reason: item.error.message };
  }
  try {
    parseOperation(item.bytes);
    return { line: item.line, ok: true };
  } catch (err) {
    // Anything but a VespaBulkError (a TypeError, a RangeError from deep input) is a bug in the reader.
    expect(isVespaBulkError(err)).toBe(true);
    expect(['VB_BAD_JSON', 'VB_BAD_OPERATION', 'VB_BAD_DOCUMENT_ID']).toContain((err as { code: string }).code);
    expect((err as Error).message.length).toBeGreaterThan(0);
    return { line: item.line, ok: false, reason: (err as Error).message };
  }
}

const fragments = fc.constantFrom(
  '{',
  '}',
  '[',
  ']',
  '"',
  '\\',
  ',',
  ':',
  '\n',
  ' ',
  '\r\n',
  '\t',
  'null',
  'true',
  '1e9',
  '-0',
  '"put"',
  '"update"',
  '"remove"',
  '"id"',
  '"fields"',
  '"condition"',
  '"create"',
  '"id:ns:t::a"',
  '"id:ns:t:n=x:a"',
  '{}',
  '"\\u00e9"',
  'é',
  '😀',
  '{"put":"id:ns:music::1","fields":{"a":1}}',
  '{"remove":"id:ns:music::2"}',
  '{"update":"id:ns:music::3","fields":{"a":{"assign":2}}}',
);
const malformed = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.string({ unit: 'binary', maxLength: 120 }),
  fc.array(fragments, { maxLength: 60 }).map((xs) => xs.join('')),
);

describe('the feed reader on random and malformed input', () => {
  it('never throws, and every item is an operation or a rejection naming its line and reason, whatever the chunking', () => {
    fc.assert(
      fc.property(malformed, fc.integer({ min: 1, max: 64 }), (text, chunk) => {
        const buf = Buffer.from(text);
        const whole = split(buf, buf.length + 1).map(outcome);
        const chunked = split(buf, chunk).map(outcome);
        expect(chunked).toEqual(whole);
      }),
      { numRuns: 800 },
    );
  });

  it('in JSONL, keeps every good line and rejects exactly the bad ones, on the right line numbers', () => {
    const good = fc.constantFrom(
      '{"put":"id:ns:music::a","fields":{"t":"x"}}',
      '{"remove":"id:ns:music::b"}',
      '{"update":"id:ns:music::c","fields":{}}',
    );
    const bad = fc.oneof(
      fc
        .string({ maxLength: 40 })
        .filter((s) => !/[\n\r]/.test(s) && s.trim() !== '' && !s.trim().startsWith('{') && !s.trim().startsWith('[')),
      fc.constantFrom(
        '{"put":',
        '{"put":"id:ns:music::a"}',
        '{"bogus":"id:ns:music::a"}',
        '{"remove":"nope"}',
        '{"put":"id:ns:music::a","fields":{}',
        '}{',
        '{"id":"id:x:y::z","fields":[1,}',
      ),
    );
    fc.assert(
      fc.property(
        good,
        fc.array(fc.record({ ok: fc.boolean(), g: good, b: bad }), { maxLength: 30 }),
        fc.integer({ min: 1, max: 50 }),
        (first, rest, chunk) => {
          const lines = [first, ...rest.map((r) => (r.ok ? r.g : r.b))];
          const items = split(Buffer.from(lines.join('\n')), chunk).map(outcome);
          expect(items.map((i) => i.line)).toEqual(lines.map((_, n) => n + 1));
          expect(items.map((i) => i.ok)).toEqual([true, ...rest.map((r) => r.ok)]);
          for (const i of items) if (!i.ok) expect(i.reason).toBeTruthy();
        },
      ),
      { numRuns: 500 },
    );
  });
});
