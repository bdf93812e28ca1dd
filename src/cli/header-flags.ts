import { VespaBulkError } from '../core/errors.js';

/** `--header "Name: value"` flags into a header object; a malformed one is a usage error naming it. */
export function parseHeaderFlags(flags: readonly string[] | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const flag of flags ?? []) {
    const colon = flag.indexOf(':');
    const name = colon > 0 ? flag.slice(0, colon).trim() : '';
    if (name === '' || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
      throw new VespaBulkError('VB_USAGE', `--header '${flag}': expected 'Name: value'`);
    }
    headers[name.toLowerCase()] = flag.slice(colon + 1).trim();
  }
  return headers;
}
