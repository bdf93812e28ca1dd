/**
 * The early stop of a feed that fails every operation the same way (an unknown document type, the config server's
 * port given as the target): pure; the engine tells it each operation's final outcome.
 *
 * The rule: when the first `limit` (100) operations to end all ended in the same final 4xx (the same status and
 * the same message once document ids and numbers are left out), and none succeeded, the feed stops with the first
 * one's reason and a hint; the operations not sent stay in the checkpoint, as at any stop. 100 is a few seconds'
 * work at most, far less than the feed (20,000 × 400 wrote a 3.7 MB reasons file), and enough that an input where
 * only some operations are bad shows a success or a different failure first: one such outcome turns the rule off
 * for the run. Not counted as the same failure everywhere, since they say something of one document or moment:
 * 404 from the document API (a document that does not exist), 408, 412 (a condition not met), 429, and 401/403
 * (refused credentials stop the feed at the first, see the engine).
 */
export const sameFailureLimit = 100;

/** Why a feed stopped early because every operation so far failed alike (`FeedOutcome.sameFailure`). */
export interface SameFailureVerdict {
  /** How many operations failed alike before the stop. */
  count: number;
  /** Their HTTP status. */
  status: number;
  /** The first failure's reason. */
  message: string;
  /** What is likely wrong, when the answer says. */
  hint?: string;
}

const perDocument = new Set([401, 403, 408, 412, 429]);

export class SameFailureRule {
  private key: string | undefined;
  private count = 0;
  private off = false;
  private first: { status: number; message: string; hint?: string } | undefined;

  constructor(private readonly limit = sameFailureLimit) {}

  /** An operation succeeded: the failures were not everywhere. */
  succeeded(): void {
    this.off = true;
  }

  /**
   * An operation failed for good, `status` its last answer's (undefined: no answer); returns the verdict when the
   * feed should stop now.
   */
  failed(status: number | undefined, message: string, body: Buffer | undefined): SameFailureVerdict | undefined {
    if (this.off) return undefined;
    if (status === undefined || status < 400 || status > 499 || perDocument.has(status)) {
      this.off = true;
      return undefined;
    }
    const shape = bodyShape(body);
    if (status === 404 && shape === 'document-api') {
      this.off = true;
      return undefined;
    }
    const key = `${status} ${reasonClass(message)}`;
    if (this.key === undefined) {
      this.key = key;
      this.first = { status, message, ...hintFor(status, message, shape) };
    } else if (key !== this.key) {
      this.off = true;
      return undefined;
    }
    this.count++;
    if (this.count < this.limit) return undefined;
    this.off = true;
    return { count: this.count, ...this.first! };
  }
}

/** A message without what differs from one document to the next: ids, quoted names of documents, numbers. */
export function reasonClass(message: string): string {
  return message
    .replace(/id:[^\s'"]*/g, 'id:…')
    .replace(/\d+/g, '#')
    .trim();
}

type BodyShape = 'document-api' | 'config-server' | 'other';

/** Who answered, by the body: the document API's carries `pathId`; the config server's error carries `error-code`. */
function bodyShape(body: Buffer | undefined): BodyShape {
  if (body === undefined || body.length === 0) return 'other';
  try {
    const value = JSON.parse(body.toString('utf8')) as Record<string, unknown> | null;
    if (value === null || typeof value !== 'object') return 'other';
    if ('pathId' in value || 'id' in value) return 'document-api';
    if ('error-code' in value) return 'config-server';
  } catch {
    // Not JSON: a proxy's or another server's page.
  }
  return 'other';
}

function hintFor(status: number, message: string, shape: BodyShape): { hint?: string } {
  if (status === 404 && shape === 'config-server')
    return { hint: 'this looks like the config server; the document API is on port 8080' };
  if (status === 404) return { hint: 'the target does not serve /document/v1/: is it the document API (port 8080)?' };
  if (/document type/i.test(message))
    return { hint: "the document type in the ids is not one the application's schemas define" };
  return {};
}
