import { jsonTextWith, parseJsonWith } from '../../core/exact-json.js';

/**
 * JSON values whose numbers keep the text they were given. A stored document goes through an update as these
 * values and is written back with `stringifyExact`, so a `long` beyond 2^53 (or `1.50`) is not rewritten through a
 * double. A number whose text a double reproduces stays a plain number; others become ExactNumber. The parsing and
 * writing are core/exact-json.ts's; this file is the simulator's choice of what to keep and as what.
 */
export class ExactNumber {
  constructor(readonly text: string) {}

  /** The nearest double, for code that only reads (selections, arithmetic on floats). */
  toJSON(): number {
    return Number(this.text);
  }

  valueOf(): number {
    return Number(this.text);
  }
}

/** Parses JSON text; throws SyntaxError (as JSON.parse does) on bad input. */
export function parseExact(text: string): unknown {
  return parseJsonWith(text, (token) => (String(Number(token)) === token ? undefined : new ExactNumber(token)));
}

/** JSON.stringify, but an ExactNumber is written as its text. */
export function stringifyExact(value: unknown): string {
  return jsonTextWith(value, (v) => (v instanceof ExactNumber ? v.text : undefined));
}

/** A deep copy that keeps ExactNumbers (they are immutable, so shared). */
export function cloneExact<T>(value: T): T {
  if (value === null || typeof value !== 'object' || value instanceof ExactNumber) return value;
  if (Array.isArray(value)) return value.map(cloneExact) as T;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = cloneExact(v);
  return out as T;
}
