import { VespaBulkError } from '../core/errors.js';

/**
 * Document ids and their /document/v1 paths. Pure: no I/O.
 *
 * id:<namespace>:<type>:<kv>:<local>, where kv is empty, n=<signed 64-bit> or g=<group>, and the local
 * part may itself contain ':' and '/'.
 */
export type DocumentId =
  | { namespace: string; type: string; kind: 'plain'; local: string }
  | { namespace: string; type: string; kind: 'number'; number: string; local: string }
  | { namespace: string; type: string; kind: 'group'; group: string; local: string };

export const maxDocumentIdLength = 65536;

const int64Min = -(2n ** 63n);
const int64Max = 2n ** 63n - 1n;

// Control characters other than tab, LF and CR are refused by the service.

const forbiddenControl = /[\u0000-\u0008\u000b\u000c\u000e-\u001f]/;
// With the u flag this matches only unpaired surrogates: text that has no UTF-8 form and cannot be URL-encoded.
const loneSurrogate = /[\ud800-\udfff]/u;

function bad(id: string, reason: string): VespaBulkError {
  return new VespaBulkError('VB_BAD_DOCUMENT_ID', `invalid document id '${truncate(id)}': ${reason}`, {
    place: { documentId: id },
  });
}

function truncate(s: string): string {
  return s.length > 200 ? `${s.slice(0, 200)}...` : s;
}

/**
 * Whether `text` is a signed 64-bit decimal as Go's `strconv.ParseInt(s, 10, 64)` reads it (the official
 * client parses `n=` so): an optional `+` or `-`, then digits (leading zeros allowed), within [-2^63, 2^63-1].
 */
export function isInt64(text: string): boolean {
  if (!/^[+-]?\d+$/.test(text)) return false;
  const n = BigInt(text);
  return n >= int64Min && n <= int64Max;
}

/**
 * Parses `id:<namespace>:<type>:[n=<number>|g=<group>]:<user part>`; throws VB_BAD_DOCUMENT_ID naming what is wrong.
 * @example
 * ```ts
 * import { parseDocumentId } from 'vespa-bulk';
 *
 * const id = parseDocumentId('id:mynamespace:music:n=42:song-1');
 * console.log(id.namespace, id.type, id.kind, id.local); // mynamespace music number song-1
 * if (id.kind === 'number') console.log(id.number); // 42
 * ```
 */
export function parseDocumentId(id: string): DocumentId {
  if (typeof id !== 'string') throw bad(String(id), 'not a string');
  if (id.length > maxDocumentIdLength) throw bad(id, `longer than ${maxDocumentIdLength} characters`);
  if (forbiddenControl.test(id)) throw bad(id, 'contains a control character');
  if (loneSurrogate.test(id)) throw bad(id, 'contains an unpaired UTF-16 surrogate (not valid Unicode text)');
  if (!id.startsWith('id:')) throw bad(id, "must start with 'id:'");
  const c1 = id.indexOf(':', 3);
  const c2 = c1 < 0 ? -1 : id.indexOf(':', c1 + 1);
  const c3 = c2 < 0 ? -1 : id.indexOf(':', c2 + 1);
  if (c3 < 0) throw bad(id, "expected 'id:<namespace>:<type>:<key/value>:<local part>'");
  const namespace = id.slice(3, c1);
  const type = id.slice(c1 + 1, c2);
  const kv = id.slice(c2 + 1, c3);
  const local = id.slice(c3 + 1);
  if (namespace === '') throw bad(id, 'empty namespace');
  if (type === '') throw bad(id, 'empty document type');
  if (local === '') throw bad(id, 'empty local part');
  if (kv === '') return { namespace, type, kind: 'plain', local };
  if (kv.startsWith('n=')) {
    const number = kv.slice(2);
    if (!isInt64(number)) {
      throw bad(
        id,
        /^[+-]?\d+$/.test(number)
          ? `'n=${number}' is outside the signed 64-bit range [${String(int64Min)}, ${String(int64Max)}]`
          : `'n=' needs a signed 64-bit integer, got '${number}'`,
      );
    }
    return { namespace, type, kind: 'number', number, local };
  }
  if (kv.startsWith('g=')) {
    const group = kv.slice(2);
    if (group === '') throw bad(id, "'g=' needs a non-empty group");
    return { namespace, type, kind: 'group', group, local };
  }
  throw bad(id, `unknown key/value part '${kv}' (expected empty, 'n=<number>' or 'g=<group>')`);
}

/**
 * The text form of a DocumentId: the inverse of `parseDocumentId`.
 * @example
 * ```ts
 * import { formatDocumentId, parseDocumentId } from 'vespa-bulk';
 *
 * const id = parseDocumentId('id:mynamespace:music::song-1');
 * console.log(formatDocumentId({ ...id, local: 'song-2' })); // id:mynamespace:music::song-2
 * ```
 */
export function formatDocumentId(id: DocumentId): string {
  return `id:${id.namespace}:${id.type}:${keyValuePart(id)}:${id.local}`;
}

/** The part between the type and the local id: `n=…` or `g=…`, empty for a plain id. */
function keyValuePart(id: DocumentId): string {
  switch (id.kind) {
    case 'number':
      return `n=${id.number}`;
    case 'group':
      return `g=${id.group}`;
    default:
      return '';
  }
}

/**
 * One path segment, URL-encoded so that '/', ':', '+', '%' and spaces survive the service's per-segment
 * decoding ('+' would decode to a space). A segment that is exactly '.' or '..' would be normalised away
 * by HTTP servers, so its dots are encoded too.
 */
export function encodePathSegment(segment: string): string {
  const encoded = encodeURIComponent(segment);
  return encoded === '.' || encoded === '..' ? encoded.replace(/\./g, '%2E') : encoded;
}

/**
 * The path's `/number/<n>/` of an `n=` id: the number as the official client writes it (`+5` and `007` as
 * `5` and `7`). The handler reads that segment as an unsigned 64-bit number, so a negative `n` has no path:
 * refused here (VB_BAD_DOCUMENT_ID) rather than sent as its two's complement for a 400.
 */
function pathNumber(d: DocumentId & { kind: 'number' }): string {
  const n = BigInt(d.number);
  if (n < 0n) {
    throw bad(
      formatDocumentId(d),
      `'n=${d.number}' is negative: /document/v1 reads the path's number as unsigned, so no client can write a document with a negative 'n'`,
    );
  }
  return n.toString();
}

/** The /document/v1 path of a document id, each segment encoded; VB_BAD_DOCUMENT_ID for an id no path can carry (negative `n`). */
export function toDocumentPath(id: DocumentId | string): string {
  const d = typeof id === 'string' ? parseDocumentId(id) : id;
  const prefix = `/document/v1/${encodePathSegment(d.namespace)}/${encodePathSegment(d.type)}`;
  switch (d.kind) {
    case 'plain':
      return `${prefix}/docid/${encodePathSegment(d.local)}`;
    case 'number':
      return `${prefix}/number/${pathNumber(d)}/${encodePathSegment(d.local)}`;
    case 'group':
      return `${prefix}/group/${encodePathSegment(d.group)}/${encodePathSegment(d.local)}`;
  }
}

/** The visit/bulk path for a namespace and type: `/document/v1/<ns>/<type>/docid/`. */
export function toVisitPath(namespace?: string, type?: string): string {
  if (namespace === undefined || type === undefined) return '/document/v1/';
  return `/document/v1/${encodePathSegment(namespace)}/${encodePathSegment(type)}/docid/`;
}
