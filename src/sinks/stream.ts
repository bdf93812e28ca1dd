import { once } from 'node:events';
import { constants as zlibConstants, type Gzip } from 'node:zlib';
import type { Sink } from './sink.js';

const empty = Buffer.alloc(0);

/**
 * A writable stream (stdout, a pipe, or a gzip stream piped into a file): the stream's own buffering, with
 * `write` waiting for 'drain' when the stream says it is full.
 */
export class StreamSink implements Sink {
  bytes = 0;
  private closed = false;
  private failure: Error | undefined;
  private draining: Promise<void> | undefined;

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

  /**
   * One wait for 'drain' shared by every writer the full stream holds back. A visit's slices write at once, and
   * a listener pair each (what `once()` adds) passed the stream's limit of ten: Node printed a warning of a
   * listener leak to a user piping an export into a slower reader. It ends at 'drain', or at 'error' with it.
   */
  private drain(): Promise<void> {
    this.draining ??= new Promise<void>((resolve, reject) => {
      const stream = this.stream;
      const onDrain = (): void => {
        stream.removeListener('error', onError);
        this.draining = undefined;
        resolve();
      };
      const onError = (err: Error): void => {
        stream.removeListener('drain', onDrain);
        this.draining = undefined;
        reject(err);
      };
      stream.once('drain', onDrain);
      stream.once('error', onError);
    });
    return this.draining;
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
    // Set by the stream's error listener during the wait, which the type narrowing above cannot know.
    // eslint-disable-next-line @typescript-eslint/only-throw-error
    if (this.failure) throw this.failure;
  }
}

/** Standard output (or another stream the caller owns): flushed at the end, never closed. */
export function stdoutSink(stream: NodeJS.WritableStream = process.stdout): Sink {
  return new StreamSink(stream, false);
}
