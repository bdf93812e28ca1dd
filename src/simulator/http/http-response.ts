import http2 from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { jsonContentType } from '../document-api/responses.js';

/** The request side of an HTTP/1.1 or HTTP/2 (compatibility API) exchange. */
export type AnyRequest = IncomingMessage | http2.Http2ServerRequest;

/** The response side of an HTTP/1.1 or HTTP/2 (compatibility API) exchange: the calls both have. */
export type AnyResponse = ServerResponse | http2.Http2ServerResponse;

/** Sends a whole body of any type, unless the headers already went out. */
export function sendBody(
  res: AnyResponse,
  status: number,
  contentType: string,
  body: string | Uint8Array,
  extraHeaders?: Record<string, string>,
): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body), ...extraHeaders });
  res.end(body);
}

export function sendJson(res: AnyResponse, status: number, body: string, extraHeaders?: Record<string, string>): void {
  const headers: Record<string, string | number> = {
    'content-type': jsonContentType,
    'content-length': Buffer.byteLength(body),
  };
  if (extraHeaders !== undefined) Object.assign(headers, extraHeaders);
  res.writeHead(status, headers);
  res.end(body);
}

/**
 * Destroys the connection under a response: for HTTP/1.1 the socket, for HTTP/2 the session (so every stream
 * on it fails, as when a TCP connection drops).
 */
export function destroyConnection(res: AnyResponse): void {
  if (res instanceof http2.Http2ServerResponse) {
    const session = res.stream.session;
    if (session !== undefined) session.destroy();
    else res.stream.destroy();
    return;
  }
  res.socket?.destroy();
}

/**
 * For a response that is never written (a stall): over HTTP/1.1 the client's FIN is taken as giving up, and the
 * connection is closed. (HTTP/1.1 sockets are half-open, so pipelined requests sent before a FIN are still answered.)
 */
export function closeWhenClientLeaves(res: AnyResponse): void {
  if (res instanceof http2.Http2ServerResponse) return;
  const socket = res.socket;
  if (socket === null) return;
  if (socket.readableEnded) socket.destroy();
  else socket.once('end', () => socket.destroy());
}

/**
 * Loses one answer part way: for HTTP/1.1 its connection is closed (the only way to cut one answer there), for
 * HTTP/2 its stream is reset (RST_STREAM INTERNAL_ERROR), as the container's Jetty does when an exchange fails after
 * its headers went out; the connection and its other streams live on. Whole connections lost (a node restarted)
 * are `destroyConnection`'s.
 */
export function cutExchange(res: AnyResponse): void {
  if (res instanceof http2.Http2ServerResponse) {
    if (!res.stream.destroyed) res.stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
    return;
  }
  res.socket?.destroy();
}

/** Writes the headers and part of the body, then cuts the exchange: an answer lost after the work was done. */
export function sendThenCut(res: AnyResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': jsonContentType, 'content-length': Buffer.byteLength(body) });
  writeChunk(res, body.slice(0, Math.max(1, body.length >> 1)), () => cutExchange(res));
}

/** res.write for either protocol (their overloads do not unify in TypeScript). */
export function writeChunk(res: AnyResponse, chunk: string, callback?: () => void): boolean {
  return (res as ServerResponse).write(chunk, callback as (err?: Error | null) => void);
}

/** Resolves when the response may take more data, or when the connection is gone. */
export function waitForDrain(res: AnyResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

export function isGone(res: AnyResponse): boolean {
  if (res instanceof http2.Http2ServerResponse) return res.stream.destroyed || res.stream.closed;
  // A pipelined response waiting for its turn has no socket yet: it is not gone.
  return res.destroyed || (res.socket !== null && res.socket.destroyed);
}
