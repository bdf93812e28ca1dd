import { VespaBulkError } from './errors.js';
import {
  BACKSLASH,
  COLON,
  COMMA,
  LBRACE,
  LBRACKET,
  NEWLINE,
  QUOTE,
  RBRACE,
  RBRACKET,
  isWhitespace,
} from './json-scan.js';
import { resyncPoint } from './array-resync.js';

/**
 * Cuts a byte stream of feed input into one buffer per operation, without parsing the documents.
 *
 * The format is chosen by the first byte that is not whitespace: `[` is a JSON array of operations; `{` is a
 * stream of objects. When the first object ends on its own line the input is taken as JSONL and from then on
 * every line is one operation, so a broken line costs only that line. Otherwise (pretty-printed objects
 * separated by whitespace) boundaries are found by bracket depth, skipping strings.
 */
export interface RawItem {
  /** The operation's bytes, verbatim (for a framing error: the text that could not be read, up to its line end). */
  bytes: Buffer;
  /** 1-based line of the first byte. */
  line: number;
  /** Byte offset of the first byte in the (decompressed) input. */
  offset: number;
  /** Set when the bytes could not be cut into an operation. */
  error?: VespaBulkError;
  /** Before the resume point of a checkpoint: counted, not fed. */
  skip?: boolean;
  /** With a transform: the input operation's bytes, when `bytes` are an operation the transform returned for it. */
  source?: Buffer;
  /** With a transform: it returned no operation for this one (counted as dropped, not fed). */
  dropped?: boolean;
  /** How far the item reaches in offsets, when not its bytes' length: 1 for a table's row, whose offset is its index. */
  span?: number;
}

type Mode = 'detect' | 'lines' | 'objects' | 'array';
type ArrayState = 'value' | 'separator' | 'done';

/** The input's format as a splitter in each mode knows it: `unknown` until its first byte. */
const formatOfMode: Record<Mode, OperationSplitter['format']> = {
  detect: 'unknown',
  lines: 'jsonl',
  objects: 'objects',
  array: 'array',
};

export class OperationSplitter {
  private mode: Mode = 'detect';
  private arrayState: ArrayState = 'value';
  private firstObject = true;
  /** Where the array's last ',' was, while no operation has followed it: a ']' there is a trailing comma. */
  private comma: { line: number; offset: number } | undefined;
  /** Absolute offset of the current chunk's first byte. */
  private base = 0;
  private line = 1;
  /** Bytes of the operation (or line) in progress from earlier chunks. */
  private parts: Buffer[] = [];

  /** `start`: where the bytes pushed begin in the input, when reading starts mid-input (a ranged resume). */
  constructor(start?: { offset: number; line: number }) {
    if (start !== undefined) {
      this.base = start.offset;
      this.line = start.line;
    }
  }
  private itemOffset = 0;
  private itemLine = 1;
  private itemNewlines = 0;
  /** Brackets open in the operation in progress: the closer each one expects. */
  private closers: number[] = [];
  private inString = false;
  /** A string's trailing backslash run at a chunk end was odd: the next byte is escaped. */
  private pendingEscape = false;
  /** Inside garbage text being skipped to the end of its line. */
  private inGarbage = false;
  private garbageReason = '';
  /**
   * In an array, after an operation that could not be read: its bytes from its start, held until the next
   * operation is found (`core/array-resync.ts`), so one broken element is one failure and the rest is read on.
   */
  private resync:
    | {
        parts: Buffer[];
        length: number;
        reason: string;
        at: number;
        /** The held bytes from `searchStart` on, where the next operation is looked for: bounded by the window. */
        search: Buffer;
        searchStart: number;
      }
    | undefined;
  /** In an array, an object began where a ',' was due: it is read, and fails for it. */
  private missingComma = false;

  get format(): 'jsonl' | 'objects' | 'array' | 'unknown' {
    return formatOfMode[this.mode];
  }

  /** Cuts `chunk`, appending complete items to `out`. */
  push(chunk: Buffer, out: RawItem[]): void {
    // Computed first: a resync reads the rest of the chunk again from an earlier base, and ends here too.
    const end = this.base + chunk.length;
    let i = 0;
    const n = chunk.length;
    while (i < n) {
      if (this.resync !== undefined) {
        this.resyncPush(chunk.subarray(i), out, false);
        break;
      }
      if (this.mode === 'lines') i = this.pushLines(chunk, i, out);
      else if (this.inGarbage) i = this.skipGarbage(chunk, i, out);
      else if (this.closers.length > 0) i = this.scanObject(chunk, i, out);
      else i = this.between(chunk, i, out);
    }
    this.base = end;
  }

