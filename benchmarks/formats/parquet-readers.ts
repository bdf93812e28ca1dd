/**
 * Which Parquet reader feed uses, by measurement: rows/s and peak RSS reading a ~1 GB Parquet file into one JS
 * object per row (what the row mapping takes), never the whole file in memory.
 *
 *   hyparquet         hyparquet (+ hyparquet-compressors), one whole row group per read (the baseline).
 *   hyparquet-slices  hyparquet, row groups in slices of 8192 rows (rowStart/rowEnd): it decodes a nested
 *                     column's whole chunk for every slice, so this costs (row group / slice) times the work.
 *   parquet-wasm      parquet-wasm streaming record batches of 8192 rows from a lazy file Blob, each decoded
 *                     by apache-arrow (tableFromIPC) and turned into row objects: the way
 *                     src/tabular/parquet-rows.ts reads.
 *   parquet-rows      feed's own reader (src/tabular/parquet-rows.ts: parquet-wasm, cells converted column by column).
 *   duckdb            DuckDB's node API streaming the file in chunks into row objects: a native reference
 *                     point, not a candidate (a 60 MB native addon for one input format).
 *
 * Each reader runs alone in a child process (peak RSS is the process's own, `maxRSS`), one run each. The file:
 * DuckDB writes it once into the temp dir (kept for reruns): an id, a text, two ints, a 384-float list and a
 * struct per row, snappy pages, DuckDB's default row groups (122,880 rows) or `--row-group-size N`.
 * `--max-seconds S` bounds each reader: it stops after the first batch (hyparquet: row group) that ends past S
 * seconds, and its rate is of the rows it read (a slow reader on a large file).
 *
 * Usage: npx tsx benchmarks/formats/parquet-readers.ts [--rows N] [--row-group-size N] [--file PATH] [--max-seconds S] [reader ...]
 */
