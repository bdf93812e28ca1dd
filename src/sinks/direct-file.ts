import { closeSync, constants, fstatSync, openSync, readSync, statSync, write, writeSync } from 'node:fs';
import type { FileSink } from './sink.js';

/**
 * File offsets and lengths of direct writes are multiples of this. Devices ask for their logical block size
 * (512 bytes on most disks, 4096 on some); 4096 satisfies both and is the page size, so a direct write never
 * covers half a page that the ordinary descriptor has cached.
 */
const alignBytes = 4096;

/**
 * Candidate distances between the start of the staging memory and the first block, tried in this step. Node
 * does not tell a buffer's address; malloc returns addresses that are multiples of 16 (8 on some platforms),
 * and the kernel asks for the device's DMA alignment (512 bytes here), so one of the 512 candidates fits.
 */
const probeStepBytes = 8;

/**
 * A plain file written with O_DIRECT: the blocks go from the staging buffers to the disk without being copied
 * into the page cache. On a small VM that copy, the allocation of the cache pages and their writeback cost
 * about as much system time as the whole export costs user time; with O_DIRECT they cost almost nothing.
 *
 * O_DIRECT asks for aligned file offsets, lengths and buffer addresses, so:
 * - both staging buffers sit in one over-allocated ArrayBuffer, at a distance from its start found by the first
 *   direct write (tried at each candidate distance until the kernel stops answering EINVAL);
 * - only whole aligned blocks go through the direct descriptor; the bytes after the last whole block (at
 *   `flushed()` and `close()`) go through a second, ordinary descriptor, and stay in the staging buffer, so the
 *   next direct write covers that block again from its aligned start (the kernel writes back and drops the
 *   cached page before a direct write over it). The file is therefore always a prefix of what was written;
 * - appending to a file whose size is not aligned starts by reading its last partial block back into the
 *   staging buffer, so that block is rewritten, with the same bytes first, at its aligned offset.
 * If a direct write is refused anyway (EINVAL, or a short write), that write and all later ones go through
 * the ordinary descriptor at the same offsets: slower, never wrong.
 */
export class DirectFileSink implements FileSink {
  bytes = 0;
  /** False once the writes have fallen back to the page cache (see the class comment). */
  directIo = true;
  private readonly directFd: number;
  private readonly plainFd: number;
  private readonly capacity: number;
  private readonly arena: ArrayBuffer;
  /** Distance of the first staging buffer from the arena's start; undefined until the first direct write. */
  private base: number | undefined;
  private filling: Buffer;
  private spare: Buffer;
  /** File offset of `filling[0]`; always a multiple of alignBytes. */
  private position: number;
  private used = 0;
  /** Bytes at the start of `filling` already handed to the ordinary descriptor (or already in the file). */
  private handed = 0;
  /** Every byte before this file offset has reached the operating system. */
  private settled: number;
  private inFlight: Promise<void> | undefined;
  /**
   * Bytes given to a `write` that is waiting for room. A checkpoint counts them as written, so `flushed()`
   * covers them too.
   */
  private waiting = 0;
  private failure: Error | undefined;
  private closed = false;

  /**
   * Opens `path` for direct writes, or returns undefined when the file system refuses O_DIRECT (EINVAL) or the
   * platform has no such flag; other errors (a missing directory, no permission) are left to the caller's
   * ordinary open, which reports them.
   */
  static open(path: string, append: boolean, blockBytes = 1 << 20): DirectFileSink | undefined {
    const direct = constants.O_DIRECT;
    if (direct === undefined || direct === 0) return undefined;
    try {
      // Devices and pipes (`-o /dev/null`, a FIFO) have no aligned offsets to write at; a FIFO must not even be
      // opened twice, since its reader would see the end of the data when the first descriptor closes.
      if (!statSync(path).isFile()) return undefined;
    } catch {
      // Not there yet: created below.
    }
    let directFd: number;
    try {
      directFd = openSync(
        path,
        constants.O_WRONLY | constants.O_CREAT | direct | (append ? 0 : constants.O_TRUNC),
        0o666,
      );
    } catch {
      return undefined;
    }
    let plainFd: number;
    try {
      plainFd = openSync(path, constants.O_RDWR);
    } catch {
      closeSync(directFd);
      return undefined;
    }
    try {
      // Replaced by something else since the stat above.
      if (!fstatSync(directFd).isFile()) throw new Error('not a regular file');
      return new DirectFileSink(directFd, plainFd, blockBytes);
    } catch {
      closeSync(directFd);
      closeSync(plainFd);
      return undefined;
    }
  }

  private constructor(directFd: number, plainFd: number, blockBytes: number) {
    if (blockBytes % alignBytes !== 0 || blockBytes <= 0)
      throw new RangeError(`block size ${blockBytes} is not a multiple of ${alignBytes}`);
    this.directFd = directFd;
    this.plainFd = plainFd;
    this.capacity = blockBytes;
    this.arena = new ArrayBuffer(2 * blockBytes + alignBytes);
    this.filling = Buffer.from(this.arena, 0, blockBytes);
    this.spare = Buffer.from(this.arena, blockBytes, blockBytes);
    // Appending: the last partial block is read back, to be rewritten whole at its aligned offset.
    const size = fstatSync(plainFd).size;
    this.position = size - (size % alignBytes);
    this.settled = size;
    let tail = size - this.position;
    while (this.used < tail) {
      const n = readSync(plainFd, this.filling, this.used, tail - this.used, this.position + this.used);
      if (n === 0) {
        // Shrunk under us: continue from what is there.
        tail = this.used;
        this.settled = this.position + tail;
        break;
      }
      this.used += n;
    }
    this.handed = this.used;
  }

