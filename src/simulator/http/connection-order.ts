import type { AnyRequest, AnyResponse } from './http-response.js';

/*
 * Per-connection order for HTTP/1.1 pipelining. Node parses every pipelined request at once, and a GET right
 * behind a POST would run before the POST's body has arrived. The container handles a connection's requests
 * one after the other, so a request that arrives while an earlier one on its connection still reads its body
 * waits for it. The state lives on the socket (symbols), so each connection, and each server, has its own.
 */
const kBusy = Symbol('busy');
const kWaiting = Symbol('waiting');

export type Start = (req: AnyRequest, res: AnyResponse) => void;

interface OrderedSocket {
  [kBusy]?: AnyRequest | undefined;
  [kWaiting]?: Array<[Start, AnyRequest, AnyResponse]>;
}

function connectionOf(req: AnyRequest): OrderedSocket | undefined {
  return req.httpVersionMajor === 1 ? (req.socket as unknown as OrderedSocket) : undefined;
}

/** Runs `start` now, or after the earlier requests on the same connection have their bodies. */
export function enterConnection(start: Start, req: AnyRequest, res: AnyResponse): void {
  const conn = connectionOf(req);
  if (conn !== undefined && conn[kBusy] !== undefined) (conn[kWaiting] ??= []).push([start, req, res]);
  else start(req, res);
}

/** Marks the request's connection busy while its body is read. */
export function holdConnection(req: AnyRequest): void {
  const conn = connectionOf(req);
  if (conn !== undefined) conn[kBusy] = req;
}

/** Frees the request's connection once its body is read, and starts the requests that waited for it. */
export function leaveConnection(req: AnyRequest): void {
  const conn = connectionOf(req);
  if (conn === undefined || conn[kBusy] !== req) return;
  conn[kBusy] = undefined;
  const waiting = conn[kWaiting];
  while (waiting !== undefined && waiting.length > 0 && conn[kBusy] === undefined) {
    const [start, nextReq, nextRes] = waiting.shift()!;
    start(nextReq, nextRes);
  }
}