  /** Flushes what remains at the end of the input. */
  end(out: RawItem[]): void {
    if (this.resync !== undefined) {
      this.resyncPush(Buffer.alloc(0), out, true);
      this.end(out);
      return;
    }
    if (this.mode === 'array' && this.closers.length > 0 && !this.inGarbage) {
      const bytes = Buffer.concat(this.parts);
      this.parts = [];
      this.closers = [];
      this.inString = false;
      this.enterResync('invalid JSON: unterminated operation', bytes.length);
      this.resyncPush(bytes, out, true);
      this.end(out);
      return;
    }
    if (this.mode === 'lines') {
      if (this.parts.length > 0) this.emitLine(Buffer.concat(this.parts), out);
      this.parts = [];
      return;
    }
    if (this.inGarbage) {
      this.emitError(Buffer.concat(this.parts), this.garbageReason, out);
    } else if (this.closers.length > 0) {
      this.emitError(Buffer.concat(this.parts), 'unterminated operation at end of input', out);
    } else if (this.mode === 'array' && this.arrayState !== 'done') {
      // The array's end is missing, so the input was cut between two operations: what followed is not here, and
      // the Go client fails on it too.
      out.push({
        bytes: Buffer.alloc(0),
        line: this.line,
        offset: this.base,
        error: new VespaBulkError('VB_BAD_JSON', "unterminated JSON array: the input ends before its closing ']'"),
      });
    }
    this.parts = [];
    this.closers = [];
  }

  /**
   * The input broke off (compressed data cut short or corrupt): the operation in progress, or nothing where the
   * break came between operations, becomes one failed item with `error`, since what follows the break is lost.
   */
  breakOff(error: VespaBulkError, out: RawItem[]): void {
    const lines = this.mode === 'lines';
    if (this.resync !== undefined) {
      this.parts = this.resync.parts;
      this.resync = undefined;
      this.inGarbage = true;
    }
    const partial = lines ? this.parts.length > 0 : this.inGarbage || this.closers.length > 0;
    let bytes = partial ? Buffer.concat(this.parts) : Buffer.alloc(0);
    let end = bytes.length;
    while (end > 0 && isWhitespace(bytes[end - 1])) end--;
    bytes = bytes.subarray(0, end);
    out.push({
      bytes,
      line: partial && !lines ? this.itemLine : this.line,
      offset: partial ? this.itemOffset : this.base,
      error,
    });
    this.parts = [];
    this.closers = [];
    this.inGarbage = false;
  }

  private pushLines(chunk: Buffer, i: number, out: RawItem[]): number {
    const nl = chunk.indexOf(NEWLINE, i);
    if (nl < 0) {
      if (this.parts.length === 0) this.itemOffset = this.base + i;
      this.parts.push(chunk.subarray(i));
      return chunk.length;
    }
    let bytes: Buffer;
    if (this.parts.length === 0) {
      this.itemOffset = this.base + i;
      bytes = chunk.subarray(i, nl);
    } else {
      this.parts.push(chunk.subarray(i, nl));
      bytes = Buffer.concat(this.parts);
      this.parts = [];
    }
    this.emitLine(bytes, out);
    this.line++;
    return nl + 1;
  }

  private emitLine(bytes: Buffer, out: RawItem[]): void {
    let end = bytes.length;
    while (end > 0 && isWhitespace(bytes[end - 1])) end--;
    let start = 0;
    while (start < end && isWhitespace(bytes[start])) start++;
    if (start === end) return;
    // Most lines end without whitespace: their bytes as they are, with no second view made of them.
    const item: RawItem = {
      bytes: end === bytes.length ? bytes : bytes.subarray(0, end),
      line: this.line,
      offset: this.itemOffset,
    };
    // A line that is not an object is reported here; one that is gets its full check in parseOperation.
    if (bytes[start] !== LBRACE) {
      item.error = new VespaBulkError('VB_BAD_JSON', 'not a JSON object');
    }
    out.push(item);
  }

