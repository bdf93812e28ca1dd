import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { indentJson } from '../../src/cli/json-indent.js';

describe('indentJson', () => {
  it('lays out any JSON exactly as JSON.stringify(value, null, 2) does (property)', () => {
    fc.assert(
      fc.property(fc.json(), (text) => {
        expect(indentJson(text)).toBe(JSON.stringify(JSON.parse(text), null, 2));
        // Compact input and input already spread out give the same layout.
        expect(indentJson(JSON.stringify(JSON.parse(text), null, 5))).toBe(JSON.stringify(JSON.parse(text), null, 2));
      }),
    );
  });

  it('keeps numbers beyond 2^53 and strings with brackets, commas, colons and escaped quotes as they are', () => {
    const text = '{"n":9007199254740993,"s":"a{b}[c],d:\\"e\\"","a":[],"o":{},"m":[-9223372036854775807,1.50]}';
    expect(indentJson(text)).toBe(
      '{\n  "n": 9007199254740993,\n  "s": "a{b}[c],d:\\"e\\"",\n  "a": [],\n  "o": {},\n  "m": [\n    -9223372036854775807,\n    1.50\n  ]\n}',
    );
  });
});
