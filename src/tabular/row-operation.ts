import { VespaBulkError } from '../core/errors.js';
import { parseDocumentId } from '../document/id.js';
import type { DocumentModel, DocumentType } from '../schema/document-model.js';
import type { DataType } from '../schema/data-type.js';
import { CellError, naturalValue, typedValue, type CellContext } from './field-value.js';
import { jsonText, type TimestampUnit } from './json-value.js';

/**
 * How the rows of a table (CSV, TSV, Parquet) become feed operations: where the document id comes from, which
 * operation, and the schema that types the fields. Exactly one of `idField` or `id`, unless the table has a
 * column named `id` (then `idField: 'id'` is the default).
 */
export interface RowOptions {
  /**
   * The column that holds the document id. Alone: full ids (`id:ns:type::local`). With `documentType`: the
   * id's local part, the id being `id:<namespace>:<documentType>::<value>`.
   */
  idField?: string;
  /**
   * A template of the id with `{column}` placeholders, e.g. `id:shop:product::{doc_id}`: each is replaced by
   * the row's value of that column (a null or empty one fails the row).
   */
  id?: string;
  /** The document type, with `idField` holding local parts. */
  documentType?: string;
  /** The namespace with `documentType`. Default: the document type. */
  namespace?: string;
  /** `put` (default); `update`, each field as `{"assign": value}`; `remove`, which uses only the id. */
  operation?: 'put' | 'update' | 'remove';
  /** Updates create the document when it does not exist (`"create": true`). */
  create?: boolean;
  /** What timestamp cells become: a long of seconds (default), milliseconds or microseconds since the epoch. */
  timestampUnit?: TimestampUnit;
  /** An application package (a directory, a .zip or a gzipped tar) whose schemas type the fields. */
  app?: string;
  /** A config server URL whose active application's schemas type the fields (instead of `app`). */
  configUrl?: string;
  /** The schemas, already read (instead of `app` or `configUrl`). */
  model?: DocumentModel;
}

/** A row's values by column name, as a reader gives them. */
export type Row = Record<string, unknown>;

/** Turns rows of one table into operations' JSON bytes; built once per input by `rowMapping`. */
export interface RowMapping {
  /** The operation of one row; throws VB_BAD_ROW saying why when the row cannot become a valid operation. */
  operation(row: Row): Buffer;
}

/** The placeholders of an id template, in order; throws VB_USAGE for an unclosed brace or an empty name. */
export function templateColumns(template: string): string[] {
  const out: string[] = [];
  const re = /\{([^{}]*)\}/g;
  for (let m = re.exec(template); m !== null; m = re.exec(template)) {
    if (m[1] === '') throw new VespaBulkError('VB_USAGE', `--id '${template}': empty placeholder {}`);
    out.push(m[1]);
  }
  if (template.replace(re, '').includes('{') || template.replace(re, '').includes('}'))
    throw new VespaBulkError('VB_USAGE', `--id '${template}': unbalanced { }`);
  return out;
}

/** Refuses RowOptions that cannot work (VB_USAGE), before any input is read. */
export function checkRowOptions(o: RowOptions): void {
  if (o.id !== undefined && o.idField !== undefined)
    throw new VespaBulkError('VB_USAGE', 'give the document id with one of --id-field or --id, not both');
  if (o.id !== undefined) {
    if (o.documentType !== undefined || o.namespace !== undefined)
      throw new VespaBulkError(
        'VB_USAGE',
        '--id names the namespace and document type itself: leave out --document-type and --namespace',
      );
    if (templateColumns(o.id).length === 0)
      throw new VespaBulkError(
        'VB_USAGE',
        `--id '${o.id}' has no {column} placeholder: every row would get the same id`,
      );
  }
  if (o.namespace !== undefined && o.documentType === undefined)
    throw new VespaBulkError('VB_USAGE', '--namespace needs --document-type');
  if (o.operation !== undefined && !['put', 'update', 'remove'].includes(o.operation))
    throw new VespaBulkError('VB_USAGE', `--operation must be put, update or remove, not '${String(o.operation)}'`);
  if (o.create === true && o.operation !== 'update')
    throw new VespaBulkError('VB_USAGE', '--create applies to --operation update only');
  if (o.timestampUnit !== undefined && !['s', 'ms', 'us'].includes(o.timestampUnit))
    throw new VespaBulkError('VB_USAGE', `--timestamp-unit must be s, ms or us, not '${String(o.timestampUnit)}'`);
  if ([o.app, o.configUrl, o.model].filter((x) => x !== undefined).length > 1)
    throw new VespaBulkError('VB_USAGE', 'give the schema with one of --app or --config-url');
}