  /** Between operations: whitespace, array punctuation, or the start of the next object. */
  private between(chunk: Buffer, i: number, out: RawItem[]): number {
    const n = chunk.length;
    while (i < n) {
      const b = chunk[i];
      if (b === NEWLINE) {
        this.line++;
        i++;
        continue;
      }
      if (isWhitespace(b)) {
        i++;
        continue;
      }
      if (this.mode === 'detect') {
        if (b === LBRACKET) {
          this.mode = 'array';
          i++;
          continue;
        }
        this.mode = b === LBRACE ? 'objects' : 'lines';
        if (this.mode === 'lines') return i;
      }
      if (this.mode === 'array') {
        if (this.arrayState === 'separator') {
          if (b === COMMA) {
            this.arrayState = 'value';
            this.comma = { line: this.line, offset: this.base + i };
            i++;
            continue;
          }
          if (b === RBRACKET) {
            this.arrayState = 'done';
            i++;
            continue;
          }
          if (b === LBRACE) this.missingComma = true;
          else return this.startResync(chunk, i, "invalid JSON: expected ',' or ']' between operations", out);
        }
        if (this.arrayState === 'done') return this.startGarbage(i, "text after the closing ']'");
        if (b === RBRACKET) {
          this.arrayState = 'done';
          if (this.comma !== undefined) this.emitTrailingComma(out);
          i++;
          continue;
        }
      }
      if (b !== LBRACE) {
        if (this.mode === 'array') return this.startResync(chunk, i, 'expected an operation object', out);
        return this.startGarbage(i, 'expected an operation object');
      }
      this.comma = undefined;
      this.closers.push(RBRACE);
      this.itemOffset = this.base + i;
      this.itemLine = this.line;
      this.itemNewlines = 0;
      this.parts = [];
      this.partStart = i;
      // Straight on, so an object whose '{' ends the chunk still has its first byte kept.
      return this.scanObject(chunk, i + 1, out);
    }
    return i;
  }

  /** Start of the current item within the current chunk (0 when it began in an earlier chunk). */
  private partStart = 0;

  private scanObject(chunk: Buffer, i: number, out: RawItem[]): number {
    const n = chunk.length;
    const start = this.parts.length === 0 ? this.partStart : 0;
    while (i < n) {
      if (this.inString) {
        const after = this.scanString(chunk, i);
        if (after < 0) {
          this.parts.push(chunk.subarray(start));
          return n;
        }
        i = after;
        continue;
      }
      const b = chunk[i];
      if (this.pendingBreak >= 0 && !isWhitespace(b)) {
        if (b !== RBRACE && b !== RBRACKET && b !== COMMA) return this.switchToLines(chunk, start, i, out);
        this.pendingBreak = -1;
      }
      if (b === QUOTE) {
        this.inString = true;
        this.pendingEscape = false;
        i++;
        continue;
      }
      if (b === LBRACE || b === LBRACKET) {
        // In an array, an operation cut short is seen at the next one's '{', where no value may begin: read on
        // from there at once, rather than take the rest of the array into it.
        if (this.mode === 'array' && !this.valueMayBegin(chunk, start, i))
          return this.brokenAt(chunk, start, i, b, out);
        this.closers.push(b === LBRACE ? RBRACE : RBRACKET);
      } else if (b === RBRACE || b === RBRACKET) {
        if (this.closers.pop() !== b) {
          if (this.mode === 'array') return this.brokenAt(chunk, start, i, b, out);
          // Broken nesting: give up on this operation up to the end of the current line and read on.
          this.closers = [];
          this.parts.push(chunk.subarray(start, i));
          this.inGarbage = true;
          this.garbageReason = `invalid JSON: unexpected '${String.fromCharCode(b)}'`;
          return i;
        }
        if (this.closers.length === 0) {
          const bytes =
            this.parts.length === 0
              ? chunk.subarray(start, i + 1)
              : Buffer.concat([...this.parts, chunk.subarray(0, i + 1)]);
          this.parts = [];
          const item: RawItem = { bytes, line: this.itemLine, offset: this.itemOffset };
          if (this.missingComma) {
            this.missingComma = false;
            item.error = new VespaBulkError(
              'VB_BAD_JSON',
              "invalid JSON: no ',' between this operation and the one before",
            );
          }
          out.push(item);
          if (this.mode === 'array') this.arrayState = 'separator';
          if (this.firstObject && this.mode === 'objects' && this.itemNewlines === 0) this.mode = 'lines';
          this.firstObject = false;
          return i + 1;
        }
      } else if (b === NEWLINE) {
        if (
          this.firstObject &&
          this.mode === 'objects' &&
          this.pendingBreak < 0 &&
          !this.continuesOnNextLine(chunk, start, i)
        ) {
          // The first object's line ends after a complete value: pretty-printed JSON only does that before a
          // closing bracket or a comma. The next byte that is not whitespace decides.
          this.pendingBreak = this.partsLength() + (i - start);
        }
        this.line++;
        this.itemNewlines++;
      }
      i++;
    }
    this.parts.push(chunk.subarray(start));
    return n;
  }

