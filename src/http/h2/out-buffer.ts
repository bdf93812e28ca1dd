/**
 * Where a connection's outgoing frames are written: one large buffer filled front to back, handed to the
 * socket as views of what was written since the last hand-over. Frames are written in place, so a turn's
 * requests leave in one write with no per-request allocation and no gathering copy.
 *
 * Once the socket is done with everything handed over (the callback of `writing()`), the buffer is written
 * again from its start: a connection that keeps up writes into the same 64 KiB for its whole life, rather than
 * a new one every 64 KiB sent, which only a garbage collection gave back (the feed's peak RSS followed).
 */
const chunkBytes = 64 * 1024;
const nothing = (): void => undefined;

export class OutBuffer {
  private chunk = Buffer.allocUnsafe(chunkBytes);
  /** Bytes of `chunk` written. */
  used = 0;
  /** Start of what has not been handed over yet. */
  private from = 0;
  /** Whole chunks filled since the last hand-over. */
  private full: Buffer[] = [];
  /** Hand-overs of `chunk`'s bytes the socket is not done with: until there are none, they are not written over. */
  private unwritten = 0;
  /** Which chunk `chunk` is: the end of a write of an earlier one does not count against it. */
  private generation = 0;
  /** The last `take()` handed over bytes of `chunk` (counted in `unwritten` until `writing()`'s callback). */
  private handed = false;

  /** Makes room for `n` more bytes and returns the buffer to write them into, at `used`. */
  reserve(n: number): Buffer {
    if (this.used > 0 && this.from === this.used && this.unwritten === 0) {
      this.used = 0;
      this.from = 0;
    }
    if (this.chunk.length - this.used < n) {
      if (this.used > this.from) this.full.push(this.chunk.subarray(this.from, this.used));
      this.chunk = Buffer.allocUnsafe(Math.max(chunkBytes, n));
      this.generation++;
      this.unwritten = 0;
      this.handed = false;
      this.used = 0;
      this.from = 0;
    }
    return this.chunk;
  }

  /** Marks everything up to `end` as written. */
  commit(end: number): void {
    this.used = end;
  }

  /**
   * What was written since the last call, in order; the buffer goes on after it. Its bytes are not written over
   * until the callback `writing()` returns for them is called: without it, never.
   */
  take(): Buffer[] {
    const parts = this.full;
    this.full = [];
    if (this.used > this.from) {
      parts.push(this.chunk.subarray(this.from, this.used));
      this.from = this.used;
      this.unwritten++;
      this.handed = true;
    }
    return parts;
  }

  /**
   * For the socket's write of the last part the last `take()` returned: the callback to give that write. Once it
   * is called (a socket's writes end in order, so every part is written), those bytes may be written over.
   */
  writing(): () => void {
    if (!this.handed) return nothing;
    this.handed = false;
    const generation = this.generation;
    return () => {
      if (generation === this.generation) this.unwritten--;
    };
  }
}
