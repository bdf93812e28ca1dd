/**
 * Every error vespa-bulk raises on purpose is a VespaBulkError with a stable `code`, so callers branch on
 * `err.code` and never on message text. The table below is the one place codes are defined.
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

export class VespaBulkError extends Error {
  readonly code: ErrorCode;
  readonly place: ErrorPlace | undefined;
  /** HTTP status when the error came from a response. */
  readonly status: number | undefined;

  constructor(code: ErrorCode, message?: string, options: { place?: ErrorPlace; status?: number; cause?: unknown } = {}) {
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
  if (place.file !== undefined) parts.push(place.line !== undefined ? `${place.file}:${place.line}` : place.file);
  else if (place.line !== undefined) parts.push(`line ${place.line}`);
  if (place.documentId !== undefined) parts.push(place.documentId);
  if (place.position !== undefined) parts.push(`position ${place.position}`);
  return parts.length > 0 ? `${parts.join(' ')}: ` : '';
}

export function isVespaBulkError(err: unknown, code?: ErrorCode): err is VespaBulkError {
  return err instanceof VespaBulkError && (code === undefined || err.code === code);
}