  /** Byte length of the object so far, from a break in its first line: -1 when there is none. */
  private pendingBreak = -1;

  private partsLength(): number {
    return this.partsLengthOf(this.parts);
  }

  private partsLengthOf(parts: Buffer[]): number {
    let n = 0;
    for (const p of parts) n += p.length;
    return n;
  }

  /** Whether a value may begin at `i`: after ':' in an object, after '[' or ',' in an array. */
  private valueMayBegin(chunk: Buffer, start: number, i: number): boolean {
    let last = -1;
    for (let k = i - 1; k >= start && last < 0; k--) if (!isWhitespace(chunk[k])) last = chunk[k]!;
    for (let p = this.parts.length - 1; p >= 0 && last < 0; p--) {
      const part = this.parts[p];
      for (let k = part.length - 1; k >= 0 && last < 0; k--) if (!isWhitespace(part[k])) last = part[k]!;
    }
    return this.closers.at(-1) === RBRACE ? last === COLON : last === LBRACKET || last === COMMA;
  }

  /** The operation in progress broke at `chunk[i]`: it is one failure, up to where the next one is found. */
  private brokenAt(chunk: Buffer, start: number, i: number, b: number, out: RawItem[]): number {
    this.closers = [];
    const held = this.parts;
    this.parts = [];
    this.enterResync(`invalid JSON: unexpected '${String.fromCharCode(b)}'`, this.partsLengthOf(held) + (i - start));
    for (const p of held) this.resyncPush(p, out, false, true);
    this.resyncPush(chunk.subarray(start), out, false);
    return chunk.length;
  }

  /** Garbage where an array's operation or separator was due: the start of a failure that ends at the next operation. */
  private startResync(chunk: Buffer, i: number, reason: string, out: RawItem[]): number {
    this.comma = undefined;
    this.itemOffset = this.base + i;
    this.itemLine = this.line;
    this.enterResync(reason, 0);
    this.resyncPush(chunk.subarray(i), out, false);
    return chunk.length;
  }

  /** From the current item's start (`itemOffset`, `itemLine`), held bytes go to the resync; `at`: where it broke. */
  private enterResync(reason: string, at: number): void {
    this.missingComma = false;
    this.inString = false;
    this.pendingEscape = false;
    this.resync = { parts: [], length: 0, reason, at, search: Buffer.alloc(0), searchStart: 0 };
  }

  /**
   * Adds `bytes` to the failure in progress and looks for the next operation in it. Found: the failure is
   * emitted up to it and reading goes on from it (those bytes read again as the array's). At the end of the
   * input without one, everything from the failure's start is that one failure, its lines named in its reason.
   */
  private resyncPush(bytes: Buffer, out: RawItem[], atEnd: boolean, holdOnly = false): void {
    const r = this.resync!;
    if (bytes.length > 0) {
      r.parts.push(bytes);
      r.length += bytes.length;
      r.search = r.search.length === 0 ? bytes : Buffer.concat([r.search, bytes]);
    }
    if (holdOnly) return;
    // The broken element's own first byte is no candidate.
    const found = resyncPoint(r.search, r.searchStart === 0 ? 1 : 0, atEnd, r.at - r.searchStart);
    if (found.at === undefined) {
      r.search = r.search.subarray(found.resumeFrom);
      r.searchStart += found.resumeFrom;
      if (!atEnd) return;
      const all = Buffer.concat(r.parts);
      this.resync = undefined;
      const lines = countNewlines(all, 0, all.length);
      const reason =
        lines > 0
          ? `${r.reason}; lines ${this.itemLine}-${this.itemLine + lines} could not be read as operations`
          : r.reason;
      this.emitError(all, reason, out);
      this.line = this.itemLine + lines;
      // What the failure swallowed included the array's end, or the input ends without it: either way it is said once.
      this.arrayState = 'done';
      this.mode = 'array';
      this.base = this.itemOffset + all.length;
      return;
    }
    const c = r.searchStart + found.at;
    const all = Buffer.concat(r.parts);
    this.resync = undefined;
    const reason = r.at < c ? r.reason : `invalid JSON: the operation is not closed before the next one`;
    let end = c;
    while (end > 0 && isWhitespace(all[end - 1])) end--;
    if (end > 0 && all[end - 1] === COMMA) end--;
    this.emitError(all.subarray(0, end), reason, out);
    this.line = this.itemLine + countNewlines(all, 0, c);
    this.base = this.itemOffset + c;
    this.mode = 'array';
    this.arrayState = 'value';
    this.comma = undefined;
    this.closers = [];
    this.parts = [];
    this.inGarbage = false;
    this.push(all.subarray(c), out);
  }

