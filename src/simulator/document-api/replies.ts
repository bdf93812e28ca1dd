import { cutExchange, isGone, sendJson } from '../http/http-response.js';
import type { DocumentRequest } from './handler-state.js';
import { HandlerError, handlerErrorBody } from './responses.js';

/** Sends a JSON answer and logs it when the request log is on. */
export function reply(request: DocumentRequest, status: number, body: string, headers?: Record<string, string>): void {
  sendJson(request.res, status, body, headers);
  const { log } = request.state;
  if (log !== undefined) log(`${request.req.method} ${request.req.url} ${status}`);
}

/** Answers a thrown error: a HandlerError with its status, anything else 500. */
export function replyError(request: DocumentRequest, err: unknown): void {
  const { res, pathId } = request;
  if (isGone(res)) return;
  if (res.headersSent) {
    // A stream that fails after its headers went out cannot change its status: the client sees it cut.
    cutExchange(res);
    return;
  }
  if (err instanceof HandlerError) reply(request, err.status, handlerErrorBody(pathId, err.message));
  else
    reply(request, 500, handlerErrorBody(pathId, err instanceof Error ? `${err.name}: ${err.message}` : String(err)));
}

/** The body refusal for `readRequestBody`: 413 or 400 with the handler's error body. */
export function refuseBody(request: DocumentRequest, status: 413 | 400, message: string): void {
  reply(request, status, handlerErrorBody(request.pathId, message));
}

/** 405 with the handler's message and an `Allow` header. */
export function methodNotAllowed(request: DocumentRequest, allowed: string[]): void {
  const { pathId } = request;
  reply(
    request,
    405,
    handlerErrorBody(
      pathId,
      `'${request.req.method}' not allowed at '${pathId}'. Allowed methods are: ${allowed.join(', ')}`,
    ),
    { allow: allowed.join(',') },
  );
}

const handlerPaths = [
  '/document/v1/',
  '/document/v1/{namespace}/{documentType}/docid/',
  '/document/v1/{namespace}/{documentType}/group/{group}/',
  '/document/v1/{namespace}/{documentType}/number/{number}/',
  '/document/v1/{namespace}/{documentType}/docid/{*}',
  '/document/v1/{namespace}/{documentType}/group/{group}/{*}',
  '/document/v1/{namespace}/{documentType}/number/{number}/{*}',
];

export function notFound(request: DocumentRequest): void {
  const { pathId } = request;
  reply(
    request,
    404,
    handlerErrorBody(pathId, `Nothing at '${pathId}'. Available paths are:\n${handlerPaths.join('\n')}`),
  );
}
