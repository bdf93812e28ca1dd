import { nameFault, valueFault, writeInt } from './hpack.js';

/**
 * The fields of a header block, checked (RFC 9113 8.2, 8.3; RFC 9110): what a request may send and how its
 * `:path` is written, and what an answer's fields may be. Pure functions, no state: the session (session.ts)
 * calls them as it writes and reads header blocks.
 */

/** What a request's `:path` may not hold: anything but visible latin1 (undici's rule for HTTP/1.1). */
const invalidPath = /[^\u0021-\u00ff]/;

/** `:status` as a number, or -1 unless exactly three ASCII digits (RFC 9110, 15). */
export function threeDigits(v: string): number {
  if (v.length !== 3) return -1;
  const a = v.charCodeAt(0) - 0x30;
  const b = v.charCodeAt(1) - 0x30;
  const c = v.charCodeAt(2) - 0x30;
  if (a < 0 || a > 9 || b < 0 || b > 9 || c < 0 || c > 9) return -1;
  return a * 100 + b * 10 + c;
}

/** Fields HTTP/2 forbids (RFC 9113, 8.2.2): they belong to HTTP/1.1's connection, which this is not. */
export function isConnectionSpecific(name: string): boolean {
  switch (name.length) {
    case 7:
      return name === 'upgrade';
    case 10:
      return name === 'connection' || name === 'keep-alive';
    case 16:
      return name === 'proxy-connection';
    case 17:
      return name === 'transfer-encoding';
    default:
      return false;
  }
}

/** Why trailers are malformed: a pseudo-header or a connection-specific field in them. */
export function trailersFault(fields: readonly string[]): string | undefined {
  for (let i = 0; i < fields.length; i += 2) {
    if (fields[i].charCodeAt(0) === 0x3a) return `the pseudo-header ${JSON.stringify(fields[i])} in trailers`;
    if (isConnectionSpecific(fields[i]))
      return `the connection-specific field ${JSON.stringify(fields[i])} in trailers`;
  }
  return undefined;
}

/** Why a request's `:path` may not be sent: empty, or not visible latin1 (a space, a control, a character beyond latin1 would go out as another byte). */
export function pathFault(path: string): string | undefined {
  return path.length === 0 || invalidPath.test(path)
    ? `the path ${JSON.stringify(path)} (HTTP/2 sends visible latin1 only)`
    : undefined;
}

/** Bytes `writePath` needs at most. */
export function pathFieldSize(path: string): number {
  return 12 + path.length;
}

/**
 * Writes `:path` as a literal never indexed (the static table's name 4: it changes with every request), checking
 * as it copies that each character is visible latin1; -1 when one is not (or the path is empty). One pass over the
 * path, where a check and then a copy were two: it is the one field of every request that is new.
 */
export function writePath(out: Buffer, at: number, path: string): number {
  const n = path.length;
  if (n === 0) return -1;
  at = writeInt(out, at, 4, 4, 0x10);
  at = writeInt(out, at, n, 7, 0);
  for (let i = 0; i < n; i++) {
    const c = path.charCodeAt(i);
    if (c <= 0x20 || c > 0xff) return -1;
    out[at++] = c;
  }
  return at;
}

/**
 * Why a request's fields may not be sent (RFC 9113, 8.2.1, 8.2.2): names in lower case without separators or
 * controls, pseudo-headers only in the pseudo list; values without NUL, CR, LF, whitespace at either end or
 * characters beyond latin1 (they would go out as other bytes); no connection-specific field.
 */
export function requestFieldsFault(fields: readonly string[], pseudo: boolean): string | undefined {
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i];
    const value = fields[i + 1];
    if (typeof name !== 'string' || typeof value !== 'string') return `a field that is not a string (${String(name)})`;
    if ((name.charCodeAt(0) === 0x3a) !== pseudo)
      return `the field name ${JSON.stringify(name)}${pseudo ? ' (not a pseudo-header)' : ' (a pseudo-header among the headers)'}`;
    const fault = nameFault(name) ?? valueFault(name, value);
    if (fault !== undefined) return fault;
    for (let j = 0; j < value.length; j++)
      if (value.charCodeAt(j) > 0xff) return `the value of ${JSON.stringify(name)} (a character beyond latin1)`;
    if (!pseudo && (isConnectionSpecific(name) || (name === 'te' && value !== 'trailers')))
      return `the connection-specific field ${JSON.stringify(name)}`;
  }
  return undefined;
}

/** What an answer's header block says: `:status`, and content-length (-1 without one). */
export interface AnswerHead {
  status: number;
  contentLength: number;
}

/**
 * Why an answer's header block is malformed (RFC 9113 8.3.2, 8.2.2), or undefined with `head` filled in. The
 * regular fields are moved to the front of `fields`, which is cut to them: the answer's headers, written at
 * `kept` <= i, behind what is read, with no list of their own. A 1xx status is given as it is (the caller tells
 * an interim answer from the real one).
 */
export function readAnswerHead(fields: string[], head: AnswerHead): string | undefined {
  let status = -1;
  let regular = false;
  let contentLength = -1;
  let kept = 0;
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i];
    const value = fields[i + 1];
    if (name.charCodeAt(0) === 0x3a) {
      if (name !== ':status') return `the pseudo-header ${JSON.stringify(name)} in an answer`;
      if (status !== -1) return 'two :status';
      if (regular) return 'a pseudo-header after a regular field';
      status = threeDigits(value);
      if (status < 100) return `:status ${JSON.stringify(value)} (three digits from 100)`;
    } else {
      regular = true;
      if (isConnectionSpecific(name)) return `the connection-specific field ${JSON.stringify(name)}`;
      if (name === 'content-length') {
        const n = /^[0-9]{1,15}$/.test(value) ? Number(value) : -1;
        if (n < 0 || (contentLength !== -1 && contentLength !== n)) return `content-length ${JSON.stringify(value)}`;
        contentLength = n;
      }
      fields[kept++] = name;
      fields[kept++] = value;
    }
  }
  fields.length = kept;
  if (status === -1) return 'no :status';
  if (status === 101) return 'status 101, which HTTP/2 does not have';
  head.status = status;
  head.contentLength = contentLength;
  return undefined;
}
