import { destroyConnection, isGone, sendJson, type AnyRequest, type AnyResponse } from '../http/http-response.js';
import type { HandlerState } from './handler-state.js';
import { HandlerError, handlerErrorBody } from './responses.js';

/** Sends a JSON answer and logs it when the request log is on. */
export function reply(state: HandlerState, req: AnyRequest, res: AnyResponse, status: number, body: string, headers?: Record<string, string>): void {
  sendJson(res, status, body, headers);
  if (state.log !== undefined) state.log(`${req.method} ${req.url} ${status}`);
}

/** Answers a thrown error: a HandlerError with its status, anything else 500. */
export function replyError(state: HandlerState, req: AnyRequest, res: AnyResponse, pathId: string, err: unknown): void {
  if (isGone(res)) return;
  if (res.headersSent) {
    // A stream that fails after its headers went out cannot change its status: the client sees it cut.
    destroyConnection(res);
    return;
  }
  if (err instanceof HandlerError) reply(state, req, res, err.status, handlerErrorBody(pathId, err.message));
  else reply(state, req, res, 500, handlerErrorBody(pathId, err instanceof Error ? `${err.name}: ${err.message}` : String(err)));
}

/** The body refusal for `readRequestBody`: 413 or 400 with the handler's error body. */
export function refuseBody(state: HandlerState, req: AnyRequest, res: AnyResponse, pathId: string, status: 413 | 400, message: string): void {
  reply(state, req, res, status, handlerErrorBody(pathId, message));
}

/** 405 with the handler's message and an `Allow` header. */
export function methodNotAllowed(state: HandlerState, req: AnyRequest, res: AnyResponse, pathId: string, allowed: string[]): void {
  reply(state, req, res, 405, handlerErrorBody(pathId, `'${req.method}' not allowed at '${pathId}'. Allowed methods are: ${allowed.join(', ')}`), { allow: allowed.join(',') });
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

export function notFound(state: HandlerState, req: AnyRequest, res: AnyResponse, pathId: string): void {
  reply(state, req, res, 404, handlerErrorBody(pathId, `Nothing at '${pathId}'. Available paths are:\n${handlerPaths.join('\n')}`));
}
