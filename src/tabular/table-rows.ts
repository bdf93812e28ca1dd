import type { Row } from './row-operation.js';

/** One row as a table reader gives it: its cells by column, and its line (CSV: where it starts; Parquet: its 1-based row number). */
export interface TableRow {
  line: number;
  cells: Row;
  /** Set when the row's shape is wrong (a CSV line with another number of cells than the header): the row fails with it. */
  problem?: string;
}

/** A table being read: its column names (known before any row), then its rows in batches. */
export interface TableRows {
  columns: readonly string[];
  batches: AsyncIterable<TableRow[]>;
}
