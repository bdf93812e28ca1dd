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

/** A file sink; `directIo` says whether its writes bypass the page cache. */
export interface FileSink extends Sink {
  readonly directIo: boolean;
  /**
   * The file's length once everything given to `write` so far is in it; resolves when those bytes have reached
   * the operating system. A checkpoint reads it in the same turn as the state it saves, so a resumed export can
   * cut the file back to exactly what that state covers (after a SIGKILL the file may hold more). A compressed
   * file ends its gzip member here, so the length falls between members, where a cut leaves a valid file.
   */
  lengthAtCut(): Promise<number>;
}