  /** JSONL after all: the first line was a broken operation. It becomes one item; the rest is read line by line. */
  private switchToLines(chunk: Buffer, start: number, i: number, out: RawItem[]): number {
    const all =
      this.parts.length === 0 ? chunk.subarray(start, i) : Buffer.concat([...this.parts, chunk.subarray(0, i)]);
    const bytes = all.subarray(0, this.pendingBreak);
    const line = this.line;
    this.parts = [];
    this.closers = [];
    this.pendingBreak = -1;
    this.mode = 'lines';
    this.firstObject = false;
    this.line = this.itemLine;
    this.emitLine(bytes, out);
    this.line = line;
    return i;
  }

  /** Whether the text before a line break inside an object ends where pretty-printed JSON breaks lines. */
  private continuesOnNextLine(chunk: Buffer, start: number, i: number): boolean {
    let last = -1;
    for (let k = i - 1; k >= start && last < 0; k--) if (!isWhitespace(chunk[k])) last = chunk[k]!;
    for (let p = this.parts.length - 1; p >= 0 && last < 0; p--) {
      const part = this.parts[p];
      for (let k = part.length - 1; k >= 0 && last < 0; k--) if (!isWhitespace(part[k])) last = part[k]!;
    }
    return last === COMMA || last === LBRACE || last === LBRACKET || last === COLON;
  }

  /** Inside a string: returns the index after its closing quote, or -1 when it goes on past this chunk. */
  private scanString(chunk: Buffer, i: number): number {
    let segment = i;
    let carried = this.pendingEscape ? 1 : 0;
    for (;;) {
      const q = chunk.indexOf(QUOTE, segment);
      if (q < 0) {
        let k = chunk.length - 1;
        let run = 0;
        while (k >= segment && chunk[k] === BACKSLASH) {
          run++;
          k--;
        }
        if (k < segment) run += carried;
        this.pendingEscape = (run & 1) === 1;
        return -1;
      }
      let k = q - 1;
      let run = 0;
      while (k >= segment && chunk[k] === BACKSLASH) {
        run++;
        k--;
      }
      if (k < segment) run += carried;
      carried = 0;
      if ((run & 1) === 0) {
        this.inString = false;
        this.pendingEscape = false;
        return q + 1;
      }
      segment = q + 1;
    }
  }

  /**
   * `[{...},]` is not JSON: the official Go client feeds what came before and then fails with a decode error
   * (exit 1). Here it is one failed item at the comma, so the input's place is named and the feed ends in 1.
   */
  private emitTrailingComma(out: RawItem[]): void {
    const { line, offset } = this.comma!;
    this.comma = undefined;
    out.push({
      bytes: Buffer.from(','),
      line,
      offset,
      error: new VespaBulkError('VB_BAD_JSON', "invalid JSON: trailing comma before the array's closing ']'"),
    });
  }

  private startGarbage(i: number, reason: string): number {
    this.comma = undefined;
    this.inGarbage = true;
    this.garbageReason = reason;
    this.itemOffset = this.base + i;
    this.itemLine = this.line;
    this.parts = [];
    this.partStart = i;
    return i;
  }

  /** Skips to the end of the line, which becomes one error item. */
  private skipGarbage(chunk: Buffer, i: number, out: RawItem[]): number {
    // Bytes before `i` are already in parts (or there are none): the garbage goes on from here.
    const nl = chunk.indexOf(NEWLINE, i);
    if (nl < 0) {
      this.parts.push(chunk.subarray(i));
      return chunk.length;
    }
    this.parts.push(chunk.subarray(i, nl));
    this.emitError(Buffer.concat(this.parts), this.garbageReason, out);
    this.parts = [];
    this.inGarbage = false;
    this.line++;
    return nl + 1;
  }

  private emitError(bytes: Buffer, reason: string, out: RawItem[]): void {
    let end = bytes.length;
    while (end > 0 && isWhitespace(bytes[end - 1])) end--;
    out.push({
      bytes: bytes.subarray(0, end),
      line: this.itemLine,
      offset: this.itemOffset,
      error: new VespaBulkError(
        reason.startsWith('invalid JSON') || reason.startsWith('unterminated') ? 'VB_BAD_JSON' : 'VB_BAD_OPERATION',
        reason,
      ),
    });
  }
}

function countNewlines(buf: Buffer, from: number, to: number): number {
  let n = 0;
  for (let i = buf.indexOf(NEWLINE, from); i >= 0 && i < to; i = buf.indexOf(NEWLINE, i + 1)) n++;
  return n;
}
