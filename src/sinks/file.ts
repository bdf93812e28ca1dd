import { once } from 'node:events';
import { closeSync, createWriteStream, mkdirSync, openSync, write } from 'node:fs';
import { dirname, join } from 'node:path';
import { createGzip, constants as zlibConstants, type Gzip } from 'node:zlib';
import { DirectFileSink } from './direct-file.js';

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
  readonly directIo = false;
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
 * A plain file, written in 1 MiB blocks with two staging buffers: while one block is being written by the
 * thread pool, the next one fills. On this kind of machine copying a gigabyte into the page cache costs two
 * seconds of system time; done on the main thread (writeSync) that time is taken from reading the HTTP
 * responses, done beside it the two overlap. Only one write is in flight at a time, so the file keeps the
 * order of the blocks; when both buffers are full, `write` returns a promise, which slows the HTTP reads.
 * Used where direct writes (direct-file.ts) are not: devices, pipes, file systems or platforms without O_DIRECT,
 * and `VESPA_BULK_DIRECT_IO=0`.
 */
class BlockFileSink implements Sink {
  bytes = 0;
  readonly directIo = false;
  private readonly fd: number;
  private filling: Buffer;
  private spare: Buffer;
  private used = 0;
  private inFlight: Promise<void> | undefined;
  private failure: Error | undefined;
  private closed = false;

  constructor(path: string, append: boolean, blockBytes = 1 << 20) {
    this.fd = openSync(path, append ? 'a' : 'w');
    this.filling = Buffer.allocUnsafe(blockBytes);
    this.spare = Buffer.allocUnsafe(blockBytes);
  }

  write(chunks: readonly Buffer[]): void | Promise<void> {
    if (this.closed) throw new Error('output closed');
    if (this.failure) throw this.failure;
    for (let i = 0; i < chunks.length; i++) {
      const c = chunks[i]!;
      if (this.used + c.length > this.filling.length && this.used > 0) {
        // The block is full: hand it off, or wait for the previous hand-off and take the rest later.
        if (this.inFlight !== undefined) return this.inFlight.then(() => this.write(chunks.slice(i)));
        this.handOff();
      }
      if (c.length >= this.filling.length) {
        // Larger than a block: written as it is, in order after what is in flight.
        if (this.inFlight !== undefined) return this.inFlight.then(() => this.write(chunks.slice(i)));
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
      await this.inFlight;
    }
    if (this.failure) throw this.failure;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.flushed();
    this.closed = true;
    closeSync(this.fd);
  }
}

/** A file sink; `directIo` says whether its writes bypass the page cache. */
export interface FileSink extends Sink {
  readonly directIo: boolean;
}

export interface FileSinkOptions {
  /** Appends to an existing file (a resumed export) instead of truncating it. Default false. */
  append?: boolean;
  /**
   * Writes a plain (not `.gz`) regular file with O_DIRECT, which spares the system time of copying every byte
   * into the page cache (see direct-file.ts). Silently falls back to ordinary writes where O_DIRECT does not
   * exist or is refused (other platforms, some file systems, devices such as /dev/null). Default: true, unless
   * the environment variable `VESPA_BULK_DIRECT_IO` is `0` (`1` turns it back on).
   */
  directIo?: boolean;
}

function directIoWanted(option: boolean | undefined): boolean {
  if (option !== undefined) return option;
  return process.env.VESPA_BULK_DIRECT_IO !== '0';
}

/** A file; `.gz` compresses (a resumed export appends a new gzip member, which gzip readers accept). */
export function fileSink(path: string, options: FileSinkOptions = {}): FileSink {
  mkdirSync(dirname(path), { recursive: true });
  const append = options.append ?? false;
  if (!path.endsWith('.gz')) {
    return (directIoWanted(options.directIo) ? DirectFileSink.open(path, append) : undefined) ?? new BlockFileSink(path, append);
  }
  const file = createWriteStream(path, { flags: append ? 'a' : 'w', highWaterMark: 1 << 20 });
  // Level 1: an export is usually limited by the compressor, and level 1 already shrinks JSON several times.
  const gzip = createGzip({ level: 1 });
  gzip.pipe(file);
  return new StreamSink(gzip, true, gzip, file);
}

/** File name of one slice in `--output-dir`. */
export function sliceFileName(dir: string, slice: number, extension: string): string {
  return join(dir, `slice-${String(slice).padStart(4, '0')}.${extension}`);
}
