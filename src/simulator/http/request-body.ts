import { createGunzip, gunzipSync } from 'node:zlib';
import type { AnyRequest } from './http-response.js';

/**
 * Answers a body that cannot be read: 413 over the limit, 400 for an unknown or broken Content-Encoding.
 * `context` is what `readRequestBody` was given (the request's own context), so one shared function serves every
 * request (no closure per request on the hot path).
 */
export type BodyRefusal<C> = (context: C, status: 413 | 400, message: string) => void;

const kBody = Symbol('body');

interface BodyState {
  chunks: Buffer[];
  /** Bytes received so far (compressed, when gzipped). */
  size: number;
  gzipped: boolean;
  max: number;
  onBody: (body: Buffer) => void;
  refuse: BodyRefusal<unknown>;
  context: unknown;
}

type BodyCarrier = AnyRequest & { [kBody]?: BodyState };

/**
 * The document handler's answer to a body over its limit (DocumentV1ApiHandler). `size` is what the handler
 * read: every byte of the body, after the HTTP layer inflated a gzipped one; the declared Content-Length plays
 * no part, and a chunked body counts the same.
 */
export function requestTooLargeMessage(size: number, max: number): string {
  return `Document operation request size ${size} bytes exceeds maximum size of ${max} bytes. See https://docs.vespa.ai/en/writing/document-v1-api-guide.html#request-size-limit`;
}

/**
 * Reads the whole body, gunzips it when so encoded, and hands it to `onBody`; a body over `max` bytes (inflated)
 * is refused 413 once it has been read in full, as the container reads it all before its handler looks at the size.
 */
export function readRequestBody<C>(
  req: AnyRequest,
  max: number,
  onBody: (body: Buffer) => void,
  refuse: BodyRefusal<C>,
  context: C,
): void {
  const encoding = req.headers['content-encoding'];
  const gzipped = encoding !== undefined && encoding.toLowerCase() === 'gzip';
  // Per-request state lives on the request; the listeners are shared functions.
  (req as BodyCarrier)[kBody] = {
    chunks: [],
    size: 0,
    gzipped,
    max,
    onBody,
    refuse: refuse as BodyRefusal<unknown>,
    context,
  };
  req.on('data', onBodyData);
  req.on('end', onBodyEnd);
  req.on('error', onBodyError);
}

function onBodyData(this: BodyCarrier, chunk: Buffer): void {
  const b = this[kBody]!;
  b.size += chunk.length;
  // Past the limit a plain body is only counted; a gzipped one is kept, since only inflating it tells its size.
  if (b.size <= b.max || b.gzipped) b.chunks.push(chunk);
}

function onBodyEnd(this: BodyCarrier): void {
  const b = this[kBody]!;
  this[kBody] = undefined;
  if (b.size > b.max && !b.gzipped) b.refuse(b.context, 413, requestTooLargeMessage(b.size, b.max));
  else finishBody(this, b);
}

function finishBody(req: BodyCarrier, b: BodyState): void {
  let body = b.chunks.length === 1 ? b.chunks[0] : Buffer.concat(b.chunks, b.size);
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding !== 'identity') {
    if (!b.gzipped) {
      b.refuse(b.context, 400, `Unsupported Content-Encoding '${encoding}'`);
      return;
    }
    try {
      body = gunzipSync(body, { maxOutputLength: b.max });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') refuseInflated(b, body);
      else b.refuse(b.context, 400, `Failed decompressing gzip request body: ${(err as Error).message}`);
      return;
    }
  }
  b.onBody(body);
}

/** A gzipped body that inflates past the limit: inflated once more, only counted, to name its size. */
function refuseInflated(b: BodyState, compressed: Buffer): void {
  let size = 0;
  const gunzip = createGunzip();
  gunzip.on('data', (chunk: Buffer) => (size += chunk.length));
  gunzip.on('error', () => b.refuse(b.context, 413, requestTooLargeMessage(size, b.max)));
  gunzip.on('end', () => b.refuse(b.context, 413, requestTooLargeMessage(size, b.max)));
  gunzip.end(compressed);
}

function onBodyError(this: BodyCarrier): void {
  // The request is gone (its connection cut): nothing to answer, and the chunks go with it.
  this[kBody] = undefined;
}
