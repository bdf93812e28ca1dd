import { gunzipSync } from 'node:zlib';
import type { AnyRequest, AnyResponse } from './http-response.js';

/**
 * Answers a body that cannot be read: 413 over the limit (declared, received or decompressed), 400 for an
 * unknown or broken Content-Encoding. `context` is what `readRequestBody` was given, so one shared function
 * serves every request (no closure per request on the hot path).
 */
export type BodyRefusal<C> = (context: C, req: AnyRequest, res: AnyResponse, pathId: string, status: 413 | 400, message: string) => void;

const kBody = Symbol('body');

interface BodyState {
  chunks: Buffer[];
  size: number;
  failed: boolean;
  max: number;
  res: AnyResponse;
  pathId: string;
  onBody: (body: Buffer) => void;
  refuse: BodyRefusal<unknown>;
  context: unknown;
}

type BodyCarrier = AnyRequest & { [kBody]?: BodyState };

/**
 * Reads the whole body within `max` bytes, gunzips it when so encoded, and hands it to `onBody`; a body over
 * the limit is refused at once and the rest discarded.
 */
export function readRequestBody<C>(req: AnyRequest, res: AnyResponse, pathId: string, max: number, onBody: (body: Buffer) => void, refuse: BodyRefusal<C>, context: C): void {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > max) {
    refuse(context, req, res, pathId, 413, tooLargeMessage(declared, max));
    req.resume();
    return;
  }
  // Per-request state lives on the request; the listeners are shared functions.
  (req as BodyCarrier)[kBody] = { chunks: [], size: 0, failed: false, max, res, pathId, onBody, refuse: refuse as BodyRefusal<unknown>, context };
  req.on('data', onBodyData);
  req.on('end', onBodyEnd);
  req.on('error', onBodyError);
}

function tooLargeMessage(size: number | string, max: number): string {
  return `Request body of ${size} bytes is larger than the limit of ${max} bytes`;
}

function onBodyData(this: BodyCarrier, chunk: Buffer): void {
  const b = this[kBody]!;
  if (b.failed) return;
  b.size += chunk.length;
  if (b.size > b.max) {
    b.failed = true;
    b.chunks.length = 0;
    b.refuse(b.context, this, b.res, b.pathId, 413, tooLargeMessage(`more than ${b.max}`, b.max));
    return;
  }
  b.chunks.push(chunk);
}

function onBodyEnd(this: BodyCarrier): void {
  const b = this[kBody]!;
  this[kBody] = undefined;
  if (!b.failed) finishBody(this, b);
}

function finishBody(req: BodyCarrier, b: BodyState): void {
  let body = b.chunks.length === 1 ? b.chunks[0] : Buffer.concat(b.chunks, b.size);
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding !== 'identity') {
    if (encoding.toLowerCase() !== 'gzip') {
      b.refuse(b.context, req, b.res, b.pathId, 400, `Unsupported Content-Encoding '${encoding}'`);
      return;
    }
    try {
      body = gunzipSync(body, { maxOutputLength: b.max });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') b.refuse(b.context, req, b.res, b.pathId, 413, tooLargeMessage(`more than ${b.max} (decompressed)`, b.max));
      else b.refuse(b.context, req, b.res, b.pathId, 400, `Failed decompressing gzip request body: ${(err as Error).message}`);
      return;
    }
  }
  b.onBody(body);
}

function onBodyError(this: BodyCarrier): void {
  const b = this[kBody];
  if (b !== undefined) b.failed = true;
}
