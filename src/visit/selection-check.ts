import { VespaBulkError, isVespaBulkError } from '../core/errors.js';
import { closestName } from '../core/closest-name.js';
import type { DocumentType } from '../schema/document-model.js';
import { parseSelection, selectionReferences, type Selection } from '../selection/index.js';

/**
 * Refuses a selection before a visit or bulk run sends anything, as bad usage pointing at the position under the
 * selection as given:
 * - one that does not parse: the service would answer 400 only once the request reaches it, and on a long export
 *   that is after the set-up, or, with several slices, once per slice;
 * - with the schema's `types`, one that names a document type or field the schema does not have: the service
 *   compares a missing field as matching nothing, so `music.yeer > 2000` would visit, update or delete nothing and
 *   end with exit 0. A near name is suggested, and a bare field name (`year > 2000`, which the parser reads as a
 *   type) is named with its type.
 */
export function checkSelection(selection: string | undefined, types?: ReadonlyMap<string, DocumentType>): void {
  if (selection === undefined || selection.trim() === '') return;
  const known = types !== undefined && types.size > 0 ? types : undefined;
  let parsed: Selection;
  try {
    parsed = parseSelection(selection);
  } catch (err) {
    if (!isVespaBulkError(err, 'VB_SELECTION_SYNTAX')) throw err;
    const position = err.place?.position ?? 0;
    const message = (known !== undefined && bareField(selection, position, known)) || err.message;
    throw pointed(selection, position, message, err);
  }
  if (known !== undefined) checkNames(selection, parsed, known);
}

/** For `year > 2000`, where the parser failed on a name that is no type but a field of some: what to write instead. */
function bareField(selection: string, position: number, types: ReadonlyMap<string, DocumentType>): string | undefined {
  const name = /^[A-Za-z_]\w*/.exec(selection.slice(position))?.[0];
  if (name === undefined || types.has(name)) return undefined;
  const owners = [...types.values()].filter((t) => t.fields.has(name)).map((t) => t.name);
  if (owners.length === 0) return undefined;
  return `selection: '${name}' is not a document type; a field is written with its type: did you mean ${owners.map((t) => `${t}.${name}`).join(' or ')}?`;
}

function checkNames(selection: string, parsed: Selection, types: ReadonlyMap<string, DocumentType>): void {
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

/** A usage error showing the selection with a caret under `position`, on one line so that the caret lines up. */
function pointed(selection: string, position: number, message: string, cause?: unknown): VespaBulkError {
  const shown = selection.replace(/[\t\r\n]/g, ' ');
  return new VespaBulkError('VB_USAGE', `${message}\n  ${shown}\n  ${' '.repeat(position)}^`, {
    ...(cause !== undefined && { cause }),
  });
}
