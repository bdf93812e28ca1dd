import { parseBody } from '../http/exchange.js';
import type { OperationKind } from '../document/operation.js';
import type { ErrorCode } from '../core/errors.js';

/** How one operation ended, passed to `FeedOptions.onResult`. */
export interface OperationResult {
  ok: boolean;
  /** Absent when the operation could not be read and its bytes name no id either. */
  id?: string;
  kind?: OperationKind;
  /** Last HTTP status, if an answer came. */
  status?: number;
  /** Why it failed. */
  message?: string;
  /** The error's stable code, for an operation that failed before an answer came (`VB_BAD_JSON`, ...). */
  code?: ErrorCode;
  attempts: number;
  input: string;
  line: number;
  /** Parsed response body of the final answer (success or failure), when there was one. */
  body?: unknown;
}

/** What a result reads from the feeder's record of an operation (the feeder passes the record itself). */
export interface FinishedOperation {
  readonly op: { readonly id: string; readonly kind: OperationKind };
  readonly attempts: number;
  readonly item: { readonly line: number };
}

/**
 * An OperationResult whose `body` is parsed only if the callback reads it: most callers count results and
 * never look. A prototype getter, not a property defined per result, keeps this off the hot path's costs.
 */
export class FeedResult implements OperationResult {
  readonly ok: boolean;
  readonly id: string;
  readonly kind: OperationKind;
  readonly attempts: number;
  readonly input: string;
  readonly line: number;
  readonly status?: number;
  readonly message?: string;
  private raw: Buffer | undefined;
  private parsed: unknown;
  constructor(
    ok: boolean,
    p: FinishedOperation,
    input: string,
    status: number | undefined,
    message: string | undefined,
    raw: Buffer | undefined,
  ) {
    this.ok = ok;
    this.id = p.op.id;
    this.kind = p.op.kind;
    this.attempts = p.attempts;
    this.input = input;
    this.line = p.item.line;
    if (status !== undefined) this.status = status;
    if (message !== undefined) this.message = message;
    this.raw = raw;
  }
  get body(): unknown {
    if (this.raw !== undefined) {
      this.parsed = parseBody(this.raw);
      this.raw = undefined;
    }
    return this.parsed;
  }
  toJSON(): OperationResult {
    const { raw: _raw, parsed: _parsed, ...own } = this;
    const body = this.body;
    return body === undefined ? own : { ...own, body };
  }
}
