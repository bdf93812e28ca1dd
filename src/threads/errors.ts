import { VespaBulkError, errorCodes, type ErrorCode, type ErrorPlace } from '../core/errors.js';

/**
 * An error as it crosses a thread: a structured clone of a `VespaBulkError` loses its class (and so `instanceof`
 * and `name`), so a worker sends this instead and the coordinator re-creates the error with `fromWireError`.
 */
export interface WireError {
  message: string;
  /** The error's `code`: a `VespaBulkError` code, or another's (`ECONNRESET`), or none. */
  code?: string;
  place?: ErrorPlace;
  /** HTTP status, where the error came from a response. */
  status?: number;
}

/** What of `err` crosses a thread: its message, and its code, place and status where it has them. */
export function toWireError(err: unknown): WireError {
  const e = (typeof err === 'object' && err !== null ? err : {}) as {
    message?: unknown;
    code?: unknown;
    place?: unknown;
    status?: unknown;
  };
  const wire: WireError = { message: messageOf(err, e.message) };
  if (typeof e.code === 'string') wire.code = e.code;
  if (err instanceof VespaBulkError) {
    if (err.place !== undefined) wire.place = { ...err.place };
    if (err.status !== undefined) wire.status = err.status;
  }
  return wire;
}

/** An Error's message; else a `message` that is text, else the thing itself as text. */
function messageOf(err: unknown, message: unknown): string {
  if (err instanceof Error) return err.message;
  return typeof message === 'string' ? message : String(err);
}

/**
 * The `VespaBulkError` a worker's error stands for on this thread: its own code where that is one of
 * `errorCodes`, else `fallback` (what failing in that worker means: `VB_VISIT` for a visit worker, say); the
 * message, place and status as the worker had them.
 */
export function fromWireError(wire: WireError, fallback: ErrorCode): VespaBulkError {
  const code = wire.code !== undefined && Object.hasOwn(errorCodes, wire.code) ? (wire.code as ErrorCode) : fallback;
  return new VespaBulkError(code, wire.message, {
    ...(wire.place !== undefined && { place: wire.place }),
    ...(wire.status !== undefined && { status: wire.status }),
  });
}
