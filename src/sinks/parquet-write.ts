import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import type { VisitEntry } from '../document/visit-entry.js';
import { idColumn, inferColumns, type Column } from './column-types.js';
import { columnArrays, rowOf, type DocumentRow } from './document-rows.js';
import { writeRowGroup } from './parquet-row-group.js';
import { parquetSchemaOf } from './parquet-schema.js';

/**
 * Rows per row group. A row group is held in memory until written (10,000 documents with a 384-float embedding are
 * about 40 MB as JS values), and without a schema the first one sets the columns.
 */
export const defaultRowGroupRows = 10_000;

/** How a Parquet (or CSV) export lays out its columns. */
export interface TabularLayout {
  /** The columns (`id` first), from the schema; undefined infers them from the first row group. */
  columns?: Column[];
  /** Rows per row group (Parquet), and the rows inferred from without a schema. Default {@link defaultRowGroupRows}. */
  rowGroupRows?: number;
}

/**
 * Visited documents as one Parquet file, written sequentially: the magic bytes, a row group per `rowGroupRows`
 * documents, and the footer at `end()`. Nothing is ever rewritten, so the bytes can go to a pipe. Columns are
 * SNAPPY-compressed (built into the writer; Node 20 has no zstd compressor).
 */
export class ParquetEncoder {
  private readonly rows: DocumentRow[] = [];
  private readonly groupRows: number;
  private columns: Column[] | undefined;
  private writer: ParquetWriter | undefined;
  private readonly bytes = new ByteWriter(1 << 20);

  constructor(private readonly layout: TabularLayout) {
    this.groupRows = layout.rowGroupRows ?? defaultRowGroupRows;
  }

  /** Buffers the documents; returns the bytes of each row group they completed. */
  encode(entries: readonly VisitEntry[]): Buffer[] {
    const out: Buffer[] = [];
    for (const e of entries) {
      this.rows.push(rowOf(e));
      if (this.rows.length >= this.groupRows) out.push(this.flushGroup());
    }
    return out;
  }

  /** The last row group and the footer. */
  end(): Buffer {
    const last = this.rows.length > 0 ? this.flushGroup() : undefined;
    const writer = this.writerFor([]);
    // Synchronous: the ByteWriter has no async flush, so neither finish nor write returns a promise.
    void writer.finish();
    const tail = this.take();
    return last === undefined ? tail : Buffer.concat([last, tail]);
  }

  private flushGroup(): Buffer {
    const rows = this.rows.splice(0);
    const writer = this.writerFor(rows);
    const data = columnArrays(rows, this.columns!, this.layout.columns !== undefined);
    writeRowGroup(writer, this.columns!, data, rows.length);
    return this.take();
  }

  private writerFor(rows: readonly DocumentRow[]): ParquetWriter {
    if (this.writer === undefined) {
      this.columns = this.layout.columns ?? (rows.length > 0 ? inferColumns(rows.map((r) => r.fields)) : [idColumn]);
      this.writer = new ParquetWriter({
        writer: this.bytes,
        schema: parquetSchemaOf(this.columns),
        codec: 'SNAPPY',
        createdBy: 'vespa-bulk',
      });
    }
    return this.writer;
  }

  /** The bytes written since the last take, copied out of the writer's buffer, which is then reused. */
  private take(): Buffer {
    const out = Buffer.from(this.bytes.getBytes());
    this.bytes.index = 0;
    return out;
  }
}
