import type { DataType, TensorType } from '../schema/data-type.js';
import type { DocumentType } from '../schema/document-model.js';

/**
 * The columns of a tabular export (Parquet, CSV): `id`, then one per document field, typed from the schema where
 * one is known and otherwise inferred from the first documents. Pure: no I/O.
 */

/** A column's type, independent of the file format that writes it. */
export type ColumnType =
  | { kind: 'int32' | 'int8' | 'int64' | 'float' | 'double' | 'bool' | 'string' | 'bytes' }
  /** Any value as its JSON text (a string column). */
  | { kind: 'json' }
  /** A dense tensor's cells in row-major order (dimensions sorted by name, as the service orders them). */
  | { kind: 'vector'; cell: 'float' | 'double'; size: number; tensor: TensorType }
  | { kind: 'list'; element: ColumnType }
  | { kind: 'map'; key: ColumnType; value: ColumnType }
  | { kind: 'struct'; fields: Column[] }
  /** A position as degrees. */
  | { kind: 'position' };

/** One column: its name and type. */
export interface Column {
  name: string;
  type: ColumnType;
}

/** The first column: the document id. */
export const idColumn: Column = { name: 'id', type: { kind: 'string' } };

/** The document id's column name: `id`, or `documentid` where a field is called `id`. */
export function idColumnName(fields: Iterable<string>): string {
  for (const f of fields) if (f === 'id') return 'documentid';
  return 'id';
}

/** The id column, then the fields' columns. */
export function withIdColumn(fields: Column[]): Column[] {
  return [{ ...idColumn, name: idColumnName(fields.map((f) => f.name)) }, ...fields];
}

/** The columns of a document type: `id`, then its fields in the order the schema declares them. */
export function columnsOfDocumentType(type: DocumentType): Column[] {
  return withIdColumn([...type.fields].map(([name, t]) => ({ name, type: columnTypeOf(t) })));
}

/** The column type a schema type maps to (see docs/export-formats.md for the table). */
export function columnTypeOf(t: DataType): ColumnType {
  switch (t.kind) {
    case 'primitive':
      switch (t.name) {
        case 'int':
          return { kind: 'int32' };
        case 'byte':
          return { kind: 'int8' };
        case 'long':
          return { kind: 'int64' };
        case 'float':
        case 'float16':
          return { kind: 'float' };
        case 'double':
          return { kind: 'double' };
        case 'bool':
          return { kind: 'bool' };
        case 'raw':
          return { kind: 'bytes' };
        default:
          // string, uri, predicate: text.
          return { kind: 'string' };
      }
    case 'array':
      return { kind: 'list', element: columnTypeOf(t.element) };
    case 'weightedset':
      return { kind: 'map', key: columnTypeOf(t.element), value: { kind: 'int32' } };
    case 'map':
      return { kind: 'map', key: columnTypeOf(t.key), value: columnTypeOf(t.value) };
    case 'struct':
      return { kind: 'struct', fields: [...t.fields].map(([name, f]) => ({ name, type: columnTypeOf(f) })) };
    case 'position':
      return { kind: 'position' };
    case 'reference':
      return { kind: 'string' };
    case 'tensor': {
      const dims = t.tensor.dimensions;
      const dense = dims.length > 0 && dims.every((d) => d.indexed && d.size !== undefined);
      if (!dense) return { kind: 'json' };
      return {
        kind: 'vector',
        cell: t.tensor.cellType === 'double' ? 'double' : 'float',
        size: dims.reduce((n, d) => n * d.size!, 1),
        tensor: t.tensor,
      };
    }
    case 'unknown':
      return { kind: 'json' };
  }
}

/**
 * Columns inferred from documents' fields (a schema-less export): the id, then each field in the order it first
 * appears. A field whose values are all booleans is `bool`, all integers `int64`, all numbers `double`, all strings
 * `string`; anything else (objects, arrays, a mix, only nulls) is its JSON text.
 */
export function inferColumns(rows: readonly Record<string, unknown>[]): Column[] {
  const kinds = new Map<string, Set<string>>();
  for (const row of rows) {
    for (const [name, v] of Object.entries(row)) {
      let seen = kinds.get(name);
      if (seen === undefined) kinds.set(name, (seen = new Set()));
      if (v !== null && v !== undefined) seen.add(kindOfValue(v));
    }
  }
  return withIdColumn([...kinds].map(([name, seen]) => ({ name, type: inferredType(seen) })));
}

function kindOfValue(v: unknown): string {
  if (typeof v === 'bigint') return 'integer';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v === 'object' ? 'json' : typeof v;
}

function inferredType(seen: Set<string>): ColumnType {
  if (seen.size === 1 && seen.has('boolean')) return { kind: 'bool' };
  if (seen.size === 1 && seen.has('integer')) return { kind: 'int64' };
  if ([...seen].every((k) => k === 'integer' || k === 'number') && seen.size > 0) return { kind: 'double' };
  if (seen.size === 1 && seen.has('string')) return { kind: 'string' };
  return { kind: 'json' };
}
