import { isVespaBulkError } from '../../core/errors.js';
import { compileSelection, type SelectionDocument } from '../../selection/index.js';
import { badRequest } from './responses.js';
import { fieldsOf, type StoredEntry } from './document-store.js';

/**
 * Compiled document selections, cached by text: feeds repeat the same condition on every operation.
 * A syntax error becomes a 400 whose message names the position.
 */
export type Matcher = (doc: SelectionDocument) => boolean;

const maxCached = 1000;

/** One per document server. */
export class SelectionCache {
  private readonly cache = new Map<string, Matcher>();

  compile(text: string, what: 'selection' | 'condition'): Matcher {
    let matcher = this.cache.get(text);
    if (matcher !== undefined) return matcher;
    try {
      matcher = compileSelection(text);
    } catch (err) {
      const position = isVespaBulkError(err) ? err.place?.position : undefined;
      const detail = err instanceof Error ? err.message : String(err);
      const where = position !== undefined && !/position \d+/.test(detail) ? ` at position ${position}` : '';
      throw badRequest(`Failed parsing document ${what} '${text}': ${detail}${where}`);
    }
    if (this.cache.size >= maxCached) this.cache.clear();
    this.cache.set(text, matcher);
    return matcher;
  }
}

/**
 * Evaluates against a live entry. A document the expression cannot be evaluated on does not match, as in
 * the service (one odd document must not fail a whole visit or turn a condition into an error).
 */
export function matches(matcher: Matcher, entry: StoredEntry): boolean {
  try {
    return matcher({ id: entry.id, type: entry.type, fields: fieldsOf(entry) });
  } catch {
    return false;
  }
}
