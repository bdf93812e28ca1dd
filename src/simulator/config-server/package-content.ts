import { ConfigServerError } from './deployments.js';

/** A request for package content: a path relative to the package root and whether it named a directory. */
export interface ContentTarget {
  path: string;
  directory: boolean;
}

/**
 * Turns the raw (percent-encoded) segments after `content/` into a package path. Segments are decoded one by
 * one, so `%2e%2e` and `%2F` are seen for what they are, and anything that could climb out of the package is
 * refused rather than resolved.
 */
export function parseContentPath(rawSegments: string[]): ContentTarget {
  const directory = rawSegments.length === 0 || rawSegments[rawSegments.length - 1] === '';
  const segments = directory ? rawSegments.slice(0, -1) : rawSegments;
  const decoded = segments.map((raw) => {
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      throw new ConfigServerError(400, 'BAD_REQUEST', `Malformed percent-encoding in '${raw}'`);
    }
    if (segment === '' || segment === '.' || segment === '..' || /[/\\\0]/.test(segment)) {
      throw new ConfigServerError(
        400,
        'BAD_REQUEST',
        `Path '${segments.join('/')}' is not a path inside the application package`,
      );
    }
    return segment;
  });
  return { path: decoded.join('/'), directory };
}

/**
 * Entries below directory `dir` ('' = root), as paths relative to the package root with directories ending in
 * `/`; undefined when no such directory exists.
 */
export function listDirectory(files: Map<string, Uint8Array>, dir: string, recursive: boolean): string[] | undefined {
  const prefix = dir === '' ? '' : `${dir}/`;
  const below = [...files.keys()].filter((p) => p.startsWith(prefix));
  if (dir !== '' && below.length === 0) return undefined;
  const entries = new Set<string>();
  for (const path of below) {
    const rest = path.slice(prefix.length).split('/');
    if (!recursive) {
      entries.add(prefix + rest[0] + (rest.length > 1 ? '/' : ''));
      continue;
    }
    for (let i = 1; i < rest.length; i++) entries.add(`${prefix}${rest.slice(0, i).join('/')}/`);
    entries.add(path);
  }
  return [...entries].sort();
}

export function contentTypeOf(path: string): string {
  if (path.endsWith('.xml')) return 'application/xml';
  if (path.endsWith('.json')) return 'application/json';
  return 'text/plain';
}
