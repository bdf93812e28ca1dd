import { DuckDBInstance } from '@duckdb/node-api';

/** Runs SQL in an in-memory DuckDB: rows as JSON-able objects (BIGINT and the like as strings). */
export async function duck(sql: string): Promise<Record<string, unknown>[]> {
  const db = await DuckDBInstance.create(':memory:');
  const connection = await db.connect();
  try {
    return (await connection.runAndReadAll(sql)).getRowObjectsJson();
  } finally {
    connection.closeSync();
    db.closeSync();
  }
}

/** Column name → DuckDB type of what `from` reads. */
export async function duckTypes(from: string): Promise<Record<string, string>> {
  const rows = await duck(`DESCRIBE SELECT * FROM ${from}`);
  return Object.fromEntries(rows.map((r) => [r.column_name as string, r.column_type as string]));
}
