import type { VisitEntry } from '../document/visit-entry.js';
import { idColumnName } from './column-types.js';
import { cellText } from './column-values.js';
import { columnError, rowOf, type DocumentRow } from './document-rows.js';
import { defaultRowGroupRows, type TabularLayout } from './parquet-write.js';

/**
 * Visited documents as CSV (RFC 4180): a header row of column names, then a line per document; a cell is quoted
 * when it holds a comma, a quote, a line break or leading/trailing blanks, its quotes doubled. Nested values
 * (structs, arrays, maps, tensors) are their JSON text, an absent field an empty cell. Without a schema the
 * columns are the id (`id`, or `documentid` where a field is called `id`) and the fields of the first `rowGroupRows` documents, in the order they appear.
 */
export class CsvEncoder {
  private names: string[] | undefined;
  private readonly pending: DocumentRow[] = [];
  private readonly inferRows: number;

  /** `header`: the columns of the file being continued (a resumed export), which has its header already. */
  constructor(
    private readonly layout: TabularLayout,
    header?: string[],
  ) {
    this.names = header ?? layout.columns?.map((c) => c.name);
    this.inferRows = layout.rowGroupRows ?? defaultRowGroupRows;
    this.headerDue = header === undefined;
  }

  private headerDue: boolean;
  private known: Set<string> | undefined;

  /** The lines of these documents (and the header before the first), once the columns are known. */
  encode(entries: readonly VisitEntry[]): Buffer[] {
    if (this.names === undefined) {
      for (const e of entries) this.pending.push(rowOf(e));
      return this.pending.length >= this.inferRows ? [this.inferAndFlush()] : [];
    }
    let text = this.takeHeader();
    for (const e of entries) text += this.line(rowOf(e));
    return text === '' ? [] : [Buffer.from(text)];
  }

  /** What is still held: a schema-less export shorter than the inference window. */
  end(): Buffer | undefined {
    if (this.names === undefined) return this.inferAndFlush();
    const header = this.takeHeader();
    return header === '' ? undefined : Buffer.from(header);
  }

  private inferAndFlush(): Buffer {
    const seen = new Set<string>();
    for (const r of this.pending) for (const f in r.fields) seen.add(f);
    this.names = [idColumnName(seen), ...seen];
    let text = this.takeHeader();
    for (const r of this.pending.splice(0)) text += this.line(r);
    return Buffer.from(text);
  }

  private takeHeader(): string {
    if (!this.headerDue) return '';
    this.headerDue = false;
    return `${this.names!.map(quoted).join(',')}\n`;
  }

  private line(row: DocumentRow): string {
    const names = this.names!;
    let text = quoted(row.id);
    for (let i = 1; i < names.length; i++) text += `,${quoted(cellText(row.fields[names[i]]))}`;
    this.known ??= new Set(names.slice(1));
    for (const field in row.fields) {
      if (this.known.has(field)) continue;
      throw columnError(
        row.id,
        field,
        this.layout.columns !== undefined
          ? 'not a field of the schema given'
          : 'not a column of the CSV (its header is set by the first documents)',
        this.layout.columns !== undefined,
      );
    }
    return `${text}\n`;
  }
}

const needsQuotes = /[",\r\n]|^\s|\s$/;

/** A cell as RFC 4180 writes it. */
export function quoted(cell: string): string {
  return needsQuotes.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell;
}
