import { describe, expect, it } from 'vitest';
import { exactJsonText, jsonTextWith, parseExactJson, parseJsonWith } from '../../src/core/exact-json.js';

describe('exact JSON numbers', () => {
  it('keeps what the reader chooses, as the value it gives, and writes it back as its text', () => {
    const keepAll = (token: string) => ({ token });
    const v = parseJsonWith('{"a":1.50,"b":[-0,2e3],"s":"1.50"}', keepAll);
    expect(v).toEqual({ a: { token: '1.50' }, b: [{ token: '-0' }, { token: '2e3' }], s: '1.50' });
    const write = (x: unknown) => (typeof x === 'object' && x !== null && 'token' in x ? String(x.token) : undefined);
    expect(jsonTextWith(v, write)).toBe('{"a":1.50,"b":[-0,2e3],"s":"1.50"}');
  });

  it('is not misled by document strings or keys that hold its private-use marks', () => {
    const text = '{"s":"\\ue000x","\uE001":"\uE0010","n":12345678901234567890}';
    const v = parseExactJson(text) as Record<string, unknown>;
    expect(v).toEqual({ s: '\uE000x', '\uE001': '\uE0010', n: 12345678901234567890n });
    expect(exactJsonText({ '\uE0000': '\uE0000', n: 12345678901234567890n })).toBe(
      '{"\uE0000":"\uE0000","n":12345678901234567890}',
    );
  });

  it('writes other values as JSON.stringify does (toJSON included)', () => {
    expect(exactJsonText({ d: new Date(0), n: -3n, u: undefined })).toBe('{"d":"1970-01-01T00:00:00.000Z","n":-3}');
  });
});
