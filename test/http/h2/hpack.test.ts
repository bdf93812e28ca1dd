import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { HpackDecoder, HpackEncoder, HpackError, writeLiteralField } from '../../../src/http/h2/hpack.js';
import { huffmanCodes, huffmanDecode } from '../../../src/http/h2/huffman.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

/** Pairs of a decoded list, for readable expectations. */
function pairs(list: string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i < list.length; i += 2) out.push([list[i], list[i + 1]]);
  return out;
}

describe('Huffman code (RFC 7541 Appendix B)', () => {
  it('derives the printed codes from the lengths', () => {
    // A few rows of the RFC's table, code as hex and length.
    expect(huffmanCodes[0]).toEqual({ code: 0x1ff8, length: 13 });
    expect(huffmanCodes[1]).toEqual({ code: 0x7fffd8, length: 23 });
    expect(huffmanCodes[10]).toEqual({ code: 0x3ffffffc, length: 30 });
    expect(huffmanCodes[32]).toEqual({ code: 0x14, length: 6 });
    expect(huffmanCodes[48]).toEqual({ code: 0x0, length: 5 });
    expect(huffmanCodes[97]).toEqual({ code: 0x3, length: 5 });
    expect(huffmanCodes[255]).toEqual({ code: 0x3ffffee, length: 26 });
    expect(huffmanCodes[256]).toEqual({ code: 0x3fffffff, length: 30 });
  });

  it('decodes the RFC examples', () => {
    const cases: [string, string][] = [
      ['f1e3 c2e5 f23a 6ba0 ab90 f4ff', 'www.example.com'],
      ['a8eb 1064 9cbf', 'no-cache'],
      ['25a8 49e9 5ba9 7d7f', 'custom-key'],
      ['25a8 49e9 5bb8 e8b4 bf', 'custom-value'],
      ['6402', '302'],
      ['aec3 771a 4b', 'private'],
      ['d07a be94 1054 d444 a820 0595 040b 8166 e082 a62d 1bff', 'Mon, 21 Oct 2013 20:13:21 GMT'],
      ['9d29 ad17 1863 c78f 0b97 c8e9 ae82 ae43 d3', 'https://www.example.com'],
    ];
    for (const [h, text] of cases) expect(huffmanDecode(hex(h), 0, hex(h).length)).toBe(text);
  });

  it('round-trips any bytes encoded with the codes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const encoded = encode(bytes);
        expect(Buffer.from(huffmanDecode(encoded, 0, encoded.length), 'latin1')).toEqual(Buffer.from(bytes));
      }),
    );
  });

  it('refuses padding that is not the start of EOS, or longer than 7 bits, and EOS itself', () => {
    // 'a' is 00011: padded with zeros instead of ones.
    expect(() => huffmanDecode(Buffer.from([0b00011000]), 0, 1)).toThrow(RangeError);
    // A whole byte of ones after a symbol: padding of 8 bits.
    expect(() => huffmanDecode(Buffer.from([0b00011111, 0xff]), 0, 2)).toThrow(RangeError);
    // EOS (30 ones) in the data.
    expect(() => huffmanDecode(Buffer.from([0xff, 0xff, 0xff, 0xfc]), 0, 4)).toThrow(RangeError);
  });
});

/** Huffman-encodes bytes with the derived codes (the client never does; the test needs it). */
function encode(bytes: Uint8Array): Buffer {
  let bits = '';
  for (const b of bytes) bits += huffmanCodes[b].code.toString(2).padStart(huffmanCodes[b].length, '0');
  while (bits.length % 8 !== 0) bits += '1';
  const out = Buffer.alloc(bits.length / 8);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(bits.slice(8 * i, 8 * i + 8), 2);
  return out;
}

