import { COMMA, LBRACE, LBRACKET, QUOTE, RBRACE, RBRACKET, isWhitespace, topLevelValue } from './json-scan.js';

/**
 * Where a JSON array of operations goes on after an element that could not be read.
 *
 * The rule: the first `{` after the broken element's first byte that begins an operation, meaning an object
 * that (scanned afresh from that `{`, its strings respected) closes, is followed by `,` or `]`, parses as JSON,
 * and has a top-level `put`, `update` or `remove`. Its position is found by bytes alone, not by the broken
 * element's string state: an unbalanced quote inverts which bytes are "in a string" for everything after it,
 * so the next operation may well look like string content from there. A `{` inside a string value that
 * happens to hold a whole operation followed by a comma is the one case this takes for an operation; a
 * document field rarely holds that.
 *
 * A candidate that has not closed within `resyncWindowBytes` is not one: otherwise the first `{` of the broken
 * element (its `fields`, say), which may never close, would hold the search, and the bytes, to the input's end.
 *
 * A candidate that begins before `brokeAt` (where the broken element was seen to break) and does not close before
 * it is not one either: it holds the break.
 *
 * `from`: where to look from (a candidate before it was ruled out). Returns the operation's start, or where to
 * look from when more bytes arrive (a candidate that goes on past `buf`); with `atEnd`, nothing more comes.
 */
export function resyncPoint(
  buf: Buffer,
  from: number,
  atEnd: boolean,
  brokeAt = Number.POSITIVE_INFINITY,
): { at?: number; resumeFrom: number } {
  for (let c = buf.indexOf(LBRACE, from); c >= 0; c = buf.indexOf(LBRACE, c + 1)) {
    const verdict = beginsOperation(buf, c, c < brokeAt ? brokeAt : Number.POSITIVE_INFINITY);
    if (verdict === 'yes') return { at: c, resumeFrom: c };
    if (verdict === 'more' && !atEnd) return { resumeFrom: c };
  }
  return { resumeFrom: Math.max(from, buf.length) };
}

/** How far a candidate may go on unclosed: operations are mostly far smaller; one larger that follows a broken one is read as part of it. */
export const resyncWindowBytes = 1 << 20;

const OPERATION_KEYS = ['put', 'update', 'remove'];

function beginsOperation(buf: Buffer, c: number, closeBefore: number): 'yes' | 'no' | 'more' {
  const closers: number[] = [RBRACE];
  let j = c + 1;
  const n = Math.min(buf.length, c + resyncWindowBytes, closeBefore);
  while (j < n) {
    const b = buf[j];
    if (b === QUOTE) {
      j = stringEnd(buf, j + 1);
      if (j < 0 || j > n) return n < buf.length ? 'no' : 'more';
      continue;
    }
    if (b === LBRACE) closers.push(RBRACE);
    else if (b === LBRACKET) closers.push(RBRACKET);
    else if (b === RBRACE || b === RBRACKET) {
      if (closers.pop() !== b) return 'no';
      if (closers.length === 0) break;
    }
    j++;
  }
  if (j >= n) return n < buf.length ? 'no' : 'more';
  let k = j + 1;
  while (k < buf.length && isWhitespace(buf[k])) k++;
  if (k >= buf.length) return 'more';
  if (buf[k] !== COMMA && buf[k] !== RBRACKET) return 'no';
  try {
    const value: unknown = JSON.parse(buf.toString('utf8', c, j + 1));
    if (typeof value !== 'object' || value === null) return 'no';
    return OPERATION_KEYS.some((key) => topLevelValue(buf, c, j + 1, key) !== undefined) ? 'yes' : 'no';
  } catch {
    return 'no';
  }
}

/** Index after the closing quote of a string whose content starts at `i`, or -1 when it goes past `buf`. */
function stringEnd(buf: Buffer, i: number): number {
  for (;;) {
    const q = buf.indexOf(QUOTE, i);
    if (q < 0) return -1;
    let k = q - 1;
    let run = 0;
    while (k >= i && buf[k] === 0x5c) {
      run++;
      k--;
    }
    if ((run & 1) === 0) return q + 1;
    i = q + 1;
  }
}
