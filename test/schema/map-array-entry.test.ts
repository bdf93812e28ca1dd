import { describe, expect, it } from 'vitest';
import { mapArrayEntryFault } from '../../src/schema/map-array-entry.js';
import { parseJsonTree, tokenText, type JsonNode } from '../../src/schema/json-tree.js';

/** The array form of a map, entry by entry, as MapReader.fillMapFromArray reads it (MapReader.java:43-69). */

function fault(entry: string): string | undefined {
  const node = parseJsonTree(entry)!;
  const reading = (what: string) => (n: JsonNode) => {
    if (n.kind === 'string' && tokenText(n) === 'bad') throw new Error(`bad ${what}`);
  };
  const f = mapArrayEntryFault(node, reading('key'), reading('value'));
  return f === undefined ? undefined : `${f.status} ${f.message}`;
}

describe('an entry of a map in its array form', () => {
  it('takes key and value in either order', () => {
    expect(fault('{"key":"a","value":1}')).toBeUndefined();
    expect(fault('{"value":1,"key":"a"}')).toBeUndefined();
  });

  it('refuses an entry that is not an object with 400', () => {
    expect(fault('"x"')).toBe('400 Expected start of JSON object, got VALUE_STRING');
    expect(fault('[]')).toBe('400 Expected start of JSON object, got START_ARRAY');
    expect(fault('null')).toBe('400 Expected start of JSON object, got VALUE_NULL');
  });

  it('refuses a third member with 400, naming its token', () => {
    expect(fault('{"key":"a","value":1,"x":2}')).toBe('400 Expected end of JSON object, got VALUE_NUMBER_INT');
    expect(fault('{"key":"a","value":1,"x":[]}')).toBe('400 Expected end of JSON object, got START_ARRAY');
  });

  it('refuses a missing key or value with 500, also when another member comes first', () => {
    const missing = '500 Missing key or value for map entry.';
    expect(fault('{"key":"a"}')).toBe(missing);
    expect(fault('{"value":1}')).toBe(missing);
    expect(fault('{}')).toBe(missing);
    expect(fault('{"x":1,"key":"a","value":1}')).toBe(missing);
    expect(fault('{"key":"a","key":"b"}')).toBe(missing);
    // The missing member is found before the third member is looked at.
    expect(fault('{"key":"a","x":1,"value":1}')).toBe(missing);
  });

  it('reads the key and value before it looks for what is missing, as the reader does', () => {
    expect(() => fault('{"key":"bad"}')).toThrow('bad key');
    expect(() => fault('{"value":"bad","x":1,"y":2}')).toThrow('bad value');
    // A skipped object member is entered: its first member is the next position the reader looks at.
    expect(() => fault('{"x":{"key":"bad"},"value":1}')).toThrow('bad key');
  });
});
