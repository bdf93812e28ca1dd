import { describe, expect, it } from 'vitest';
import { HeaderBlock } from '../../../src/http/h2/header-block.js';
import { maxContinuations } from '../../../src/http/h2/flood-guard.js';

const bytes = (s: string): Buffer => Buffer.from(s);

describe('HeaderBlock: gathering a header block over CONTINUATION frames', () => {
  it('gives the whole block at END_HEADERS and is then closed', () => {
    const b = new HeaderBlock(100);
    b.begin(1, 0x1, bytes('ab'), 0, 2);
    expect(b.open).toBe(true);
    expect(b.add(1, false, bytes('cd'), 0, 2)).toBeUndefined();
    expect(b.add(1, true, bytes('xefx'), 1, 3)?.toString()).toBe('abcdef');
    expect(b.open).toBe(false);
    expect(b.flags).toBe(0x1);
  });

  it('refuses CONTINUATION on another stream, or with no block open', () => {
    const b = new HeaderBlock(100);
    expect(() => b.add(1, true, bytes('a'), 0, 1)).toThrow(/CONTINUATION without HEADERS/);
    b.begin(1, 0, bytes('a'), 0, 1);
    expect(() => b.add(3, true, bytes('a'), 0, 1)).toThrow(/CONTINUATION without HEADERS/);
  });

  it('bounds the bytes', () => {
    const b = new HeaderBlock(4);
    b.begin(1, 0, bytes('abc'), 0, 3);
    expect(() => b.add(1, false, bytes('de'), 0, 2)).toThrow(expect.objectContaining({ kind: 'H2_HEADERS_TOO_LARGE' }));
  });

  it('bounds the frames, empty ones too', () => {
    const b = new HeaderBlock(100);
    b.begin(1, 0, bytes('a'), 0, 1);
    for (let i = 0; i < maxContinuations; i++) expect(b.add(1, false, Buffer.alloc(0), 0, 0)).toBeUndefined();
    expect(() => b.add(1, false, Buffer.alloc(0), 0, 0)).toThrow(expect.objectContaining({ kind: 'H2_FLOOD' }));
  });

  it('counts each block on its own', () => {
    const b = new HeaderBlock(1000);
    for (let block = 0; block < 3; block++) {
      b.begin(1, 0, bytes('a'), 0, 1);
      for (let i = 0; i < maxContinuations - 1; i++) b.add(1, false, bytes('b'), 0, 1);
      expect(b.add(1, true, bytes('c'), 0, 1)?.length).toBe(maxContinuations + 1);
    }
  });
});
