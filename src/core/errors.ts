/**
 * Every error vespa-bulk raises on purpose is a VespaBulkError with a stable `code`, so callers branch on
 * `err.code` and never on message text. The table below is the one place codes are defined.
 * @example
 * ```ts
 * import { errorCodes } from 'vespa-bulk';
 *
 * console.log(errorCodes.VB_UNREACHABLE); // 'nothing answers at the endpoint'
 * ```
 */
export const errorCodes = {
  VB_USAGE: 'bad usage',
  VB_BAD_DOCUMENT_ID: 'malformed document id',
  VB_BAD_OPERATION: 'malformed feed operation',
  VB_BAD_JSON: 'invalid JSON',
  VB_BAD_ROW: 'a table row that cannot become a feed operation',
  VB_BROKEN_INPUT: 'compressed input that breaks off: cut short or corrupt',
  VB_REQUEST_TOO_LARGE: 'document operation over the request size limit',
  VB_SELECTION_SYNTAX: 'document selection syntax error',
  VB_HTTP_STATUS: 'unexpected HTTP status',
  VB_TRANSPORT: 'transport error',
  VB_UNREACHABLE: 'nothing answers at the endpoint',
  VB_PROTOCOL: 'the endpoint does not speak the HTTP version asked for',
  VB_TIMEOUT: 'operation timed out',
  VB_ABORTED: 'aborted',
  VB_DEPLOY: 'deployment failed',
  VB_VISIT: 'visit failed',
  VB_BAD_RESPONSE: 'unreadable response',
  VB_CERT_EXPIRED: 'client certificate expired',
  VB_COLUMN_TYPE: 'a value does not fit its column',
  VB_TRANSFORM: 'the transform failed on an operation',
  VB_MISSING_PACKAGE: 'an optional package that this needs is not installed',
} as const;

export type ErrorCode = keyof typeof errorCodes;

export interface ErrorPlace {
  file?: string;
  line?: number;
  documentId?: string;
  /** 0-based character offset, for parsers. */
  position?: number;
}

/**
 * The error every call of the library rejects or throws with: a stable `code` (see {@link errorCodes}) to branch on, never the message; `place` names the input, line or document where there is one.
 * @example
 * ```ts
 * import { feed, VespaBulkError } from 'vespa-bulk';
 *
 * try {
 *   await feed(['corpus.jsonl'], { endpoint: 'http://127.0.0.1:8080' });
 * } catch (err) {
 *   if (err instanceof VespaBulkError && err.code === 'VB_UNREACHABLE') console.error('start the cluster first');
 *   else throw err;
 * }
 * ```
 */
export class VespaBulkError extends Error {
  readonly code: ErrorCode;
  readonly place: ErrorPlace | undefined;
  /** HTTP status when the error came from a response. */
  readonly status: number | undefined;

  constructor(
    code: ErrorCode,
    message?: string,
    options: { place?: ErrorPlace; status?: number; cause?: unknown } = {},
  ) {
    super(message ?? errorCodes[code], options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'VespaBulkError';
    this.code = code;
    this.place = options.place;
    this.status = options.status;
  }
}

/** `file:line: ` (or the id) prefix that makes a message point at its place in the input. */
export function describePlace(place: ErrorPlace | undefined): string {
  if (!place) return '';
  const parts: string[] = [];
  // An empty name (a flag given no value) is no place: the message itself quotes it.
  if (place.file !== undefined && place.file !== '')
    parts.push(place.line !== undefined ? `${place.file}:${place.line}` : place.file);
  else if (place.line !== undefined) parts.push(`line ${place.line}`);
  if (place.documentId !== undefined) parts.push(place.documentId);
  if (place.position !== undefined) parts.push(`position ${place.position}`);
  return parts.length > 0 ? `${parts.join(' ')}: ` : '';
}

/**
 * Whether `err` is a {@link VespaBulkError}, with the given code when one is given (a type guard).
 * @example
 * ```ts
 * import { DocumentClient, isVespaBulkError } from 'vespa-bulk';
 *
 * const client = new DocumentClient({ endpoint: 'http://127.0.0.1:8080' });
 * try {
 *   await client.get('id:mynamespace:music::song-1');
 * } catch (err) {
 *   if (!isVespaBulkError(err, 'VB_TIMEOUT')) throw err;
 * } finally {
 *   await client.close();
 * }
 * ```
 */
export function isVespaBulkError(err: unknown, code?: ErrorCode): err is VespaBulkError {
  return err instanceof VespaBulkError && (code === undefined || err.code === code);
}
