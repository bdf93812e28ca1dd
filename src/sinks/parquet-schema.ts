import type { SchemaElement } from 'hyparquet-writer';
import type { Column, ColumnType } from './column-types.js';

/**
 * The Parquet schema of columns: every column OPTIONAL (an absent field is null), lists and maps in the standard
 * three-level LIST and MAP layouts, which DuckDB, pyarrow/pandas and Spark read as lists, maps and structs. Pure.
 */
export function parquetSchemaOf(columns: readonly Column[]): SchemaElement[] {
  const out: SchemaElement[] = [{ name: 'root', num_children: columns.length }];
  for (const c of columns) add(out, c.name, c.type, 'OPTIONAL');
  return out;
}

function add(out: SchemaElement[], name: string, type: ColumnType, repetition: 'OPTIONAL' | 'REQUIRED'): void {
  const leaf = (e: Omit<SchemaElement, 'name' | 'repetition_type'>): void =>
    void out.push({ name, repetition_type: repetition, ...e });
  switch (type.kind) {
    case 'int32':
      return leaf({ type: 'INT32' });
    case 'int8':
      return leaf({ type: 'INT32', converted_type: 'INT_8' });
    case 'int64':
      return leaf({ type: 'INT64' });
    case 'float':
      return leaf({ type: 'FLOAT' });
    case 'double':
      return leaf({ type: 'DOUBLE' });
    case 'bool':
      return leaf({ type: 'BOOLEAN' });
    case 'string':
    case 'json':
      return leaf({ type: 'BYTE_ARRAY', converted_type: 'UTF8' });
    case 'bytes':
      return leaf({ type: 'BYTE_ARRAY' });
    case 'vector':
      return list(out, name, repetition, { kind: type.cell });
    case 'list':
      return list(out, name, repetition, type.element);
    case 'map':
      out.push({ name, repetition_type: repetition, converted_type: 'MAP', num_children: 1 });
      out.push({ name: 'key_value', repetition_type: 'REPEATED', num_children: 2 });
      add(out, 'key', type.key, 'REQUIRED');
      add(out, 'value', type.value, 'OPTIONAL');
      return;
    case 'struct':
      out.push({ name, repetition_type: repetition, num_children: type.fields.length });
      for (const f of type.fields) add(out, f.name, f.type, 'OPTIONAL');
      return;
    case 'position':
      out.push({ name, repetition_type: repetition, num_children: 2 });
      add(out, 'lat', { kind: 'double' }, 'OPTIONAL');
      add(out, 'lng', { kind: 'double' }, 'OPTIONAL');
      return;
  }
}

function list(out: SchemaElement[], name: string, repetition: 'OPTIONAL' | 'REQUIRED', element: ColumnType): void {
  out.push({ name, repetition_type: repetition, converted_type: 'LIST', num_children: 1 });
  out.push({ name: 'list', repetition_type: 'REPEATED', num_children: 1 });
  add(out, 'element', element, 'OPTIONAL');
}
