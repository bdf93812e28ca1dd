import { badRequest } from './responses.js';
import { parseJavaInt, parseJavaMilliseconds, parseUnsignedLong } from './java-parsers.js';

/**
 * Query parameters of a /document/v1 request, with the service's rules: the last value of a repeated name
 * wins, an empty value is an error, and values that fail to parse are a 400 naming the value.
 */
export class QueryParameters {
  private readonly values: Map<string, string>;

  /** `queryString`: the raw query, kept for the parameters the service reads with all their values (format.tensors). */
  constructor(readonly queryString: string) {
    this.values = queryString === '' ? noValues : parseQueryString(queryString);
  }

  has(name: string): boolean {
    return this.values.has(name);
  }

  names(): string[] {
    return [...this.values.keys()];
  }

  /** The value, or undefined when absent; an empty value is a 400, as in the service. */
  string(name: string): string | undefined {
    const value = this.values.get(name);
    if (value === undefined) return undefined;
    if (value === '') throw badRequest(`Expected non-empty value for request property '${name}'`);
    return value;
  }

  require(name: string, pathId: string): string {
    const value = this.string(name);
    if (value === undefined) throw badRequest(`Must specify '${name}' at '${pathId}'`);
    return value;
  }

  /** Java's Boolean.parseBoolean: only "true" (any case) is true; anything else is false. */
  boolean(name: string): boolean | undefined {
    const value = this.string(name);
    return value === undefined ? undefined : value.toLowerCase() === 'true';
  }

  integer(name: string): number | undefined {
    const value = this.string(name);
    return value === undefined ? undefined : parseJavaInt(value);
  }

  /** An unsigned 64-bit number (the timestamps), as Long.parseUnsignedLong reads it. */
  unsignedLong(name: string): bigint | undefined {
    const value = this.string(name);
    return value === undefined ? undefined : parseUnsignedLong(value);
  }

  /** A duration (`timeout`, `timeChunk`) in milliseconds, read as the service reads it (java-parsers.ts). */
  durationMs(name: string): number | undefined {
    const value = this.string(name);
    return value === undefined ? undefined : parseJavaMilliseconds(value);
  }

  /** 400 when any of `names` is present: parameters that make no sense for the operation. */
  disallow(pathId: string, ...names: string[]): void {
    for (const name of names) if (this.values.has(name)) throw badRequest(`May not specify '${name}' at '${pathId}'`);
  }
}

const noValues: Map<string, string> = new Map();

/** `a=1&b=x+y&a=2` to a map, last value winning, with '+' as space and %XX decoded. */
export function parseQueryString(queryString: string): Map<string, string> {
  const values = new Map<string, string>();
  if (queryString === '') return values;
  let start = 0;
  while (start <= queryString.length) {
    let end = queryString.indexOf('&', start);
    if (end < 0) end = queryString.length;
    if (end > start) {
      const pair = queryString.slice(start, end);
      const eq = pair.indexOf('=');
      const name = decodeComponent(eq < 0 ? pair : pair.slice(0, eq));
      const value = eq < 0 ? '' : decodeComponent(pair.slice(eq + 1));
      values.set(name, value);
    }
    start = end + 1;
  }
  return values;
}

export function decodeComponent(text: string): string {
  if (text.indexOf('%') < 0 && text.indexOf('+') < 0) return text;
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    throw badRequest(`Failed decoding '${text}': malformed percent-encoding`);
  }
}
