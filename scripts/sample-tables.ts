/**
 * Writes the sample tables the README feeds: samples/products.parquet (40 products) and samples/products.csv (20
 * more), rows as a shop's database or a Spark job hands them over, for
 *   vespa-bulk feed samples/products.parquet --id 'id:shop:product::{sku}' --app samples/app --transform samples/reshape.mjs
 * The product schema of samples/app types their columns; samples/reshape.mjs leaves out discontinued products and
 * adds the price band. Deterministic, so the committed files never drift from this script (a test compares them):
 *   npx tsx scripts/sample-tables.ts
 * The Parquet file is written by the project's own writer (src/sinks over hyparquet-writer), its columns typed from
 * the schema as `visit --format parquet` types an export's; the CSV as DuckDB writes one (lists as `[a, b]`).
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import { columnTypeOf, type Column } from '../src/sinks/column-types.js';
import { columnValue } from '../src/sinks/column-values.js';
import { quoted } from '../src/sinks/csv-write.js';
import { writeRowGroup } from '../src/sinks/parquet-row-group.js';
import { parquetSchemaOf } from '../src/sinks/parquet-schema.js';
import { modelFromPackage } from '../src/deploy/load-model.js';

const samples = (name: string): string => fileURLToPath(new URL(`../samples/${name}`, import.meta.url));

/** The product fields a table holds: all the schema's but `price_band`, which the transform adds. */
const tableFields = ['sku', 'title', 'brand', 'price', 'tags', 'status', 'embedding'] as const;
type Product = Record<(typeof tableFields)[number], unknown>;

function products(): Product[] {
  let state = 0x2545f491;
  const rand = (): number => {
    // xorshift32: the same numbers on every Node version, unlike Math.random.
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x100000000;
  };
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
  const kinds = [
    'Kettle, 1.7 l',
    'Desk lamp',
    'Backpack',
    'Running shoes',
    'Coffee grinder',
    'Rain jacket',
    'Headphones',
    'Water bottle',
    'Yoga mat',
    "Chef's knife",
  ];
  const brands = ['Nordlys', 'Acme', 'Kobe Works', 'Vale & Co', 'Solstice'];
  const tags = ['kitchen', 'outdoor', 'office', 'sport', 'gift', 'eco', 'sale'];
  return Array.from({ length: 60 }, (_, i) => ({
    sku: `P-${String(i + 1).padStart(4, '0')}`,
    title: `${pick(kinds)} ${pick(['mini', 'pro', 'classic', 'travel', '"limited"'])}`,
    brand: pick(brands),
    price: Math.round(5 + rand() * 29500) / 100,
    tags: [...new Set([pick(tags), pick(tags)])],
    status: i % 9 === 4 ? 'discontinued' : i % 13 === 7 ? 'preorder' : 'active',
    embedding: Array.from({ length: 4 }, () => Math.round((rand() * 2 - 1) * 1000) / 1000),
  }));
}

/** The table's columns, typed by samples/app's product schema. */
async function columns(): Promise<Column[]> {
  const product = (await modelFromPackage(samples('app'))).types.get('product');
  if (product === undefined) throw new Error('samples/app has no document type product');
  return tableFields.map((name) => ({ name, type: columnTypeOf(product.fields.get(name)!) }));
}

function parquet(rows: readonly Product[], cols: readonly Column[]): Buffer {
  const bytes = new ByteWriter(1 << 16);
  const writer = new ParquetWriter({
    writer: bytes,
    schema: parquetSchemaOf(cols),
    codec: 'SNAPPY',
    createdBy: 'vespa-bulk',
  });
  writeRowGroup(
    writer,
    cols,
    cols.map((c) => rows.map((r) => columnValue(r[c.name as keyof Product], c.type))),
    rows.length,
  );
  // Synchronous: the ByteWriter has no async flush.
  void writer.finish();
  return Buffer.from(bytes.getBytes());
}

function csv(rows: readonly Product[]): string {
  const cell = (v: unknown): string => (Array.isArray(v) ? `[${v.join(', ')}]` : String(v));
  return [tableFields.join(','), ...rows.map((r) => tableFields.map((f) => quoted(cell(r[f]))).join(','))]
    .map((line) => `${line}\n`)
    .join('');
}

/** What the script writes: the Parquet file's bytes and the CSV text. */
export async function sampleTables(): Promise<{ parquet: Buffer; csv: string }> {
  const rows = products();
  return { parquet: parquet(rows.slice(0, 40), await columns()), csv: csv(rows.slice(40)) };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const tables = await sampleTables();
  writeFileSync(samples('products.parquet'), tables.parquet);
  writeFileSync(samples('products.csv'), tables.csv);
}
