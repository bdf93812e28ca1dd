import { VespaBulkError } from './errors.js';

/**
 * Byte-level JSON scanning: enough to find where a value ends without building it. Strings are skipped with
 * the native `indexOf`, so documents made mostly of text cost little more than a memchr.
 */
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const LBRACE = 0x7b;
export const RBRACE = 0x7d;
export const LBRACKET = 0x5b;
export const RBRACKET = 0x5d;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const NEWLINE = 0x0a;

export function isWhitespace(b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

export function syntaxError(message: string, position: number): VespaBulkError {
  return new VespaBulkError('VB_BAD_JSON', `invalid JSON: ${message} at byte ${position}`, { place: { position } });
}

export function skipWhitespace(buf: Uint8Array, i: number, end: number): number {
  while (i < end && isWhitespace(buf[i])) i++;
  return i;
}

/** `i` at an opening quote; returns the index after the closing quote. */
export function skipString(buf: Buffer, i: number, end: number): number {
  let from = i + 1;
  for (;;) {
    const q = buf.indexOf(QUOTE, from);
    if (q < 0 || q >= end) throw syntaxError('unterminated string', i);
    let k = q - 1;
    let backslashes = 0;
    while (k > i && buf[k] === BACKSLASH) {
      backslashes++;
      k--;
    }
    if ((backslashes & 1) === 0) return q + 1;
    from = q + 1;
  }
}

/** Decodes the JSON string between `start` (opening quote) and `end` (after the closing quote). */
export function decodeString(buf: Buffer, start: number, end: number): string {
  if (!hasBackslash(buf, start, end)) return buf.toString('utf8', start + 1, end - 1);
  try {
    return JSON.parse(buf.toString('utf8', start, end)) as string;
  } catch {
    throw syntaxError('bad escape in string', start);
  }
}

/**
 * Whether `buf[start, end)` holds a backslash. A short string (a key, a document id) is looked through here:
 * `buf.indexOf` takes no end, and searched the rest of the buffer (the whole document after a key) every time.
 */
function hasBackslash(buf: Buffer, start: number, end: number): boolean {
  if (end - start > 256) {
    const at = buf.indexOf(BACKSLASH, start);
    return at >= 0 && at < end;
  }
  for (let i = start; i < end; i++) if (buf[i] === BACKSLASH) return true;
  return false;
}

/**
 * The string at `buf[start, end)` (quotes included) when it is one of `known` (as written, no escapes), without
 * decoding it: the same string each time, and no new one to hash. Else undefined.
 */
export function knownString(
  buf: Buffer,
  start: number,
  end: number,
  known: readonly KnownString[],
): string | undefined {
  const n = end - start - 2;
  for (let k = 0; k < known.length; k++) {
    const bytes = known[k].bytes;
    if (bytes.length !== n) continue;
    let j = 0;
    while (j < n && buf[start + 1 + j] === bytes[j]) j++;
    if (j === n) return known[k].text;
  }
  return undefined;
}

/** A string `knownString` looks for: its text, and its bytes (ASCII). */
export interface KnownString {
  text: string;
  bytes: Buffer;
}

export const knownStrings = (...texts: string[]): KnownString[] =>
  texts.map((text) => ({ text, bytes: Buffer.from(text, 'latin1') }));

/**
 * `i` at the first byte of a value; returns the index after it. Objects and arrays are checked for balanced,
 * correctly nested brackets and terminated strings, not for every comma: the service rejects what slips by
 * with a 400, which lands in the failure output like any other refusal.
 */
export function skipValue(buf: Buffer, i: number, end: number): number {
  const first = buf[i];
  if (first === QUOTE) return skipString(buf, i, end);
  if (first === LBRACE || first === LBRACKET) {
    const closers: number[] = [first === LBRACE ? RBRACE : RBRACKET];
    let j = i + 1;
    while (j < end) {
      const b = buf[j];
      if (b === QUOTE) {
        j = skipString(buf, j, end);
        continue;
      }
      if (b === LBRACE) closers.push(RBRACE);
      else if (b === LBRACKET) closers.push(RBRACKET);
      else if (b === RBRACE || b === RBRACKET) {
        if (closers.pop() !== b) throw syntaxError(`unexpected '${String.fromCharCode(b)}'`, j);
        if (closers.length === 0) return j + 1;
      }
      j++;
    }
    throw syntaxError(`unterminated ${first === LBRACE ? 'object' : 'array'}`, i);
  }
  let j = i;
  while (j < end) {
    const b = buf[j];
    if (b === COMMA || b === RBRACE || b === RBRACKET || isWhitespace(b)) break;
    j++;
  }
  if (j === i)
    throw syntaxError(first === undefined ? 'unexpected end' : `unexpected '${String.fromCharCode(first)}'`, i);
  try {
    JSON.parse(buf.toString('latin1', i, j));
  } catch {
    throw syntaxError(`bad value '${buf.toString('utf8', i, Math.min(j, i + 40))}'`, i);
  }
  return j;
}

/**
 * Where the value of `key` lies in the JSON object text buf[start, end), without building it; undefined when
 * the object has no such member.
 */
export function topLevelValue(
  buf: Buffer,
  start: number,
  end: number,
  key: string,
): { start: number; end: number } | undefined {
  let i = skipWhitespace(buf, start, end);
  if (buf[i] !== LBRACE) return undefined;
  i = skipWhitespace(buf, i + 1, end);
  while (buf[i] === QUOTE) {
    const keyEnd = skipString(buf, i, end);
    const name = decodeString(buf, i, keyEnd);
    i = skipWhitespace(buf, keyEnd, end);
    if (buf[i] !== COLON) return undefined;
    const valueStart = skipWhitespace(buf, i + 1, end);
    const valueEnd = skipValue(buf, valueStart, end);
    if (name === key) return { start: valueStart, end: valueEnd };
    i = skipWhitespace(buf, valueEnd, end);
    if (buf[i] !== COMMA) return undefined;
    i = skipWhitespace(buf, i + 1, end);
  }
  return undefined;
}
