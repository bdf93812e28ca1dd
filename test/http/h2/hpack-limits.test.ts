import { describe, expect, it } from 'vitest';
import { HeaderListTooLarge, HpackDecoder, HpackEncoder } from '../../../src/http/h2/hpack.js';
import { hpackInt, literalBlock } from '../../support/h2-peer.js';

/**
 * What the HPACK decoder bounds and flags (RFC 9113 §6.5.2 list size, §8.2.1 field characters), and the encoder's
 * kept blocks against callers that change their header lists. Pure: bytes in, fields or errors out.
 */

/** A literal with incremental indexing and a literal name (RFC 7541, 6.2.1). */
function indexedLiteral(name: string, value: string): Buffer {
  const n = Buffer.from(name, 'latin1');
  const v = Buffer.from(value, 'latin1');
  return Buffer.concat([Buffer.from([0x40]), hpackInt(n.length, 7), n, hpackInt(v.length, 7), v]);
}

describe('HpackDecoder: the header list bound', () => {
  it('counts each field as name + value + 32 bytes and throws past the bound, the table kept in step up to it', () => {
    const d = new HpackDecoder();
    // 'x-a: 1234' is 3 + 4 + 32 = 39 bytes.
    const block = literalBlock([['x-a', '1234']]);
    expect(d.decode(Buffer.concat([block, block]), 0, 2 * block.length, 78)).toEqual(['x-a', '1234', 'x-a', '1234']);
    expect(() => d.decode(Buffer.concat([block, block]), 0, 2 * block.length, 77)).toThrow(HeaderListTooLarge);
  });

  it('bounds what references expand to, not only the bytes that carry them', () => {
    const d = new HpackDecoder();
    const insert = indexedLiteral('x-big', 'z'.repeat(3000));
    const refs = Buffer.alloc(1000, 0x80 | 62);
    const block = Buffer.concat([insert, refs]);
    expect(() => d.decode(block, 0, block.length, 65_536)).toThrow(HeaderListTooLarge);
  });

  it('takes any size without a bound', () => {
    const d = new HpackDecoder();
    const block = literalBlock([['x-long', 'v'.repeat(200_000)]]);
    expect(d.decode(block)[1]).toHaveLength(200_000);
  });
});

describe('HpackDecoder: field characters (RFC 9113, 8.2.1)', () => {
  it.each([
    ['Upper', 'x'],
    ['x y', 'x'],
    ['', 'x'],
    ['x:y', 'x'],
    ['x\u00e9', 'x'],
    ['x-a', 'a\rb'],
    ['x-a', 'a\nb'],
    ['x-a', 'a\0b'],
    ['x-a', ' a'],
    ['x-a', 'a '],
    ['x-a', '\ta'],
    ['x-a', 'a\t'],
  ])('flags %j: %j as malformed, and still decodes the block', (name, value) => {
    const d = new HpackDecoder();
    const block = Buffer.concat([literalBlock([['x-ok', 'fine']]), indexedLiteral(name, value)]);
    expect(d.decode(block)).toEqual(['x-ok', 'fine', name, value]);
    expect(d.malformed).toMatch(/./);
    // The next block, fine, is not flagged...
    expect(d.decode(literalBlock([['x-ok', 'fine']]))).toEqual(['x-ok', 'fine']);
    expect(d.malformed).toBeUndefined();
    // ...but a reference to the malformed entry the first block put in the table is.
    d.decode(Buffer.from([0x80 | 62]));
    expect(d.malformed).toMatch(/./);
  });

  it('takes what the rules allow: empty values, inner spaces and tabs, bytes above 0x7f in values, pseudo-header names', () => {
    const d = new HpackDecoder();
    d.decode(
      literalBlock([
        [':status', '200'],
        ['x-a', ''],
        ['x-b', 'a b\tc'],
        ['x-c', 'caf\u00e9'],
        ["x-!#$%&'*+-.^_`|~09", 'v'],
      ]),
    );
    expect(d.malformed).toBeUndefined();
  });
});

describe('HpackEncoder: kept blocks', () => {
  it('encodes an array again when its caller changed it in place, and keeps the block while it does not', () => {
    const e = new HpackEncoder();
    const d = new HpackDecoder();
    const headers = ['authorization', 'Bearer one'];
    expect(d.decode(e.fixed(headers))).toEqual(['authorization', 'Bearer one']);
    const kept = e.fixed(headers);
    expect(d.decode(kept)).toEqual(['authorization', 'Bearer one']);
    expect(e.fixed(headers)).toBe(kept);
    headers[1] = 'Bearer two';
    expect(d.decode(e.fixed(headers))).toEqual(['authorization', 'Bearer two']);
    headers.push('x-added', '1');
    expect(d.decode(e.fixed(headers))).toEqual(['authorization', 'Bearer two', 'x-added', '1']);
  });

  it('says through kept() which block fixed() would reuse, without changing anything', () => {
    const e = new HpackEncoder();
    const d = new HpackDecoder();
    const fields = ['x-a', '1'];
    expect(e.kept(fields)).toBeUndefined();
    expect(d.decode(e.fixed(fields))).toEqual(['x-a', '1']);
    // That block entered x-a into the table: sent again it would enter it twice, so it is not kept.
    expect(e.kept(fields)).toBeUndefined();
    const refs = e.fixed(fields);
    expect(d.decode(refs)).toEqual(['x-a', '1']);
    expect(e.kept(fields)).toBe(refs);
    fields[1] = '2';
    expect(e.kept(fields)).toBeUndefined();
    expect(e.kept(['x-never', 'sent'])).toBeUndefined();
    // Asking changed nothing: the encoder and the decoder still agree.
    expect(d.decode(e.fixed(['x-b', '3', 'x-a', '1']))).toEqual(['x-b', '3', 'x-a', '1']);
  });
});
