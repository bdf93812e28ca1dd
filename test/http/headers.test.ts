import { describe, expect, it } from 'vitest';
import { maskHeaders } from '../../src/http/headers.js';
import { parseHeaderFlags } from '../../src/cli/header-flags.js';

describe('header flags', () => {
  it('parses Name: value and keeps colons in the value', () => {
    expect(parseHeaderFlags(['Authorization: Bearer a:b', 'X-Trace:1'])).toEqual({
      authorization: 'Bearer a:b',
      'x-trace': '1',
    });
  });
  it('refuses a flag without a name', () => {
    expect(() => parseHeaderFlags(['no colon'])).toThrow(/expected 'Name: value'/);
    expect(() => parseHeaderFlags([': v'])).toThrow(/--header/);
  });
  it('masks secrets', () => {
    expect(maskHeaders({ authorization: 'Bearer x', 'x-api-key': 'k', accept: 'a' })).toEqual({
      authorization: '***',
      'x-api-key': '***',
      accept: 'a',
    });
  });
});