import { execFileSync } from 'node:child_process';
import { existsSync, openAsBlob, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const sliceRows = 8192;

interface Measured {
  rows: number;
  seconds: number;
  maxRssMb: number;
  /** A checksum over the rows read, so no reader can skip the work and all read the same values. */
  check: number;
}

async function readWith(reader: string, file: string, maxSeconds: number): Promise<Measured> {
  let rows = 0;
  const late = (): boolean => performance.now() - started > maxSeconds * 1000;
  let check = 0;
  const touch = (r: Record<string, unknown>): void => {
    rows++;
    const emb = r.emb as ArrayLike<number>;
    check += emb.length + Number(r.a) + String(r.text).length;
  };
  const started = performance.now();
  if (reader === 'hyparquet' || reader === 'hyparquet-slices') {
    const { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } = await import('hyparquet');
    const { compressors } = await import('hyparquet-compressors');
    const buffer = await asyncBufferFromFile(file);
    const metadata = await parquetMetadataAsync(buffer);
    let start = 0;
    for (const group of metadata.row_groups) {
      const count = Number(group.num_rows);
      const step = reader === 'hyparquet-slices' ? sliceRows : count;
      for (let s = 0; s < count; s += step) {
        const objects = await parquetReadObjects({
          file: buffer,
          metadata,
          compressors,
          rowStart: start + s,
          rowEnd: start + Math.min(count, s + step),
          utf8: false,
        });
        for (const r of objects) touch(r);
        if (late()) break;
      }
      start += count;
      if (late()) break;
    }
  } else if (reader === 'parquet-wasm') {
    const { ParquetFile } = await import('parquet-wasm');
    const { tableFromIPC } = await import('apache-arrow');
    const pq = await ParquetFile.fromFile(await openAsBlob(file));
    const stream = await pq.stream({ batchSize: sliceRows });
    for await (const batch of stream as unknown as AsyncIterable<{ intoIPCStream(): Uint8Array }>) {
      const table = tableFromIPC(batch.intoIPCStream());
      for (const row of table) {
        const o = row!.toJSON() as Record<string, unknown>;
        o.emb = (o.emb as { toArray(): ArrayLike<number> }).toArray();
        touch(o);
      }
      if (late()) break;
    }
  } else if (reader === 'parquet-rows') {
    const { parquetRows } = await import('../../src/tabular/parquet-rows.js');
    const table = await parquetRows(file, file);
    for await (const batch of table.batches) {
      for (const r of batch) touch(r.cells);
      if (late()) break;
    }
  } else if (reader === 'duckdb') {
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const con = await (await DuckDBInstance.create(':memory:', { threads: '1' })).connect();
    const result = await con.stream(`SELECT * FROM read_parquet('${file.replace(/'/g, "''")}')`);
    const names = result.columnNames();
    for (;;) {
      const chunk = await result.fetchChunk();
      if (chunk === null || chunk.rowCount === 0) break;
      for (const r of chunk.getRowObjects(names)) {
        const emb = r.emb as unknown as { items: number[] };
        touch({ ...r, emb: emb.items });
      }
      if (late()) break;
    }
  } else throw new Error(`unknown reader ${reader}`);
  const seconds = (performance.now() - started) / 1000;
  return { rows, seconds, maxRssMb: process.resourceUsage().maxRSS / 1024, check };
}

async function generate(file: string, rows: number, rowGroupSize: number | undefined): Promise<void> {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const con = await (await DuckDBInstance.create()).connect();
  await con.run(`COPY (
    SELECT 'doc-' || i AS id, repeat(md5(i::VARCHAR), 3) AS text, i::INTEGER AS a, (i * 7)::BIGINT AS b,
      list_transform(range(384), x -> random()::FLOAT) AS emb, {'x': i % 100, 'y': 'label ' || (i % 10)} AS s
    FROM range(${rows}) t(i)) TO '${file}' (FORMAT parquet${rowGroupSize === undefined ? '' : `, ROW_GROUP_SIZE ${rowGroupSize}`})`);
}

async function main(): Promise<void> {
  const readerArg = args[args.indexOf('--child') + 1];
  if (args.includes('--child')) {
    const m = await readWith(readerArg, args[args.indexOf('--child') + 2], Number(args[args.indexOf('--child') + 3]));
    process.stdout.write(`${JSON.stringify(m)}\n`);
    return;
  }
  const rows = Number(flag('--rows') ?? 600_000);
  const rowGroupSize = flag('--row-group-size') === undefined ? undefined : Number(flag('--row-group-size'));
  const maxSeconds = Number(flag('--max-seconds') ?? Infinity);
  const file =
    flag('--file') ??
    join(tmpdir(), `vb-parquet-readers-${rows}${rowGroupSize === undefined ? '' : `-rg${rowGroupSize}`}.parquet`);
  if (!existsSync(file)) {
    process.stderr.write(`writing ${rows} rows to ${file} with DuckDB...\n`);
    await generate(file, rows, rowGroupSize);
  }
  const mb = statSync(file).size / 1e6;
  const valued = ['--rows', '--file', '--row-group-size', '--max-seconds'];
  const picked = args.filter((a, i) => !a.startsWith('--') && !valued.includes(args[i - 1]));
  const readers = picked.length > 0 ? picked : ['hyparquet', 'parquet-wasm', 'duckdb', 'hyparquet-slices'];
  const here = fileURLToPath(import.meta.url);
  const results: (Measured & { reader: string })[] = [];
  for (const reader of readers) {
    process.stderr.write(`${reader}...\n`);
    const out = execFileSync(process.execPath, ['--import', 'tsx', here, '--child', reader, file, String(maxSeconds)], {
      encoding: 'utf8',
      maxBuffer: 1 << 20,
      timeout: 900_000,
    });
    results.push({ reader, ...(JSON.parse(out.trim().split('\n').pop()!) as Measured) });
    process.stderr.write(`${JSON.stringify(results.at(-1))}\n`);
  }
  const base = results[0];
  const whole = Math.max(...results.map((r) => r.rows));
  const full = results.find((r) => r.rows === whole)!;
  process.stdout.write(`file: ${file}, ${mb.toFixed(0)} MB, ${whole} rows\n`);
  console.table(
    results.map((r) => ({
      reader: r.reader,
      rows: r.rows,
      'rows/s': Math.round(r.rows / r.seconds),
      'peak RSS MB': Math.round(r.maxRssMb),
      'rows/s vs first': (r.rows / r.seconds / (base.rows / base.seconds)).toFixed(2),
      'RSS vs first': (r.maxRssMb / base.maxRssMb).toFixed(2),
      // A reader stopped by --max-seconds read fewer rows: its checksum cannot be compared.
      'same rows':
        r.rows < whole ? 'bounded' : Math.abs(r.check - full.check) < 1e-6 * Math.abs(full.check) ? 'yes' : 'NO',
    })),
  );
}

await main();
