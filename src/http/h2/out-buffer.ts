/**
 * Where a connection's outgoing frames are written: one large buffer filled front to back, handed to the
 * socket as views of what was written since the last hand-over. Frames are written in place, so a turn's
 * requests leave in one write with no per-request allocation and no gathering copy.
 */
const chunkBytes = 64 * 1024;

export class OutBuffer {
  private chunk = Buffer.allocUnsafe(chunkBytes);
  /** Bytes of `chunk` written. */
  used = 0;
  /** Start of what has not been handed over yet. */
  private from = 0;
  /** Whole chunks filled since the last hand-over. */
  private full: Buffer[] = [];

  /** Makes room for `n` more bytes and returns the buffer to write them into, at `used`. */
  reserve(n: number): Buffer {
    if (this.chunk.length - this.used < n) {
      if (this.used > this.from) this.full.push(this.chunk.subarray(this.from, this.used));
      this.chunk = Buffer.allocUnsafe(Math.max(chunkBytes, n));
      this.used = 0;
      this.from = 0;
    }
    return this.chunk;
  }

  /** Marks everything up to `end` as written. */
  commit(end: number): void {
    this.used = end;
  }

  /** What was written since the last call, in order; the buffer goes on after it. */
  take(): Buffer[] {
    const parts = this.full;
    this.full = [];
    if (this.used > this.from) {
      parts.push(this.chunk.subarray(this.from, this.used));
      this.from = this.used;
    }
    return parts;
  }
}
