import { isInt64, maxDocumentIdLength } from '../../document/id.js';
import { badRequest } from './responses.js';

/**
 * What a /document/v1 path names. Pure: no I/O.
 *
 * `/document/v1/` is the root (visit and bulk across types); `<ns>/<type>/docid[/]`, `<ns>/<type>/number/<n>/`
 * and `<ns>/<type>/group/<g>/` are visit/bulk targets; with a local part after them they name one document.
 */
export type DocumentRoute =
  | { kind: 'root' }
  | { kind: 'collection'; namespace: string; type: string; location?: Location }
  | { kind: 'document'; namespace: string; type: string; location?: Location; id: string }
  | { kind: 'none' };

export type Location = { kind: 'number'; value: string } | { kind: 'group'; value: string };

const prefix = '/document/v1';

// Control characters other than tab, LF and CR are refused in document ids.
 
const forbiddenControl = /[\u0000-\u0008\u000b\u000c\u000e-\u001f]/;

/** Parses the raw (still percent-encoded) path; throws a 400 HandlerError for bad segments. */
export function parseDocumentPath(rawPath: string): DocumentRoute {
  if (!rawPath.startsWith(prefix)) return { kind: 'none' };
  if (rawPath.length === prefix.length || (rawPath.length === prefix.length + 1 && rawPath.charCodeAt(prefix.length) === 47))
    return { kind: 'root' };
  if (rawPath.charCodeAt(prefix.length) !== 47) return { kind: 'none' };

  const raw = rawPath.slice(prefix.length + 1).split('/');
  // A trailing slash names the collection itself (`.../docid/`); it is not an empty segment.
  const trailingSlash = raw.length > 1 && raw[raw.length - 1] === '';
  if (trailingSlash) raw.pop();
  for (const segment of raw) {
    if (segment === '') throw badRequest(`Empty path segment in '${rawPath}'`);
    if (segment === '.' || segment === '..') throw badRequest(`Path segment '${segment}' is not allowed in '${rawPath}'`);
  }
  if (raw.length < 3) return { kind: 'none' };
  const namespace = decodeSegment(raw[0]);
  const type = decodeSegment(raw[1]);
  if (namespace.includes(':')) throw badRequest(`Namespace '${namespace}' may not contain ':'`);
  if (type.includes(':')) throw badRequest(`Document type '${type}' may not contain ':'`);

  const form = raw[2];
  let location: Location | undefined;
  let localStart: number;
  if (form === 'docid') {
    localStart = 3;
  } else if (form === 'number' || form === 'group') {
    if (raw.length < 4) return { kind: 'none' };
    const value = decodeSegment(raw[3]);
    if (form === 'number') {
      if (!isInt64(value)) throw badRequest(`Failed parsing '${value}': For input string: "${value}"`);
      location = { kind: 'number', value: String(BigInt(value)) };
    } else {
      const illegal = forbiddenControl.exec(value);
      if (illegal !== null) throw badRequest(`Illegal code point U${illegal[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')} in group`);
      location = { kind: 'group', value };
    }
    localStart = 4;
  } else {
    return { kind: 'none' };
  }

  if (raw.length === localStart) return { kind: 'collection', namespace, type, location };
  // The local part is everything after the form, segments decoded one by one and joined with '/'.
  const parts: string[] = [];
  for (let i = localStart; i < raw.length; i++) parts.push(decodeSegment(raw[i]));
  if (trailingSlash) throw badRequest(`Empty path segment in '${rawPath}'`);
  const local = parts.join('/');
  const kv = location === undefined ? '' : location.kind === 'number' ? `n=${location.value}` : `g=${location.value}`;
  const id = `id:${namespace}:${type}:${kv}:${local}`;
  if (id.length > maxDocumentIdLength) throw badRequest(`Document id longer than ${maxDocumentIdLength} characters`);
  if (forbiddenControl.test(local)) throw badRequest(`Document id '${id}' contains a forbidden control character`);
  return { kind: 'document', namespace, type, location, id };
}

/** Per-segment URL decoding, '+' meaning space as in the service. */
export function decodeSegment(segment: string): string {
  if (segment.indexOf('%') < 0 && segment.indexOf('+') < 0) return segment;
  try {
    return decodeURIComponent(segment.replace(/\+/g, ' '));
  } catch {
    throw badRequest(`Failed decoding path segment '${segment}': malformed percent-encoding`);
  }
}
