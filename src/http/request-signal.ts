import type { RequestControl, ResponseHandler } from './transport.js';
import { TransportError } from './transport-error.js';

/**
 * `handler` for a request with an abort signal: aborted while the request waits for room, it fails at once and
 * leaves no trace on a connection; once it is on one, it is aborted there (an HTTP/2 stream reset, an HTTP/1.1
 * connection closed). Either way its handler hears one `aborted` failure, and nothing after it.
 */
export function withSignal(signal: AbortSignal, handler: ResponseHandler): ResponseHandler {
  let control: RequestControl | undefined;
  let state: 'waiting' | 'started' | 'over' = 'waiting';
  const over = (): boolean => {
    if (state === 'over') return true;
    state = 'over';
    signal.removeEventListener('abort', onAbort);
    return false;
  };
  const onAbort = (): void => {
    if (state === 'started') control!.abort(new TransportError('aborted', 'request aborted'));
    // It never left: on either protocol, an abort before a connection took it is no "maybe applied".
    else if (!over())
      handler.onError(
        new TransportError('aborted', 'request aborted while it waited for a connection', { neverSent: true }),
      );
  };
  if (signal.aborted) queueMicrotask(onAbort);
  else signal.addEventListener('abort', onAbort, { once: true });
  return {
    onStart: (c) => {
      // Failed while it waited: it leaves no trace on the connection.
      if (state === 'over') return c.abort();
      state = 'started';
      control = c;
      handler.onStart?.(c);
    },
    onHeaders: (status, headers) => handler.onHeaders(status, headers),
    onData: (chunk) => handler.onData(chunk),
    onComplete: () => {
      if (!over()) handler.onComplete();
    },
    onError: (err) => {
      if (!over()) handler.onError(err);
    },
  };
}