describe('HpackDecoder', () => {
  it('decodes the RFC request examples (C.3, plain; C.4, Huffman) with the dynamic table across blocks', () => {
    for (const blocks of [
      [
        '8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d',
        '8286 84be 5808 6e6f 2d63 6163 6865',
        '8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65',
      ],
      [
        '8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff',
        '8286 84be 5886 a8eb 1064 9cbf',
        '8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf',
      ],
    ]) {
      const d = new HpackDecoder();
      expect(pairs(d.decode(hex(blocks[0])))).toEqual([
        [':method', 'GET'],
        [':scheme', 'http'],
        [':path', '/'],
        [':authority', 'www.example.com'],
      ]);
      expect(pairs(d.decode(hex(blocks[1])))).toEqual([
        [':method', 'GET'],
        [':scheme', 'http'],
        [':path', '/'],
        [':authority', 'www.example.com'],
        ['cache-control', 'no-cache'],
      ]);
      expect(pairs(d.decode(hex(blocks[2])))).toEqual([
        [':method', 'GET'],
        [':scheme', 'https'],
        [':path', '/index.html'],
        [':authority', 'www.example.com'],
        ['custom-key', 'custom-value'],
      ]);
    }
  });

  it('evicts by size (RFC C.5: a 256-byte table)', () => {
    const d = new HpackDecoder(256);
    d.decode(
      hex(
        '4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70 6c65 2e63 6f6d',
      ),
    );
    // The second response refers to 307 inserted now and to entries that survived.
    expect(pairs(d.decode(hex('4803 3330 37c1 c0bf')))).toEqual([
      [':status', '307'],
      ['cache-control', 'private'],
      ['date', 'Mon, 21 Oct 2013 20:13:21 GMT'],
      ['location', 'https://www.example.com'],
    ]);
    // ':status: 302' was evicted: index 65 no longer exists.
    expect(() => d.decode(hex('c4'))).toThrow(HpackError);
  });

  it('refuses malformed blocks', () => {
    expect(() => new HpackDecoder().decode(hex('80'))).toThrow(HpackError); // index 0
    expect(() => new HpackDecoder().decode(hex('ff'))).toThrow(HpackError); // truncated integer
    expect(() => new HpackDecoder().decode(hex('4005 6162'))).toThrow(HpackError); // truncated string
    expect(() => new HpackDecoder().decode(hex('82 20'))).toThrow(HpackError); // size update after a field
    expect(() => new HpackDecoder(4096).decode(hex('3fe2 1f'))).toThrow(HpackError); // size update above the limit
  });
});

describe('HpackEncoder', () => {
  it('indexes the fixed fields once, then sends one byte each; the path stays a literal never indexed', () => {
    const e = new HpackEncoder();
    const d = new HpackDecoder();
    const fixed = ['content-type', 'application/json', 'authorization', 'Bearer abc'];
    const first = e.fixed(fixed);
    const second = e.fixed(fixed);
    expect(second.length).toBe(2);
    expect(e.fixed(fixed)).toBe(second); // kept, not encoded again
    expect(pairs(d.decode(first))).toEqual([
      ['content-type', 'application/json'],
      ['authorization', 'Bearer abc'],
    ]);
    expect(pairs(d.decode(second))).toEqual([
      ['content-type', 'application/json'],
      ['authorization', 'Bearer abc'],
    ]);
    const path = Buffer.alloc(64);
    const end = writeLiteralField(path, 0, ':path', '/document/v1/ns/t/docid/1');
    expect(path[0] & 0xf0).toBe(0x10); // never indexed
    expect(pairs(d.decode(path.subarray(0, end)))).toEqual([[':path', '/document/v1/ns/t/docid/1']]);
  });

  it('stays in step with a decoder whatever the field lists and table sizes (evictions included)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.array(
            fc.tuple(
              fc.constantFrom('x-a', 'x-b', 'content-type', 'authorization', 'x-long'),
              fc.string({ maxLength: 300 }),
            ),
            { maxLength: 4 },
          ),
          { maxLength: 30 },
        ),
        fc.constantFrom(4096, 256, 100),
        fc.array(fc.nat(), { minLength: 1, maxLength: 60 }),
        (lists, size, uses) => {
          const e = new HpackEncoder();
          const d = new HpackDecoder(4096);
          e.setMaxTableSize(size);
          const arrays = lists.map((l) => l.flatMap(([n, v]) => [n, v.replace(/[^\x20-\x7e]/g, '')]));
          if (arrays.length === 0) return;
          // The same arrays again in any order: a kept block must never refer to an index that has moved.
          for (const use of uses) {
            const fields = arrays[use % arrays.length];
            expect(d.decode(e.fixed(fields))).toEqual(fields);
          }
        },
      ),
    );
  });
});

describe('HpackEncoder: table size updates (RFC 7541 4.2)', () => {
  it('signals the smallest size since the last block first, then the final one', () => {
    const e = new HpackEncoder();
    e.setMaxTableSize(0);
    e.setMaxTableSize(4096);
    const block = e.fixed(['x-a', '1']);
    // 001 00000 (size 0), then 001 11111 + 4096-31 (size 4096), then the field.
    expect([...block.subarray(0, 4)]).toEqual([0x20, 0x3f, 0xe1, 0x1f]);
    const d = new HpackDecoder(4096);
    expect(d.decode(block)).toEqual(['x-a', '1']);
  });

  it('signals one size when it only rose', () => {
    const e = new HpackEncoder(1000);
    e.setMaxTableSize(2000);
    const block = e.fixed(['x-a', '1']);
    // 001 11111 + 2000-31 (size 2000), then the field as a literal entered into the table: no second update.
    expect([...block.subarray(0, 4)]).toEqual([0x3f, 0xb1, 0x0f, 0x40]);
  });
});
