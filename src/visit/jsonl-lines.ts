/**
 * The JSONL visit stream on raw bytes: splitting a body into lines across chunk boundaries, and telling a
 * line's kind from its first key without parsing documents. Pure.
 *
 * The service writes each line as `{"<first key>":...}` with no whitespace; anything else falls back to a
 * full parse, so an unexpected but valid line is still understood.
 */

export type LineKind =
  | 'put'
  | 'remove'
  | 'continuation'
  | 'sessionStats'
  | 'sessionTrace'
  | 'message'
  | 'document'
  | 'other';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const NEWLINE = 0x0a;

const prefixes: Array<[Buffer, LineKind]> = [
  [Buffer.from('{"put":"'), 'put'],
  [Buffer.from('{"remove":"'), 'remove'],
  [Buffer.from('{"continuation":'), 'continuation'],
  [Buffer.from('{"sessionStats":'), 'sessionStats'],
  [Buffer.from('{"sessionTrace":'), 'sessionTrace'],
  [Buffer.from('{"message":'), 'message'],
];

function startsWith(buf: Uint8Array, start: number, end: number, prefix: Buffer): boolean {
  if (end - start < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (buf[start + i] !== prefix[i]) return false;
  return true;
}

/** A line's kind by its prefix alone; 'other' when the prefix is not one the service writes. */
export function classifyLinePrefix(buf: Uint8Array, start: number, end: number): LineKind {
  // The third byte tells the candidates apart, so most lines compare one prefix.
  const third = buf[start + 2];
  for (const [prefix, kind] of prefixes) {
    if (prefix[2] === third && startsWith(buf, start, end, prefix)) return kind;
  }
  return 'other';
}

/**
 * Kind of a parsed line, for the slow path. A `{"id":..,"fields":..}` object (the plain JSON shape) is a
 * 'document'.
 */
export function classifyParsedLine(value: unknown): LineKind {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'other';
  const o = value as Record<string, unknown>;
  if (typeof o.put === 'string') return 'put';
  if (typeof o.remove === 'string') return 'remove';
  if (typeof o.id === 'string') return 'document';
  if ('continuation' in o) return 'continuation';
  if ('sessionStats' in o) return 'sessionStats';
  if ('sessionTrace' in o) return 'sessionTrace';
  if ('message' in o) return 'message';
  return 'other';
}

/**
 * The id of a `{"put":"<id>"...` or `{"remove":"<id>"...` line: the string value starting at `valueStart`
 * (just after its opening quote). Escapes are decoded only when present.
 */
export function readStringValue(buf: Buffer, valueStart: number, end: number): string | undefined {
  let i = valueStart;
  let escaped = false;
  for (; i < end; i++) {
    const b = buf[i];
    if (b === QUOTE) break;
    if (b === BACKSLASH) {
      escaped = true;
      i++;
    }
  }
  if (i >= end) return undefined;
  const raw = buf.toString('utf8', valueStart, i);
  if (!escaped) return raw;
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return undefined;
  }
}

export const putPrefixLength = prefixes[0][0].length;
export const removePrefixLength = prefixes[1][0].length;

/**
 * Splits chunks into complete lines. Lines inside a chunk are reported as ranges of that chunk (no copy);
 * only a line that spans chunks is copied. The newline is excluded, and so is a '\r' before it.
 */
export class LineSplitter {
  private carry: Buffer[] = [];
  private carryLength = 0;

  /** Calls `onLine(buf, start, end)` for each line completed by this chunk. */
  push(chunk: Buffer, onLine: (buf: Buffer, start: number, end: number) => void): void {
    let pos = 0;
    if (this.carryLength > 0) {
      const nl = chunk.indexOf(NEWLINE);
      if (nl < 0) {
        this.carry.push(chunk);
        this.carryLength += chunk.length;
        return;
      }
      this.carry.push(chunk.subarray(0, nl));
      const line = Buffer.concat(this.carry, this.carryLength + nl);
      this.carry = [];
      this.carryLength = 0;
      emit(line, 0, line.length, onLine);
      pos = nl + 1;
    }
    while (pos < chunk.length) {
      const nl = chunk.indexOf(NEWLINE, pos);
      if (nl < 0) {
        const rest = chunk.subarray(pos);
        this.carry.push(rest);
        this.carryLength = rest.length;
        return;
      }
      emit(chunk, pos, nl, onLine);
      pos = nl + 1;
    }
  }

  /** Bytes of an unfinished last line: a body that ends with some is a cut stream. */
  get pendingBytes(): number {
    return this.carryLength;
  }

  /** The unfinished last line, when the body ends without a newline (a complete JSON line may lack one). */
  takeRest(): Buffer | undefined {
    if (this.carryLength === 0) return undefined;
    const line = Buffer.concat(this.carry, this.carryLength);
    this.carry = [];
    this.carryLength = 0;
    return line;
  }
}

function emit(
  buf: Buffer,
  start: number,
  end: number,
  onLine: (buf: Buffer, start: number, end: number) => void,
): void {
  let e = end;
  if (e > start && buf[e - 1] === 0x0d) e--;
  // Blank lines carry nothing.
  let s = start;
  while (s < e && (buf[s] === 0x20 || buf[s] === 0x09)) s++;
  if (s === e) return;
  onLine(buf, start, e);
}
