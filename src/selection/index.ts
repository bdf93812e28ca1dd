import { VespaBulkError } from '../errors.js';

/** A document as the selection sees it. */
export interface SelectionDocument {
  /** Full document id, e.g. 'id:music:music:n=123:abc'. */
  id: string;
  /** Document type. */
  type: string;
  /** Field values as parsed JSON. */
  fields: Record<string, unknown>;
}

export interface SelectionContext {
  /** Seconds since the epoch for now(); default Date.now()/1000. */
  nowSeconds?: number;
}

export type Selection = { readonly source: string };

export function parseSelection(text: string): Selection {
  if (typeof text !== 'string') throw new VespaBulkError('VB_SELECTION_SYNTAX', 'selection is not a string', { place: { position: 0 } });
  return { source: text };
}

export function evaluateSelection(_selection: Selection, _doc: SelectionDocument, _context?: SelectionContext): boolean {
  return true;
}

export function compileSelection(text: string): (doc: SelectionDocument, context?: SelectionContext) => boolean {
  const selection = parseSelection(text);
  return (doc, context) => evaluateSelection(selection, doc, context);
}

/** Document types that the selection names as bare type or as `type.field` (used for "unknown type" checks). */
export function referencedTypes(_selection: Selection): string[] {
  return [];
}
