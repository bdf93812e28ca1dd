/**
 * Vespa's document selection language: parse once, evaluate against documents. Pure: no I/O.
 *
 * Used for `selection=` on visits and bulk operations, and for test-and-set `condition`.
 * The semantics (three-valued logic, missing fields, collections) are described in ./evaluate.ts.
 */
import { VespaBulkError } from '../core/errors.js';
import type { BoolNode, ValueNode } from './ast.js';
import { compileBool, TRUE, type BoolFn } from './evaluate.js';
import { parse } from './parser.js';

export type { BoolNode, ValueNode } from './ast.js';

/** A document as the selection sees it. */
export interface SelectionDocument {
  /** Full document id, e.g. 'id:music:music:n=123:abc'. */
  id: string;
  /** Document type. */
  type: string;
  /** Field values as parsed JSON. */
  fields: Record<string, unknown>;
}

/** What a selection is evaluated against besides the document (e.g. the time `now()` returns). */
export interface SelectionContext {
  /** Seconds since the epoch that `now()` returns; default the current time, whole seconds. */
  nowSeconds?: number;
}

/** A parsed selection. `root` is the syntax tree (see ./ast.ts). */
export type Selection = { readonly source: string; readonly root: BoolNode };

/** Compiled closures, kept beside each parsed selection so evaluateSelection() compiles only once. */
const compiled = new WeakMap<Selection, BoolFn>();

/**
 * Parses a selection. Throws VespaBulkError('VB_SELECTION_SYNTAX') whose message names the 0-based
 * position and what was expected; `err.place.position` holds the position. An empty (or blank)
 * selection selects every document, as in Vespa.
 * @example
 * ```ts
 * import { bulkOperation, parseSelection } from 'vespa-bulk';
 *
 * const selection = 'music.popularity < 1';
 * parseSelection(selection); // throws VB_SELECTION_SYNTAX, with the position, before anything is deleted
 * await bulkOperation({ endpoint: 'http://127.0.0.1:8080', kind: 'delete-where', cluster: 'content', selection });
 * ```
 */
export function parseSelection(text: string): Selection {
  if (typeof text !== 'string') {
    throw new VespaBulkError(
      'VB_SELECTION_SYNTAX',
      'selection syntax error at position 0: the selection is not a string',
      {
        place: { position: 0 },
      },
    );
  }
  return Object.freeze({ source: text, root: parse(text) });
}

function compiledOf(selection: Selection): BoolFn {
  let fn = compiled.get(selection);
  if (fn === undefined) {
    fn = compileBool(selection.root);
    compiled.set(selection, fn);
  }
  return fn;
}

/** Whether the document matches. A selection that evaluates to "invalid" does not match. */
export function evaluateSelection(selection: Selection, doc: SelectionDocument, context?: SelectionContext): boolean {
  return compiledOf(selection)(doc, context) === TRUE;
}

/**
 * Parses once and returns a matcher for the hot path (visiting many documents). Throws like parseSelection().
 * @example
 * ```ts
 * import { compileSelection } from 'vespa-bulk';
 *
 * const matches = compileSelection('music.year > 2000 and music.title != null');
 * console.log(matches({ id: 'id:mynamespace:music::song-1', type: 'music', fields: { year: 2001, title: 'Song 1' } })); // true
 * ```
 */
export function compileSelection(text: string): (doc: SelectionDocument, context?: SelectionContext) => boolean {
  const fn = compiledOf(parseSelection(text));
  return (doc, context) => fn(doc, context) === TRUE;
}

/** A name the selection refers to, where: a bare document type (`music`), or a field (`music.year`). */
export type SelectionReference =
  | { kind: 'type'; type: string; position: number }
  | { kind: 'field'; type: string; field: string; position: number };

/** Every document type and field the selection names, in the order written (what a check against a schema reads). */
export function selectionReferences(selection: Selection): SelectionReference[] {
  const found: SelectionReference[] = [];
  const visitValue = (node: ValueNode): void => {
    switch (node.kind) {
      case 'field':
        found.push({ kind: 'field', type: node.type, field: node.field, position: node.position });
        break;
      case 'arith':
        visitValue(node.left);
        visitValue(node.right);
        break;
      case 'negate':
      case 'call':
        visitValue(node.operand);
        break;
      default:
        break;
    }
  };
  const visitBool = (node: BoolNode): void => {
    switch (node.kind) {
      case 'doctype':
        found.push({ kind: 'type', type: node.type, position: node.position });
        break;
      case 'not':
        visitBool(node.operand);
        break;
      case 'and':
      case 'or':
        visitBool(node.left);
        visitBool(node.right);
        break;
      case 'compare':
        visitValue(node.left);
        visitValue(node.right);
        break;
      default:
        break;
    }
  };
  visitBool(selection.root);
  return found;
}

/** Document types that the selection names as bare type or as `type.field` (used for "unknown type" checks). */
export function referencedTypes(selection: Selection): string[] {
  return [...new Set(selectionReferences(selection).map((r) => r.type))];
}
