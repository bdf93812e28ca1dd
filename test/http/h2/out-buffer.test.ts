import { describe, expect, it } from 'vitest';
import { OutBuffer } from '../../../src/http/h2/out-buffer.js';

const put = (out: OutBuffer, text: string): void => {
  const buf = out.reserve(text.length);
  buf.write(text, out.used, 'latin1');
  out.commit(out.used + text.length);
};

describe('OutBuffer', () => {
  it('never writes over bytes handed to the socket until its write has ended, then reuses the buffer', () => {
    const out = new OutBuffer();
    put(out, 'first');
    const [first] = out.take();
    const firstWritten = out.writing();
    put(out, 'second');
    const [second] = out.take();
    const secondWritten = out.writing();
    expect(second.buffer).toBe(first.buffer);
    expect(second.byteOffset).toBe(first.byteOffset + 5);
    firstWritten();
    put(out, 'third');
    expect([first.toString(), second.toString()]).toEqual(['first', 'second']);
    const [third] = out.take();
    const thirdWritten = out.writing();
    secondWritten();
    thirdWritten();
    // All handed over and written: the next frames go to the start of the same buffer.
    put(out, 'fourth');
    const [fourth] = out.take();
    expect(fourth.buffer).toBe(first.buffer);
    expect(fourth.byteOffset).toBe(first.byteOffset);
    expect(third.toString()).toBe('third');
  });

  it('never reuses bytes handed over without a write to end', () => {
    const out = new OutBuffer();
    put(out, 'kept');
    const [kept] = out.take();
    put(out, 'next');
    out.take();
    out.writing()();
    put(out, 'last');
    expect(kept.toString()).toBe('kept');
    expect(out.take()[0].byteOffset).toBe(kept.byteOffset + 8);
  });

  it('takes a new buffer when the bytes in the old one are still being written, and the end of that write does not free the new one', () => {
    const out = new OutBuffer();
    put(out, 'x'.repeat(60 * 1024));
    const [big] = out.take();
    const written = out.writing();
    put(out, 'y'.repeat(8 * 1024));
    const [next] = out.take();
    expect(next.buffer).not.toBe(big.buffer);
    expect(big.toString('latin1', 0, 1)).toBe('x');
    const nextWritten = out.writing();
    written();
    put(out, 'z');
    expect(next.toString('latin1', 0, 1)).toBe('y');
    nextWritten();
  });
});
