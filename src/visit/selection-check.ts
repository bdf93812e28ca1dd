import { VespaBulkError, isVespaBulkError } from '../core/errors.js';
import { closestName } from '../core/closest-name.js';
import type { DocumentType } from '../schema/document-model.js';
import { parseSelection, selectionReferences, type Selection } from '../selection/index.js';

/**
 * Refuses a selection that does not parse, before a visit or bulk run sends anything: the service would answer
 * 400 only once the request reaches it, and on a long export that is after the set-up, or, with several
 * slices, once per slice. The message points at the position, under the selection as given.
 */
export function checkSelectionSyntax(selection: string | undefined): void {
  if (selection === undefined || selection.trim() === '') return;
  try {
    parseSelection(selection);
  } catch (err) {
    if (!isVespaBulkError(err, 'VB_SELECTION_SYNTAX')) throw err;
    throw pointed(selection, err.place?.position ?? 0, err.message, err);
  }
}

/**
 * Refuses a selection that names a document type or field the schema does not have, when the schema is known: the
 * service compares a missing field as matching nothing, so
 * `music.yeer > 2000` would visit, update or delete nothing and end with exit 0. A near name is suggested.
 * Call before {@link checkSelectionSyntax}: a bare field name (`year > 2000`) is named here; other syntax errors are
 * left to it.
 */
export function checkSelectionNames(selection: string | undefined, types: ReadonlyMap<string, DocumentType>): void {
  if (selection === undefined || selection.trim() === '' || types.size === 0) return;
  let parsed: Selection;
  try {
    parsed = parseSelection(selection);
  } catch (err) {
    if (!isVespaBulkError(err, 'VB_SELECTION_SYNTAX')) throw err;
    // `year > 2000`: the parser reads a bare name as a type; where it is a field, name the field.
    const position = err.place?.position ?? 0;
    const name = /^[A-Za-z_]\w*/.exec(selection.slice(position))?.[0];
    const owners = name === undefined || types.has(name) ? [] : typesWithField(types, name);
    if (owners.length === 0) return;
    throw pointed(
      selection,
      position,
      `selection: '${name}' is not a document type; a field is written with its type: did you mean ${owners.map((t) => `${t}.${name}`).join(' or ')}?`,
      err,
    );
  }
  for (const ref of selectionReferences(parsed)) {
    const type = types.get(ref.type);
    if (type === undefined) {
      const near = closestName(ref.type, [...types.keys()]);
      const hint = near !== undefined ? `: did you mean ${near}?` : `; it has ${[...types.keys()].join(', ')}`;
      throw pointed(selection, ref.position, `selection: the schema has no document type '${ref.type}'${hint}`);
    }
    if (ref.kind === 'field' && !type.fields.has(ref.field)) {
      const near = closestName(ref.field, [...type.fields.keys()]);
      throw pointed(
        selection,
        ref.position + ref.type.length + 1,
        `selection: document type '${ref.type}' has no field '${ref.field}'${near !== undefined ? `: did you mean ${ref.type}.${near}?` : ''} (a missing field matches nothing)`,
      );
    }
  }
}

function typesWithField(types: ReadonlyMap<string, DocumentType>, field: string): string[] {
  return [...types.values()].filter((t) => t.fields.has(field)).map((t) => t.name);
}

/** A usage error showing the selection with a caret under `position`, on one line so that the caret lines up. */
function pointed(selection: string, position: number, message: string, cause?: unknown): VespaBulkError {
  const shown = selection.replace(/[\t\r\n]/g, ' ');
  return new VespaBulkError('VB_USAGE', `${message}\n  ${shown}\n  ${' '.repeat(position)}^`, {
    ...(cause !== undefined && { cause }),
  });
}
