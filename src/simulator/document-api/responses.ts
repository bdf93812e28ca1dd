/**
 * The JSON bodies /document/v1 answers with, built as strings (the hot path never goes through JSON.stringify
 * of an object). Two error shapes exist in the real service: errors from the storage layer carry the document
 * id, errors raised by the HTTP handler itself do not.
 */

export const jsonContentType = 'application/json; charset=UTF-8';
export const jsonlContentType = 'application/jsonl; charset=UTF-8';

/** An error raised while handling a request, answered as `{"pathId","message"}` (no id) with `status`. */
export class HandlerError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'HandlerError';
  }
}

export function badRequest(message: string): HandlerError {
  return new HandlerError(400, message);
}

/** `{"pathId":...,"message":...}`: the handler's own errors. */
export function handlerErrorBody(pathId: string, message: string): string {
  return `{"pathId":${JSON.stringify(pathId)},"message":${JSON.stringify(message)}}`;
}

/** `{"pathId":...,"id":...,"message":...}`: errors from the storage layer. */
export function storageErrorBody(pathId: string, id: string, message: string): string {
  return `{"pathId":${JSON.stringify(pathId)},"id":${JSON.stringify(id)},"message":${JSON.stringify(message)}}`;
}

/** `{"pathId":...,"id":...}` plus a trace when asked for: success of put/update/remove, and get of a missing document. */
export function idBody(pathId: string, id: string, trace?: string): string {
  return trace === undefined
    ? `{"pathId":${JSON.stringify(pathId)},"id":${JSON.stringify(id)}}`
    : `{"pathId":${JSON.stringify(pathId)},"id":${JSON.stringify(id)},"trace":${trace}}`;
}

/** Get of a found document; `fieldsJson` is already serialized. */
export function documentBody(pathId: string, id: string, fieldsJson: string, trace?: string): string {
  const head = `{"pathId":${JSON.stringify(pathId)},"id":${JSON.stringify(id)}`;
  return trace === undefined ? `${head},"fields":${fieldsJson}}` : `${head},"trace":${trace},"fields":${fieldsJson}}`;
}

/**
 * A trace array as the service writes it: `"trace"` holds sequential nodes, each a `{"message":...}`.
 * The simulator has no message bus to trace, so it reports what it did at the requested level.
 */
export function traceJson(level: number, steps: string[]): string | undefined {
  if (level <= 0) return undefined;
  return JSON.stringify(steps.map((message) => ({ message: `[sim] ${message}` })));
}
