import { JsonSyntaxError, parseJsonTree, type JsonNode } from '../../schema/json-tree.js';

/**
 * JSON values whose numbers keep the text they were given. A stored document goes through an update as these
 * values and is written back with `stringifyExact`, so a `long` beyond 2^53 (or `1.50`) is not rewritten
 * through a double. A number whose text a double reproduces stays a plain number; others become ExactNumber.
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
  let root: JsonNode | undefined;
  try {
    root = parseJsonTree(text);
  } catch (err) {
    if (err instanceof JsonSyntaxError) throw new SyntaxError(`${err.message} at position ${err.offset}`);
    throw err;
  }
  if (root === undefined) throw new SyntaxError('Unexpected end of JSON input');
  return fromNode(root);
}

function fromNode(node: JsonNode): unknown {
  switch (node.kind) {
    case 'string':
      return node.value;
    case 'number': {
      const n = Number(node.text);
      return String(n) === node.text ? n : new ExactNumber(node.text);
    }
    case 'true':
      return true;
    case 'false':
      return false;
    case 'null':
      return null;
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [k, v] of node.entries) out[k] = fromNode(v);
      return out;
    }
    case 'array':
      return node.items.map(fromNode);
  }
}

/** JSON.stringify, but an ExactNumber is written as its text. */
export function stringifyExact(value: unknown): string {
  if (value instanceof ExactNumber) return value.text;
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : stringifyExact(v))).join(',')}]`;
  const parts: string[] = [];
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) if (v !== undefined) parts.push(`${JSON.stringify(k)}:${stringifyExact(v)}`);
  return `{${parts.join(',')}}`;
}

/** A deep copy that keeps ExactNumbers (they are immutable, so shared). */
export function cloneExact<T>(value: T): T {
  if (value === null || typeof value !== 'object' || value instanceof ExactNumber) return value;
  if (Array.isArray(value)) return value.map(cloneExact) as T;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = cloneExact(v);
  return out as T;
}
