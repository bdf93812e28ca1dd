import { closeSync, fstatSync, openSync, write } from 'node:fs';
import type { FileSink } from './sink.js';

/**
 * A plain file, written in 1 MiB blocks with two staging buffers: while one block is being written by the
 * thread pool, the next one fills. On this kind of machine copying a gigabyte into the page cache costs two
 * seconds of system time; done on the main thread (writeSync) that time is taken from reading the HTTP
 * responses, done beside it the two overlap. Only one write is in flight at a time, so the file keeps the
 * order of the blocks; when both buffers are full, `write` returns a promise, which slows the HTTP reads.
 * Used where direct writes (direct-file.ts) are not: devices, pipes, file systems or platforms without O_DIRECT,
 * and `directIo: false`.
 */
export class BlockFileSink implements FileSink {
  bytes = 0;
  readonly directIo = false;
  private readonly fd: number;
  private filling: Buffer;
  private spare: Buffer;
  private used = 0;
  private inFlight: Promise<void> | undefined;
  private failure: Error | undefined;
  private closed = false;
  /** The file's length when opened plus every byte given to `write`, also those still waiting for room. */
  private offered: number;

  constructor(path: string, append: boolean, blockBytes = 1 << 20) {
    this.fd = openSync(path, append ? 'a' : 'w');
    this.offered = append ? fstatSync(this.fd).size : 0;
    this.filling = Buffer.allocUnsafe(blockBytes);
    this.spare = Buffer.allocUnsafe(blockBytes);
  }

  write(chunks: readonly Buffer[]): void | Promise<void> {
    if (this.closed) throw new Error('output closed');
    if (this.failure) throw this.failure;
    for (const c of chunks) this.offered += c.length;
    return this.put(chunks);
  }

  private put(chunks: readonly Buffer[]): void | Promise<void> {
    if (this.failure) throw this.failure;
    for (let i = 0; i < chunks.length; i++) {
      const c = chunks[i];
      if (this.used + c.length > this.filling.length && this.used > 0) {
        // The block is full: hand it off, or wait for the previous hand-off and take the rest later.
        if (this.inFlight !== undefined) return this.inFlight.then(() => this.put(chunks.slice(i)));
        this.handOff();
      }
      if (c.length >= this.filling.length) {
        // Larger than a block: written as it is, in order after what is in flight.
        if (this.inFlight !== undefined) return this.inFlight.then(() => this.put(chunks.slice(i)));
        this.inFlight = this.writeAsync(c);
        this.bytes += c.length;
        continue;
      }
      c.copy(this.filling, this.used);
      this.used += c.length;
      this.bytes += c.length;
    }
  }

  private handOff(): void {
    const block = this.filling.subarray(0, this.used);
    [this.filling, this.spare] = [this.spare, this.filling];
    this.used = 0;
    this.inFlight = this.writeAsync(block);
  }

  private writeAsync(buf: Buffer): Promise<void> {
    return new Promise<void>((resolve) => {
      const next = (offset: number): void => {
        write(this.fd, buf, offset, buf.length - offset, null, (err, written) => {
          if (err) {
            this.failure ??= err;
            this.inFlight = undefined;
            resolve();
          } else if (offset + written < buf.length) next(offset + written);
          else {
            this.inFlight = undefined;
            resolve();
          }
        });
      };
      next(0);
    });
  }

  async flushed(): Promise<void> {
    if (this.closed) return;
    while (this.inFlight !== undefined) await this.inFlight;
    if (this.used > 0) {
      this.handOff();
      // handOff() sets inFlight; the narrowing after the loop above cannot know that.
      // eslint-disable-next-line @typescript-eslint/await-thenable
      await this.inFlight;
    }
    if (this.failure) throw this.failure;
  }

  async lengthAtCut(): Promise<number> {
    const length = this.offered;
    await this.flushed();
    return length;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.flushed();
    this.closed = true;
    closeSync(this.fd);
  }
}
