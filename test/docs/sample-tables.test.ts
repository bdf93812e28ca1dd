import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sampleTables } from '../../scripts/sample-tables.js';

const committed = (name: string): Buffer => readFileSync(new URL(`../../samples/${name}`, import.meta.url));

describe('the sample tables', () => {
  it('are what scripts/sample-tables.ts writes, so they can be made again', async () => {
    const tables = await sampleTables();
    expect(tables.parquet.equals(committed('products.parquet'))).toBe(true);
    expect(tables.csv).toBe(committed('products.csv').toString('utf8'));
  });
});
