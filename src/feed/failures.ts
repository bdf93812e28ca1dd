import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';

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

export class FailureWriter {
  private out: WriteStream | undefined;
  private reasons: WriteStream | undefined;
  private lines = 0;
  private error: Error | undefined;

  constructor(readonly path: string) {}

  get count(): number {
    return this.lines;
  }

  get reasonsPath(): string {
    return `${this.path}.reasons.jsonl`;
  }

  write(bytes: Buffer, reason: FailureReason, verbatim: boolean): void {
    if (this.out === undefined) {
      this.out = createWriteStream(this.path);
      this.reasons = createWriteStream(this.reasonsPath);
      this.out.on('error', (e) => (this.error = e));
      this.reasons.on('error', (e) => (this.error = e));
    }
    this.lines++;
    let line = bytes;
    if (!verbatim && (bytes.includes(0x0a) || bytes.includes(0x0d))) {
      line = Buffer.from(bytes);
      for (let i = 0; i < line.length; i++) if (line[i] === 0x0a || line[i] === 0x0d) line[i] = 0x20;
    }
    this.out.write(line);
    this.out.write('\n');
    this.reasons!.write(`${JSON.stringify({ line: this.lines, ...reason })}\n`);
  }

  /** Resolves when the files have room again, so a flood of failures cannot fill memory. */
  async drained(): Promise<void> {
    if (this.out?.writableNeedDrain) await once(this.out, 'drain');
    if (this.reasons?.writableNeedDrain) await once(this.reasons, 'drain');
  }

  async close(): Promise<void> {
    for (const s of [this.out, this.reasons]) {
      if (s === undefined) continue;
      s.end();
      if (!s.writableFinished) await once(s, 'finish').catch(() => undefined);
    }
    if (this.error) throw this.error;
  }
}

/** Name of the failure file when none is given: in the working directory, unique per second. */
export function defaultFailuresPath(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  return `vespa-bulk-failures-${stamp}.jsonl`;
}
