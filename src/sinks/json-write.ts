import type { VisitEntry } from '../document/visit-entry.js';
import { topLevelValue } from '../core/json-scan.js';

/**
 * Visited documents as JSON text: the lines of `jsonl` and `feed` (see `OutputFormat`), and the one array of `json`.
 */

const NEWLINE = 0x0a;

/** A document as a feed operation (no newline). */
export function toFeedOperation(entry: VisitEntry): Buffer {
  if (entry.shape === 'feed') return entry.buf.subarray(entry.start, entry.end);
  // The fields' bytes are spliced in, not parsed and serialized again: that would round `long` values beyond 2^53.
  const fields = topLevelValue(entry.buf, entry.start, entry.end, 'fields');
  const head = Buffer.from(`{"put":${JSON.stringify(entry.id)},"fields":`);
  return Buffer.concat([
    head,
    fields === undefined ? emptyObject : entry.buf.subarray(fields.start, fields.end),
    closeBrace,
  ]);
}

const emptyObject = Buffer.from('{}');
const closeBrace = Buffer.from('}');

/**
 * Lines of a batch, newline-terminated, as few buffers as possible: runs of consecutive lines of one
 * received chunk go out as one slice of it.
 */
export function linesOf(entries: readonly VisitEntry[], format: 'jsonl' | 'feed'): Buffer[] {
  const out: Buffer[] = [];
  let runBuf: Buffer | undefined;
  let runStart = 0;
  let runEnd = 0;
  const flush = (): void => {
    if (runBuf !== undefined) out.push(runBuf.subarray(runStart, runEnd));
    runBuf = undefined;
  };
  for (const e of entries) {
    const passThrough = format === 'jsonl' || e.shape === 'feed';
    if (passThrough && e.end < e.buf.length && e.buf[e.end] === NEWLINE) {
      // The line and its newline are in the buffer: extend the run when it follows the previous line.
      if (runBuf === e.buf && runEnd === e.start) {
        runEnd = e.end + 1;
        continue;
      }
      flush();
      runBuf = e.buf;
      runStart = e.start;
      runEnd = e.end + 1;
      continue;
    }
    flush();
    out.push(passThrough ? e.buf.subarray(e.start, e.end) : toFeedOperation(e), newline);
  }
  flush();
  return out;
}

const newline = Buffer.from('\n');
const arrayOpen = Buffer.from('[\n');
const arrayClose = Buffer.from('\n]\n');
const separator = Buffer.from(',\n');

/** Frames the feed operations of an export as one JSON array; `first` tells whether any element preceded. */
export class JsonArrayWriter {
  private count = 0;

  /** Bytes of these entries, including the opening bracket before the first one. */
  entries(entries: readonly VisitEntry[]): Buffer[] {
    const out: Buffer[] = [];
    for (const e of entries) {
      out.push(this.count === 0 ? arrayOpen : separator, toFeedOperation(e));
      this.count++;
    }
    return out;
  }

  /** The closing bracket (an empty array when nothing was written). */
  end(): Buffer {
    return this.count === 0 ? Buffer.from('[]\n') : arrayClose;
  }
}
