import { createWriteStream, fsync, rmSync, statSync, truncateSync, type WriteStream } from 'node:fs';
import { VespaBulkError } from '../core/errors.js';
import { prepareOutputFile } from '../fs/output-file.js';

/**
 * The failure output. Two files, written in step:
 *
 * - `<file>`: every operation that finally failed, one per line, as valid feed input (JSONL) that can be fed
 *   again unchanged. An operation that was read fine is its original bytes with line breaks turned into
 *   spaces (JSON allows no raw line break inside a string, so this changes nothing); text that could not be
 *   read is kept verbatim so the user can mend it.
 * - `<file>.reasons.jsonl`: line N says why line N of `<file>` failed:
 *   `{"line","input","inputLine","id","operation","status","message","attempts","code"}`.
 *
 * The reason is not added to the operation itself because any key other than the operation's own is an
 * error in feed input. Files are created only when the first failure arrives.
 */
export interface FailureReason {
  /** Input file (or `-`, `<stream>`, `<iterable>`) and 1-based line there. */
  input: string;
  inputLine: number;
  id?: string;
  operation?: string;
  /** Last HTTP status, if any answer came. */
  status?: number;
  message: string;
  attempts: number;
  /** VespaBulkError code for errors that are not HTTP answers (VB_BAD_JSON, VB_TRANSPORT, ...). */
  code?: string;
}

/**
 * How much of the failure output a checkpoint counts: lines and the byte lengths of both files after them.
 * A resumed feed cuts the files back to these lengths, so an operation that failed after the checkpoint (and
 * is sent again) is not in the output twice.
 */
export interface FailureMark {
  lines: number;
  bytes: number;
  reasonsBytes: number;
}

export class FailureWriter {
  private out: WriteStream | undefined;
  private reasons: WriteStream | undefined;
  private lines = 0;
  private bytes = 0;
  private reasonsBytes = 0;
  private error: Error | undefined;
  private closed = false;

  /**
   * With `resumeAt`, the files of an earlier run are kept up to the mark (anything after it is cut off) and
   * appended to; throws VB_USAGE when they hold less than the mark (lost or replaced since). Otherwise files
   * left by an earlier run are removed at once: kept until the first failure, they would list operations that
   * this run may well feed.
   */
  constructor(
    readonly path: string,
    resumeAt?: FailureMark,
  ) {
    prepareOutputFile(path, 'failure output');
    if (resumeAt === undefined || resumeAt.lines === 0) {
      rmSync(path, { force: true });
      rmSync(this.reasonsPath, { force: true });
      return;
    }
    for (const [file, length] of [
      [path, resumeAt.bytes],
      [this.reasonsPath, resumeAt.reasonsBytes],
    ] as const) {
      try {
        const size = statSync(file).size;
        if (size < length) throw new Error(`it holds ${size} bytes, the checkpoint counts ${length}`);
        truncateSync(file, length);
      } catch (err) {
        throw new VespaBulkError(
          'VB_USAGE',
          `cannot continue the failure output '${file}' of the checkpoint: ${(err as Error).message}`,
          { cause: err },
        );
      }
    }
    this.lines = resumeAt.lines;
    this.bytes = resumeAt.bytes;
    this.reasonsBytes = resumeAt.reasonsBytes;
    this.open('a');
  }

  get count(): number {
    return this.lines;
  }

  get reasonsPath(): string {
    return `${this.path}.reasons.jsonl`;
  }

  /** What has been handed to the files so far (maybe not yet on disk: `sync()` sees to that). */
  mark(): FailureMark {
    return { lines: this.lines, bytes: this.bytes, reasonsBytes: this.reasonsBytes };
  }

  private open(flags: 'w' | 'a'): void {
    this.out = createWriteStream(this.path, { flags });
    this.reasons = createWriteStream(this.reasonsPath, { flags });
    this.out.on('error', (e) => (this.error ??= this.unwritable(e)));
    this.reasons.on('error', (e) => (this.error ??= this.unwritable(e)));
  }

  /** A write that failed, as the error that ends the feed: the failures from here on are recorded nowhere. */
  private unwritable(cause: Error): VespaBulkError {
    return new VespaBulkError('VB_TRANSPORT', `the failure output '${this.path}' cannot be written: ${cause.message}`, {
      cause,
      place: { file: this.path },
    });
  }

  /** Why the files cannot be written, once a write failed. */
  get failed(): Error | undefined {
    return this.error;
  }

  write(bytes: Buffer, reason: FailureReason, verbatim: boolean): void {
    if (this.out === undefined) this.open('w');
    this.lines++;
    let line = bytes;
    if (!verbatim && (bytes.includes(0x0a) || bytes.includes(0x0d))) {
      line = Buffer.from(bytes);
      for (let i = 0; i < line.length; i++) if (line[i] === 0x0a || line[i] === 0x0d) line[i] = 0x20;
    }
    this.out!.write(line);
    this.out!.write('\n');
    const text = `${JSON.stringify({ line: this.lines, ...reason })}\n`;
    this.reasons!.write(text);
    this.bytes += line.length + 1;
    this.reasonsBytes += Buffer.byteLength(text);
  }

  /**
   * Resolves once everything written so far is on disk (written and fsync'd), so a checkpoint that counts
   * these failures may be saved: after a crash the checkpoint never counts a failure the file lacks.
   */
  async sync(): Promise<void> {
    if (this.closed) return;
    for (const s of [this.out, this.reasons]) {
      if (s === undefined) continue;
      this.throwIfFailed();
      // Writes complete in order: the callback of an empty write comes after every earlier one is written. A
      // stream that failed (its file could not be opened) may call it never: its close ends the wait.
      await untilClosedOr(s, (done) => s.write(Buffer.alloc(0), () => done()));
      this.throwIfFailed();
      const fd = (s as WriteStream & { fd: number | null }).fd;
      if (typeof fd === 'number')
        await new Promise<void>((resolve, reject) => fsync(fd, (e) => (e ? reject(e) : resolve())));
    }
  }

  /** Resolves when the files have room again, so a flood of failures cannot fill memory. */
  async drained(): Promise<void> {
    // A stream that failed never drains: the feed stops here, rather than wait for ever (exit 13, nothing said).
    for (const s of [this.out, this.reasons]) {
      this.throwIfFailed();
      // Not a race of two once(): the loser's listeners stayed on the stream, and a long feed of failures on a
      // slow disk passed the limit of ten (Node's warning of a listener leak, on the user's stderr).
      if (s?.writableNeedDrain) await untilClosedOr(s, (done) => s.once('drain', done));
    }
    this.throwIfFailed();
  }

  private throwIfFailed(): void {
    if (this.error !== undefined) throw this.error;
  }

  /** Syncs (see `sync()`) and closes the files. */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.sync().catch((e: Error) => (this.error ??= e));
    this.closed = true;
    for (const s of [this.out, this.reasons]) {
      if (s === undefined) continue;
      if (!s.destroyed) await untilClosedOr(s, (done) => s.end(() => done()));
    }
    if (this.error) throw this.error;
  }
}

/** Resolves when `start`'s callback comes, or `stream` closes (a failed stream never calls back). */
function untilClosedOr(stream: WriteStream, start: (done: () => void) => void): Promise<void> {
  if (stream.destroyed) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = (): void => {
      stream.off('close', done);
      resolve();
    };
    stream.once('close', done);
    start(done);
  });
}