  write(chunks: readonly Buffer[]): void | Promise<void> {
    if (this.closed) throw new Error('output closed');
    if (this.failure) throw this.failure;
    for (let i = 0; i < chunks.length; i++) {
      const c = chunks[i];
      let from = 0;
      while (from < c.length) {
        if (this.used === this.capacity) {
          if (this.inFlight !== undefined) {
            const rest = [c.subarray(from), ...chunks.slice(i + 1)];
            const waiting = rest.reduce((n, r) => n + r.length, 0);
            this.waiting += waiting;
            return this.inFlight.then(() => {
              this.waiting -= waiting;
              return this.write(rest);
            });
          }
          this.handOff();
        }
        const n = Math.min(c.length - from, this.capacity - this.used);
        c.copy(this.filling, this.used, from, from + n);
        this.used += n;
        this.bytes += n;
        from += n;
      }
    }
    // A full block goes to the disk now, while the next one fills.
    if (this.used === this.capacity && this.inFlight === undefined) this.handOff();
  }

  /**
   * Starts the write of the whole blocks in `filling`; the bytes after them move to the start of the other
   * buffer, which becomes `filling`. Only called with nothing in flight.
   */
  private handOff(): void {
    if (this.directIo && this.base === undefined && !this.findAlignment()) throw this.failure!;
    const whole = this.used - (this.used % alignBytes);
    const block = this.filling.subarray(0, whole);
    const rest = this.used - whole;
    if (rest > 0) this.filling.copy(this.spare, 0, whole, this.used);
    [this.filling, this.spare] = [this.spare, this.filling];
    const at = this.position;
    this.position += whole;
    this.used = rest;
    this.handed = Math.max(0, this.handed - whole);
    this.inFlight = this.writeAsync(this.directIo ? this.directFd : this.plainFd, block, 0, at);
  }

  /**
   * Finds where in the arena the staging buffers must start for the kernel to accept their addresses: the first
   * aligned block of `filling` is written (for real, at its real offset; the block write that follows rewrites
   * it) from each candidate place until one is accepted, and the buffers move there. When none is accepted,
   * direct I/O is given up. False only when the file cannot be written at all (the failure is kept).
   */
  private findAlignment(): boolean {
    const saved = Buffer.from(this.filling.subarray(0, this.used));
    const fillingIndex = this.filling.byteOffset === 0 ? 0 : 1;
    const arena = new Uint8Array(this.arena);
    const probe = saved.subarray(0, alignBytes);
    let found: number | undefined;
    for (let base = 0; base < alignBytes && found === undefined; base += probeStepBytes) {
      const start = base + fillingIndex * this.capacity;
      arena.set(probe, start);
      try {
        if (writeSync(this.directFd, arena, start, alignBytes, this.position) === alignBytes) found = base;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EINVAL') {
          this.failure ??= err as Error;
          saved.copy(this.filling);
          return false;
        }
      }
    }
    if (found === undefined) this.directIo = false;
    else {
      this.base = found;
      this.filling = Buffer.from(this.arena, found + fillingIndex * this.capacity, this.capacity);
      this.spare = Buffer.from(this.arena, found + (1 - fillingIndex) * this.capacity, this.capacity);
    }
    saved.copy(this.filling);
    return true;
  }

  /** Writes `buf[from..]` at file offset `at`; a refused or short direct write is finished through the page cache. */
  private writeAsync(fd: number, buf: Buffer, from: number, at: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = (err?: Error): void => {
        if (err) this.failure ??= err;
        else this.settled = Math.max(this.settled, at + buf.length - from);
        this.inFlight = undefined;
        resolve();
      };
      const next = (fd: number, offset: number): void => {
        write(fd, buf, offset, buf.length - offset, at + offset - from, (err, written) => {
          if (err) {
            if (fd === this.directFd && err.code === 'EINVAL') {
              this.directIo = false;
              next(this.plainFd, offset);
            } else done(err);
          } else if (offset + written < buf.length) {
            if (fd === this.directFd) this.directIo = false;
            next(this.plainFd, offset + written);
          } else done();
        });
      };
      next(fd, from);
    });
  }

  async flushed(): Promise<void> {
    if (this.closed) return;
    const target = this.position + this.used + this.waiting;
    for (let idleTurns = 0; this.settled < target; ) {
      if (this.failure) throw this.failure;
      if (this.inFlight !== undefined) {
        await this.inFlight;
        continue;
      }
      if (this.used >= alignBytes) {
        this.handOff();
        continue;
      }
      if (this.handed >= this.used) {
        // The rest is in a waiting write, whose turn has come but not yet run.
        if (++idleTurns > 1000) throw new Error(`output: ${target - this.settled} bytes were never written`);
        await Promise.resolve();
        continue;
      }
      // The partial block through the page cache; it stays in `filling` for the next direct write.
      const from = this.handed;
      this.handed = this.used;
      this.inFlight = this.writeAsync(this.plainFd, this.filling.subarray(0, this.used), from, this.position + from);
    }
    if (this.failure) throw this.failure;
  }

  async lengthAtCut(): Promise<number> {
    // `position + used` moves only by what `write` copies in; `waiting` is what it has yet to copy.
    const length = this.position + this.used + this.waiting;
    await this.flushed();
    return length;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    try {
      await this.flushed();
    } finally {
      // A write still in flight after a failure must not meet a closed (or reused) descriptor.
      while (this.inFlight !== undefined) await this.inFlight;
      this.closed = true;
      closeSync(this.directFd);
      closeSync(this.plainFd);
    }
  }
}
