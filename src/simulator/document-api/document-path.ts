import { maxDocumentIdLength } from '../../document/id.js';
import { parseUnsignedLong, signedLongMessage } from './java-parsers.js';
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
  if (
    rawPath.length === prefix.length ||
    (rawPath.length === prefix.length + 1 && rawPath.charCodeAt(prefix.length) === 47)
  )
    return { kind: 'root' };
  if (rawPath.charCodeAt(prefix.length) !== 47) return { kind: 'none' };

  const segments = pathSegments(rawPath.slice(prefix.length + 1));
  if (segments.length === 0) return { kind: 'root' };
  if (segments.length < 3) return { kind: 'none' };
  const [namespace, type, form] = segments;
  if (namespace.includes(':')) throw badRequest(`Namespace '${namespace}' may not contain ':'`);
  if (type.includes(':')) throw badRequest(`Document type '${type}' may not contain ':'`);

  let location: Location | undefined;
  let localStart: number;
  if (form === 'docid') {
    localStart = 3;
  } else if (form === 'number' || form === 'group') {
    if (segments.length < 4) return { kind: 'none' };
    const value = segments[3];
    if (form === 'number') {
      const n = parseUnsignedLong(value);
      // The number goes into the id (or the selection) as `n=<unsigned>`, which is read back as a signed long.
      const tooLarge = signedLongMessage(n);
      if (tooLarge !== undefined) throw badRequest(tooLarge);
      location = { kind: 'number', value: String(n) };
    } else {
      const illegal = forbiddenControl.exec(value);
      if (illegal !== null)
        throw badRequest(
          `Illegal code point U${illegal[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')} in group`,
        );
      location = { kind: 'group', value };
    }
    localStart = 4;
  } else {
    return { kind: 'none' };
  }

  if (segments.length === localStart) return { kind: 'collection', namespace, type, location };
  // The local part is the rest of the segments, decoded one by one and joined with '/'.
  const local = segments.slice(localStart).join('/');
  const id = `id:${namespace}:${type}:${locationPart(location)}:${local}`;
  if (id.length > maxDocumentIdLength) throw badRequest(`Document id longer than ${maxDocumentIdLength} characters`);
  if (forbiddenControl.test(local)) throw badRequest(`Document id '${id}' contains a forbidden control character`);
  return { kind: 'document', namespace, type, location, id };
}

/** The id's part between the type and the local id: `n=…` or `g=…`, empty without a location. */
function locationPart(location: Location | undefined): string {
  if (location === undefined) return '';
  return location.kind === 'number' ? `n=${location.value}` : `g=${location.value}`;
}

/**
 * The segments as the service's path parser gives them: split on '/' with trailing empty segments dropped (so a
 * trailing slash names nothing more), each one URL-decoded, and only then an empty, '.' or '..' one refused:
 * `%2E%2E` is refused like `..`.
 */
function pathSegments(rest: string): string[] {
  const raw = rest.split('/');
  while (raw.length > 0 && raw[raw.length - 1] === '') raw.pop();
  const segments = raw.map(decodeSegment);
  for (const segment of segments)
    if (segment === '' || segment === '.' || segment === '..')
      throw badRequest(`path segments cannot be "", ".", or "..", but got: '${segment}'`);
  return segments;
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
