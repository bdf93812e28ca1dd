import { VespaBulkError } from '../core/errors.js';
import { topLevelValue } from '../core/json-scan.js';
import type { VisitEntry } from '../document/visit-entry.js';
import { columnValue, ColumnMismatch } from './column-values.js';
import type { Column } from './column-types.js';
import { parseExactJson } from '../core/exact-json.js';

/** A visited document as a table row: its id and its fields, parsed with longs exact. */
export interface DocumentRow {
  id: string;
  fields: Record<string, unknown>;
}

/**
 * The row of a visited document. A remove has no row: a tabular export refuses `includeRemoves` and `since` up
 * front, so one here is what a transform returned (VB_TRANSFORM, as its other bad results).
 */
export function rowOf(entry: VisitEntry): DocumentRow {
  if (entry.kind === 'remove') {
    throw new VespaBulkError(
      'VB_TRANSFORM',
      `transform: a remove has no row in a table; return null to leave a document out of a --format parquet|csv export (document ${entry.id})`,
      { place: { documentId: entry.id } },
    );
  }
  const f = topLevelValue(entry.buf, entry.start, entry.end, 'fields');
  const fields =
    f === undefined ? {} : (parseExactJson(entry.buf.toString('utf8', f.start, f.end)) as Record<string, unknown>);
  return { id: entry.id, fields };
}

/**
 * Rows as column arrays of `columns` (the id first). A field with no column, or a value that does not fit its column, is
 * a VB_COLUMN_TYPE error naming the document and field: nothing is dropped silently.
 */
export function columnArrays(rows: readonly DocumentRow[], columns: readonly Column[], typed: boolean): unknown[][] {
  const known = new Set(columns.slice(1).map((c) => c.name));
  const out = columns.map(() => new Array<unknown>(rows.length));
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r];
    out[0][r] = row.id;
    for (const name in row.fields)
      if (!known.has(name))
        throw columnError(
          row.id,
          name,
          typed
            ? 'not a field of the schema given'
            : 'not among the fields of the first documents, which set the columns',
          typed,
        );
    for (let c = 1; c < columns.length; c++) {
      const { name, type } = columns[c];
      try {
        out[c][r] = columnValue(row.fields[name], type);
      } catch (err) {
        if (err instanceof ColumnMismatch) throw columnError(row.id, name, err.message, typed);
        throw err;
      }
    }
  }
  return out;
}

/** A document's field that cannot be written to the columns. */
export function columnError(id: string, field: string, reason: string, typed: boolean): VespaBulkError {
  const hint = typed
    ? ''
    : ' (without a schema the columns are inferred from the first documents; give --app or --config-url to type them from the schema)';
  return new VespaBulkError('VB_COLUMN_TYPE', `${id}: field '${field}': ${reason}${hint}`, {
    place: { documentId: id },
  });
}
