import {
  COLON,
  COMMA,
  LBRACE,
  QUOTE,
  decodeString,
  skipString,
  skipValue,
  skipWhitespace,
} from '../../core/json-scan.js';
import { fnv1a } from '../shard.js';

const idKeys = new Set(['put', 'id', 'update', 'remove']);

/**
 * The document id of an operation's bytes, found by scanning keys only (the `fields` value is skipped, not
 * parsed), or undefined when the bytes are not an operation with a string id. The worker that gets the
 * operation parses it in full and reports what is wrong with it.
 */
export function routeId(buf: Buffer): string | undefined {
  const end = buf.length;
  try {
    let i = skipWhitespace(buf, 0, end);
    if (buf[i] !== LBRACE) return undefined;
    i = skipWhitespace(buf, i + 1, end);
    while (buf[i] === QUOTE) {
      const keyEnd = skipString(buf, i, end);
      const key = decodeString(buf, i, keyEnd);
      i = skipWhitespace(buf, keyEnd, end);
      if (buf[i] !== COLON) return undefined;
      const valueStart = skipWhitespace(buf, i + 1, end);
      const valueEnd = skipValue(buf, valueStart, end);
      if (idKeys.has(key)) return buf[valueStart] === QUOTE ? decodeString(buf, valueStart, valueEnd) : undefined;
      i = skipWhitespace(buf, valueEnd, end);
      if (buf[i] !== COMMA) return undefined;
      i = skipWhitespace(buf, i + 1, end);
    }
  } catch {
    // Bad JSON: the worker's parse names the error.
  }
  return undefined;
}

/**
 * Which of `workers` feeds the operation on `id`: the same id always the same worker, so its operations keep
 * their order. The FNV-1a hash is `--shard`'s; its high bits, mixed, are used here, so that a shard (which
 * holds only ids of one residue) still spreads over all workers.
 */
export function workerOf(id: string | undefined, workers: number): number {
  if (id === undefined || workers === 1) return 0;
  const mixed = Math.imul(fnv1a(id), 0x9e3779b1) >>> 0;
  return Math.floor((mixed / 0x1_0000_0000) * workers);
}
