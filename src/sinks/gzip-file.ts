import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';
import { BlockFileSink } from './block-file.js';
import type { FileSink } from './sink.js';

const gzip = promisify(gzipCallback);

/** Gzip members compressed or waiting to be written before `write` asks its caller to wait. */
const queuedMembers = 3;

/**
 * A gzip-compressed file written as a series of gzip members (concatenated members are one valid gzip file, which
 * every gzip reader accepts), each about `memberBytes` of input, and one ends at every checkpoint
 * (`lengthAtCut`). A file cut back to a checkpoint's length is therefore a whole number of members: a resumed
 * export, which appends members, leaves a file that gunzip reads whole even after a SIGKILL. A member is
 * compressed in the thread pool while the next fills, a few at once, and written in order.
 */
export class GzipMemberSink implements FileSink {
  bytes = 0;
  readonly directIo = false;
  private readonly file: BlockFileSink;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** The last member's write; members are written in the order they were ended. */
  private tail: Promise<void> = Promise.resolve();
  private readonly queued: Promise<void>[] = [];
  private failure: Error | undefined;
  private closed = false;
  private members = 0;

  constructor(
    path: string,
    private readonly append: boolean,
    private readonly memberBytes = 1 << 20,
  ) {
    this.file = new BlockFileSink(path, append);
  }

  write(chunks: readonly Buffer[]): void | Promise<void> {
    if (this.closed) throw new Error('output closed');
    if (this.failure) throw this.failure;
    for (const c of chunks) {
      if (c.length === 0) continue;
      this.pending.push(c);
      this.pendingBytes += c.length;
      this.bytes += c.length;
    }
    if (this.pendingBytes >= this.memberBytes) this.endMember();
    if (this.queued.length >= queuedMembers) return this.queued[0];
  }

  /** Compresses what is pending as one member, queued behind the members before it. */
  private endMember(): void {
    if (this.pendingBytes === 0) return;
    // The chunks belong to the caller, who may reuse them once `write` returns: compress a copy.
    const input = Buffer.concat(this.pending, this.pendingBytes);
    this.pending = [];
    this.pendingBytes = 0;
    this.members++;
    const compressed = gzip(input, { level: 1 });
    // Rejections are kept in `failure`; an unhandled one would end the process.
    compressed.catch(() => undefined);
    const written = this.tail.then(async () => {
      if (this.failure) return;
      try {
        await this.file.write([await compressed]);
      } catch (err) {
        this.failure ??= err as Error;
      }
    });
    this.tail = written;
    this.queued.push(written);
    void written.then(() => this.queued.splice(this.queued.indexOf(written), 1));
  }

  lengthAtCut(): Promise<number> {
    this.endMember();
    // Registered before any later member's write on the same promise, so it runs first and reads the length
    // of exactly the members ended so far.
    return this.tail.then(() => {
      if (this.failure) throw this.failure;
      return this.file.lengthAtCut();
    });
  }

  async flushed(): Promise<void> {
    await this.lengthAtCut();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.endMember();
    // An empty export is still a valid .gz: one empty member.
    if (this.members === 0 && !this.append) {
      this.members++;
      const empty = await gzip(Buffer.alloc(0));
      this.tail = this.tail.then(() => this.file.write([empty]));
    }
    await this.flushed();
    this.closed = true;
    await this.file.close();
  }
}

/** A gzip-compressed file; appending (a resumed export) adds gzip members, which gzip readers accept. */
export function gzipFileSink(path: string, append: boolean): FileSink {
  return new GzipMemberSink(path, append);
}
