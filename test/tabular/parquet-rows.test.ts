import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { parquetRows } from '../../src/tabular/parquet-rows.js';
import { tempDir, type TempDir } from '../support/temp-dir.js';

/** A resumed read of a Parquet file with several row groups starts at the row it was told, in either reader. */
describe('parquetRows skipping rows across row groups', () => {
  let tmp: TempDir;
  let path: string;

  beforeAll(async () => {
    tmp = tempDir();
    path = join(tmp.dir, 'groups.parquet');
    const duck = await (await DuckDBInstance.create(':memory:', { threads: '1' })).connect();
    // DuckDB's smallest row group is 2,048 rows: five groups.
    await duck.run(`COPY (SELECT i AS n FROM range(10000) t(i)) TO '${path}' (FORMAT parquet, ROW_GROUP_SIZE 2048)`);
  });
  afterAll(() => tmp.cleanup());

  const read = async (skip: number) => {
    const table = await parquetRows(path, 'groups.parquet', skip);
    const decoded: [number, number][] = [];
    let placeholders = 0;
    for await (const batch of table.batches)
      for (const row of batch) {
        if (row.line <= skip) placeholders++;
        else decoded.push([row.line, Number(row.cells.n)]);
      }
    return { placeholders, decoded };
  };

  for (const skip of [0, 10, 3000, 4096, 9999, 10000])
    it(`skipping ${skip} rows: each later row once, in order, as line = value + 1`, async () => {
      const { placeholders, decoded } = await read(skip);
      expect(placeholders).toBe(skip);
      expect(decoded.length).toBe(10000 - skip);
      expect(decoded.every(([line, n], i) => line === skip + i + 1 && n === skip + i)).toBe(true);
    });
});
