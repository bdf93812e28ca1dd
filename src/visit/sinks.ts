import { once } from 'node:events';
import { closeSync, createWriteStream, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createGzip, constants as zlibConstants, type Gzip } from 'node:zlib';

/**
 * Where exported bytes go. A sink never buffers without limit: `write` returns a promise while the
 * destination is behind, and the visitor awaits it before reading more of the HTTP response.
 */
export interface Sink {
  /** Queues the buffers; the returned promise (if any) settles when the sink can take more. */
  write(chunks: readonly Buffer[]): void | Promise<void>;
  /** Settles when everything written so far has reached the operating system (for checkpoints). */
  flushed(): Promise<void>;
  /** Flushes and closes (stdout is flushed, not closed). */
  close(): Promise<void>;
  /** Bytes accepted so far (before compression). */
  readonly bytes: number;
}

const empty = Buffer.alloc(0);

class StreamSink implements Sink {
  bytes = 0;
  private closed = false;
  private failure: Error | undefined;

  constructor(
    private readonly stream: NodeJS.WritableStream,
    private readonly closeStream: boolean,
    private readonly gzip?: Gzip,
    private readonly file?: NodeJS.WritableStream,
  ) {
    const onError = (err: Error): void => {
      this.failure ??= err;
    };
    stream.on('error', onError);
    file?.on('error', onError);
  }

  write(chunks: readonly Buffer[]): void | Promise<void> {
    if (this.failure) throw this.failure;
    let ok = true;
    for (const c of chunks) {
      if (c.length === 0) continue;
      this.bytes += c.length;
      ok = this.stream.write(c);
    }
    if (!ok) return this.drain();
  }

  private async drain(): Promise<void> {
    // once() rejects when the stream emits 'error' first.
    await once(this.stream, 'drain');
  }

  async flushed(): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.closed) return;
    if (this.gzip !== undefined) {
      await new Promise<void>((resolve) => this.gzip!.flush(zlibConstants.Z_SYNC_FLUSH, () => resolve()));
      await new Promise<void>((resolve, reject) => this.file!.write(empty, (err) => (err ? reject(err) : resolve())));
      return;
    }
    await new Promise<void>((resolve, reject) => this.stream.write(empty, (err) => (err ? reject(err) : resolve())));
  }

  async close(): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.closed) return;
    if (!this.closeStream) {
      await this.flushed();
      return;
    }
    const target = this.file ?? this.stream;
    const finished = once(target, 'close');
    this.stream.end();
    await finished;
    this.closed = true;
    if (this.failure) throw this.failure;
  }
}

export function stdoutSink(stream: NodeJS.WritableStream = process.stdout): Sink {
  return new StreamSink(stream, false);
}

/**
 * A plain file, written synchronously in 1 MiB blocks from a staging buffer (as pino's sonic-boom does).
 * Handing each block to the thread pool instead costs a thread hand-off per write, which on a busy machine
 * costs more than the write; a block to the page cache takes well under a millisecond. A slow disk then
 * slows the HTTP reads directly, which is the back-pressure wanted anyway.
 */
class BlockFileSink implements Sink {
  bytes = 0;
  private readonly fd: number;
  private readonly block: Buffer;
  private used = 0;
  private closed = false;

  constructor(path: string, append: boolean, blockBytes = 1 << 20) {
    this.fd = openSync(path, append ? 'a' : 'w');
    this.block = Buffer.allocUnsafe(blockBytes);
  }

  write(chunks: readonly Buffer[]): void {
    if (this.closed) throw new Error('output closed');
    for (const c of chunks) {
      this.bytes += c.length;
      if (c.length >= this.block.length) {
        this.writeOut();
        writeFully(this.fd, c);
        continue;
      }
      if (this.used + c.length > this.block.length) this.writeOut();
      c.copy(this.block, this.used);
      this.used += c.length;
    }
  }

  private writeOut(): void {
    if (this.used === 0) return;
    writeFully(this.fd, this.block.subarray(0, this.used));
    this.used = 0;
  }

  async flushed(): Promise<void> {
    if (!this.closed) this.writeOut();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.writeOut();
    this.closed = true;
    closeSync(this.fd);
  }
}

function writeFully(fd: number, buf: Buffer): void {
  let off = 0;
  while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
}

/** A file; `.gz` compresses (a resumed export appends a new gzip member, which gzip readers accept). */
export function fileSink(path: string, options: { append?: boolean } = {}): Sink {
  mkdirSync(dirname(path), { recursive: true });
  if (!path.endsWith('.gz')) return new BlockFileSink(path, options.append ?? false);
  const file = createWriteStream(path, { flags: options.append ? 'a' : 'w', highWaterMark: 1 << 20 });
  {
    // Level 1: an export is usually limited by the compressor, and level 1 already shrinks JSON several times.
    const gzip = createGzip({ level: 1 });
    gzip.pipe(file);
    return new StreamSink(gzip, true, gzip, file);
  }
}

/** File name of one slice in `--output-dir`. */
export function sliceFileName(dir: string, slice: number, extension: string): string {
  return join(dir, `slice-${String(slice).padStart(4, '0')}.${extension}`);
}
