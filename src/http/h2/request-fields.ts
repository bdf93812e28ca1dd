/** Headers HTTP/2 forbids (RFC 9113, 8.2.2) and what HTTP/1.1 framing needs; `host` becomes `:authority`. */
const connectionHeaders = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
]);

export const noHeaders: readonly string[] = [];

/**
 * A request's fields as HTTP/2 sends them, for one origin: the pseudo-header list by method, and the caller's header
 * array without HTTP/1.1's connection headers. The same kind of request reuses one list (no allocation per request).
 */
export class RequestFields {
  private readonly pseudoCache = new Map<string, string[]>();
  private readonly headerCache = new WeakMap<readonly string[], HeaderFields>();

  constructor(
    private readonly https: boolean,
    private readonly authority: string,
  ) {}

  pseudoFields(method: string, host: string | undefined): string[] {
    if (host !== undefined) return [':method', method, ':scheme', this.https ? 'https' : 'http', ':authority', host];
    let pseudo = this.pseudoCache.get(method);
    if (pseudo === undefined) {
      pseudo = [':method', method, ':scheme', this.https ? 'https' : 'http', ':authority', this.authority];
      if (this.pseudoCache.size < 16) this.pseudoCache.set(method, pseudo);
    }
    return pseudo;
  }

  /** The caller's headers as HTTP/2 sends them: none of HTTP/1.1's connection headers; `host` apart. */
  headerFields(headers: readonly string[]): HeaderFields {
    let fields = this.headerCache.get(headers);
    // The caller may have changed its array in place since (a token renewed): kept only while it holds the same.
    if (fields === undefined || !sameHeaders(headers, fields.given)) {
      fields = Object.assign([], { given: headers.slice() });
      for (let i = 0; i + 1 < headers.length; i += 2) {
        const name = headers[i].toLowerCase();
        if (name === 'host') fields.host = headers[i + 1];
        else if (!connectionHeaders.has(name) && !(name === 'te' && headers[i + 1] !== 'trailers'))
          fields.push(name, headers[i + 1]);
      }
      this.headerCache.set(headers, fields);
    }
    return fields;
  }
}

/** The fields HTTP/2 sends for a caller's header array, and a copy of that array as it was. */
type HeaderFields = string[] & { host?: string; given: readonly string[] };

/** Whether the caller's array still holds what it did (`given`), found without allocating. */
function sameHeaders(headers: readonly string[], given: readonly string[]): boolean {
  if (headers.length !== given.length) return false;
  for (let i = 0; i < given.length; i++) if (headers[i] !== given[i]) return false;
  return true;
}
