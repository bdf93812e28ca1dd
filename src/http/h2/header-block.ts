import { ErrorCode } from './frame.js';
import { ConnectionError, headersTooLarge, protocolError } from './errors.js';
import { maxContinuations } from './flood-guard.js';

/**
 * A header block the server spreads over HEADERS and CONTINUATION frames (RFC 9113 4.3, 6.10), gathered until
 * END_HEADERS, and bounded as it is gathered (decoding is bounded in the decoder): its compressed bytes by the
 * header list bound, and its frames by {@link maxContinuations}, so that a CONTINUATION flood, of large frames
 * (CVE-2024-27316) or of empty ones (CVE-2024-28182), ends the connection. Throws `ConnectionError`s.
 */
export class HeaderBlock {
  /** The stream whose block is open; 0: none. */
  streamId = 0;
  /** The flags of the HEADERS frame that opened it (END_STREAM). */
  flags = 0;
  private parts: Buffer[] = [];
  private size = 0;
  private continuations = 0;

  constructor(private readonly maxBytes: number) {}

  get open(): boolean {
    return this.streamId !== 0;
  }

  /** A HEADERS frame without END_HEADERS opened a block with `buf[start, end)`. */
  begin(streamId: number, flags: number, buf: Buffer, start: number, end: number): void {
    if (end - start > this.maxBytes) throw headersTooLarge(this.maxBytes);
    this.streamId = streamId;
    this.flags = flags;
    this.parts = [Buffer.from(buf.subarray(start, end))];
    this.size = end - start;
    this.continuations = 0;
  }

  /** A CONTINUATION frame: the whole block once `endHeaders`, else undefined. */
  add(streamId: number, endHeaders: boolean, buf: Buffer, start: number, end: number): Buffer | undefined {
    if (this.streamId === 0 || this.streamId !== streamId)
      throw protocolError('CONTINUATION without HEADERS before it');
    this.size += end - start;
    if (this.size > this.maxBytes) throw headersTooLarge(this.maxBytes);
    if (++this.continuations > maxContinuations)
      throw new ConnectionError(
        ErrorCode.EnhanceYourCalm,
        `the server sent a header block of more than ${maxContinuations} CONTINUATION frames`,
        'H2_FLOOD',
      );
    if (end > start) this.parts.push(Buffer.from(buf.subarray(start, end)));
    if (!endHeaders) return undefined;
    const whole = Buffer.concat(this.parts);
    this.clear();
    return whole;
  }

  clear(): void {
    this.streamId = 0;
    this.parts = [];
  }
}