/**
 * The mapping for a table with `columns` (`model`: the schemas, when known). Refuses (VB_USAGE) an id column
 * or placeholder the table lacks, so a wrong flag fails at once instead of failing every row.
 *
 * Fields: every column but those that make the id. A column that makes the id is a field too when the
 * schema knows it as a field of the document type (with no schema it is not: most tables carry the key
 * only to make the id, and an unknown field would fail every row).
 *
 * `text`: the cells are text (CSV, TSV): typed fields parse it (numbers, booleans, JSON for structured
 * fields); without a schema they stay text. An empty cell is a null.
 */
export function rowMapping(
  options: RowOptions,
  columns: readonly string[],
  where: string,
  model?: DocumentModel,
  text = false,
): RowMapping {
  checkRowOptions(options);
  let idField = options.idField;
  if (options.id === undefined && idField === undefined) {
    if (!columns.includes('id'))
      throw new VespaBulkError(
        'VB_USAGE',
        `${where}: say where the document id comes from: --id-field COLUMN or --id 'id:ns:type::{COLUMN}' (columns: ${columns.join(', ')})`,
      );
    idField = 'id';
  }
  const idColumns = options.id !== undefined ? templateColumns(options.id) : [idField!];
  for (const c of idColumns)
    if (!columns.includes(c))
      throw new VespaBulkError(
        'VB_USAGE',
        `${where}: no column '${c}' for the document id (columns: ${columns.join(', ')})`,
      );
  const kind = options.operation ?? 'put';
  const cx: CellContext = { timestampUnit: options.timestampUnit ?? 's', text };
  const prefix =
    options.documentType !== undefined
      ? `id:${options.namespace ?? options.documentType}:${options.documentType}::`
      : undefined;
  const template = options.id;

  const idOf = (row: Row): string => {
    if (template === undefined) {
      const text = cellText(row[idField!], idField!);
      return prefix === undefined ? text : prefix + text;
    }
    return template.replace(/\{([^{}]*)\}/g, (_, c: string) => cellText(row[c], c));
  };

  // Per document type: the columns that are fields (known once the type is).
  const fieldColumns = new Map<string, { name: string; type?: DataType }[]>();
  const fieldsFor = (type: string): { name: string; type?: DataType }[] => {
    let list = fieldColumns.get(type);
    if (list !== undefined) return list;
    let doc: DocumentType | undefined;
    if (model !== undefined) {
      doc = model.types.get(type);
      if (doc === undefined)
        throw new CellError(
          `document type '${type}' is not in the application package (it has ${[...model.types.keys()].join(', ')})`,
        );
    }
    list = [];
    for (const c of columns) {
      const fieldType = doc?.fields.get(c);
      if (idColumns.includes(c) && fieldType === undefined) continue;
      list.push({ name: c, ...(fieldType !== undefined && { type: fieldType }) });
    }
    fieldColumns.set(type, list);
    return list;
  };

  return {
    operation(row: Row): Buffer {
      let id: string | undefined;
      let column: string | undefined;
      try {
        id = idOf(row);
        const docType = parseDocumentId(id).type;
        if (kind === 'remove') return Buffer.from(`{"remove":${JSON.stringify(id)}}`);
        const fields: Record<string, unknown> = {};
        for (const f of fieldsFor(docType)) {
          column = f.name;
          const raw = row[f.name];
          if (raw === null || raw === undefined || (cx.text && raw === '')) continue;
          if (f.type === undefined && model !== undefined && !model.ignoreUndefinedFields)
            throw new CellError(`no field '${f.name}' in document type '${docType}'`);
          const value = f.type !== undefined ? typedValue(raw, f.type, cx) : naturalValue(raw, cx);
          if (value === undefined) continue;
          fields[f.name] = kind === 'update' ? { assign: value } : value;
        }
        column = undefined;
        const head =
          kind === 'update'
            ? `{"update":${JSON.stringify(id)}${options.create === true ? ',"create":true' : ''}`
            : `{"put":${JSON.stringify(id)}`;
        return Buffer.from(`${head},"fields":${jsonText(fields)}}`);
      } catch (err) {
        const why =
          err instanceof CellError || err instanceof VespaBulkError
            ? err.message
            : String((err as Error)?.message ?? err);
        const at = column !== undefined ? `column '${column}': ` : '';
        throw new VespaBulkError('VB_BAD_ROW', `${at}${why}`, {
          cause: err,
          ...(id !== undefined && { place: { documentId: id } }),
        });
      }
    },
  };
}

function cellText(v: unknown, column: string): string {
  if (v === null || v === undefined || v === '') throw new CellError(`column '${column}' of the id is empty`);
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  throw new CellError(`column '${column}' of the id is not text or a number`);
}
