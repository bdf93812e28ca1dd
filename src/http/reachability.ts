import { VespaBulkError } from '../core/errors.js';
import type { TransportError } from './transport-error.js';

/**
 * Whether a failed request ends the work at once rather than being retried, decided in one place for every
 * command: before anything has answered at the endpoint, a failure that says nothing can (refused, unknown host,
 * TLS refused: `TransportError.unreachable`) is a wrong target or a service not up, said within a second as
 * VB_UNREACHABLE instead of after the retries; afterwards the same failure is an outage, retried as any other.
 * A server that does not speak the HTTP/2 insisted on (`protocol: 'h2'`) ends it with VB_PROTOCOL.
 */
export class Reachability {
  private answered = false;

  constructor(private readonly endpoint: string) {}

  /** An answer came from the endpoint (any status). */
  answer(): void {
    this.answered = true;
  }

  /** Whether any answer came yet. */
  get hasAnswered(): boolean {
    return this.answered;
  }

  /** The error that ends the work because of `err`, or undefined when `err` is an ordinary failure, to retry. */
  verdict(err: TransportError): VespaBulkError | undefined {
    if (err.failure === 'not-h2') return protocolError(this.endpoint, err);
    if (!this.answered && err.unreachable !== undefined) return unreachableError(this.endpoint, err.unreachable, err);
    return undefined;
  }
}

/** Base URL without credentials or query, for messages. */
export function describeEndpoint(endpoint: string): string {
  try {
    const url = new URL(endpoint);
    return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
  } catch {
    return endpoint;
  }
}

/** The VB_UNREACHABLE error for `endpoint`, naming the cause. */
export function unreachableError(endpoint: string, cause: string, err?: unknown): VespaBulkError {
  return new VespaBulkError('VB_UNREACHABLE', `nothing answers at ${describeEndpoint(endpoint)}: ${cause}`, {
    cause: err,
  });
}

/** The VB_PROTOCOL error for an endpoint that does not speak HTTP/2 although `protocol: 'h2'` asked for it. */
export function protocolError(endpoint: string, err: TransportError): VespaBulkError {
  const why = (err.cause as { message?: string } | undefined)?.message ?? 'it does not speak HTTP/2';
  return new VespaBulkError(
    'VB_PROTOCOL',
    `${describeEndpoint(endpoint)} does not speak HTTP/2 (${why}); use --protocol auto or --protocol http1.1`,
    { cause: err },
  );
}
