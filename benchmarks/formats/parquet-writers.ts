/**
 * Which Parquet writer the export uses, by measurement: hyparquet-writer (pure JS, incremental `ParquetWriter`, the
 * export's own path: src/sinks/parquet-write.ts) against parquet-wasm + apache-arrow (Arrow record batches of each
 * row group, written by Rust's parquet crate in WebAssembly). The same documents (an id, a title, an int, a
 * 384-float embedding as a dense tensor, a struct) are written in row groups of 10,000, each writer in its own child
 * process so that its peak RSS is its own; figures are printed as ratios to hyparquet-writer's in the same run.
 * Both use SNAPPY; parquet-wasm also with ZSTD (hyparquet-writer has no zstd compressor, nor has Node 20's zlib).
 *
 *   npx tsx benchmarks/formats/parquet-writers.ts [--count 200000] [--dims 384]
 */
import { execFileSync } from 'node:child_process';
import { statSync, mkdtempSync, rmSync, writeFileSync, openSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '200000' },
    dims: { type: 'string', default: '384' },
    child: { type: 'string' },
    out: { type: 'string' },
  },
});
const count = Number(values.count);
const dims = Number(values.dims);
const groupRows = 10_000;
const writers = ['hyparquet-writer', 'parquet-wasm', 'parquet-wasm-zstd'] as const;
type WriterName = (typeof writers)[number];

/** One row group's documents as the export sees them: visited JSON lines. */
function groupLines(start: number, rows: number): Buffer[] {
  const out: Buffer[] = [];
  for (let n = start; n < start + rows; n++) {
    // Random cells, as embeddings are: no dictionary or run-length encoding helps.
    const emb = Array.from({ length: dims }, () => Math.fround(Math.random() * 2 - 1));
    out.push(
      Buffer.from(
        JSON.stringify({
          put: `id:bench:doc::${n}`,
          fields: {
            title: `a title of document number ${n}`,
            year: 1900 + (n % 120),
            emb: { type: `tensor<float>(x[${dims}])`, values: emb },
            st: { a: n, b: `b${n}` },
          },
        }),
      ),
    );
  }
  return out;
}

async function child(name: WriterName, out: string): Promise<void> {
  const fd = openSync(out, 'w');
  let writeSeconds = 0;
  const t0 = performance.now();
  if (name === 'hyparquet-writer') {
    const { ParquetEncoder } = await import('../../src/sinks/parquet-write.js');
    const { documentTypesOf } = await import('../../src/schema/document-model.js');
    const { parseSchema } = await import('../../src/schema/sd-schema.js');
    const { columnsOfDocumentType } = await import('../../src/sinks/column-types.js');
    const sd = `schema doc { document doc { struct pair { field a type int {} field b type string {} }
      field title type string {} field year type int {} field emb type tensor<float>(x[${dims}]) {} field st type pair {} } }`;
    const columns = columnsOfDocumentType(documentTypesOf([parseSchema(sd, 'doc.sd')]).get('doc')!);
    const encoder = new ParquetEncoder({ columns, rowGroupRows: groupRows });
    for (let start = 0; start < count; start += groupRows) {
      const lines = groupLines(start, Math.min(groupRows, count - start));
      const t = performance.now();
      const entries = lines.map((buf, i) => ({
        kind: 'put' as const,
        id: `id:bench:doc::${start + i}`,
        shape: 'feed' as const,
        buf,
        start: 0,
        end: buf.length,
      }));
      for (const b of encoder.encode(entries)) writeSync(fd, b);
      writeSeconds += (performance.now() - t) / 1000;
    }
    const t = performance.now();
    writeSync(fd, encoder.end());
    writeSeconds += (performance.now() - t) / 1000;
  } else {
    const arrow = await import('apache-arrow');
    const pw = await import('parquet-wasm');
    const {
      Field,
      FixedSizeList,
      Float32,
      Int32,
      Struct,
      Utf8,
      makeData,
      makeVector,
      vectorFromArray,
      makeTable,
      tableToIPC,
    } = arrow;
    const props = new pw.WriterPropertiesBuilder()
      .setCompression(name === 'parquet-wasm-zstd' ? pw.Compression.ZSTD : pw.Compression.SNAPPY)
      .build();
    const embType = new FixedSizeList(dims, new Field('element', new Float32(), true));
    const stType = new Struct([new Field('a', new Int32(), true), new Field('b', new Utf8(), true)]);
    // parquet-wasm writes a whole table per call: each row group is its own file here, which is the writer's cost
    // without a streaming writer's bookkeeping (transformParquetStream needs a web ReadableStream of batches).
    for (let start = 0; start < count; start += groupRows) {
      const lines = groupLines(start, Math.min(groupRows, count - start));
      const t = performance.now();
      const docs = lines.map(
        (l) =>
          JSON.parse(l.toString()) as {
            put: string;
            fields: { title: string; year: number; emb: { values: number[] }; st: { a: number; b: string } };
          },
      );
      const table = makeTable({
        id: vectorFromArray(
          docs.map((d) => d.put),
          new Utf8(),
        ),
        title: vectorFromArray(
          docs.map((d) => d.fields.title),
          new Utf8(),
        ),
        year: vectorFromArray(
          docs.map((d) => d.fields.year),
          new Int32(),
        ),
        // The cells copied into one Float32Array: Arrow's fastest way in (vectorFromArray of arrays is far slower).
        emb: makeVector(
          makeData({
            type: embType,
            length: docs.length,
            nullCount: 0,
            child: makeData({
              type: new Float32(),
              length: docs.length * dims,
              data: Float32Array.from(docs.flatMap((d) => d.fields.emb.values)),
            }),
          }),
        ),
        st: vectorFromArray(
          docs.map((d) => d.fields.st),
          stType,
        ),
      } as never) as unknown as Parameters<typeof tableToIPC>[0];
      const bytes = pw.writeParquet(pw.Table.fromIPCStream(tableToIPC(table, 'stream')), props);
      writeSync(fd, bytes);
      writeSeconds += (performance.now() - t) / 1000;
    }
  }
  closeSync(fd);
  const usage = process.resourceUsage();
  process.stdout.write(
    JSON.stringify({
      writeSeconds,
      wallSeconds: (performance.now() - t0) / 1000,
      cpuSeconds: (usage.userCPUTime + usage.systemCPUTime) / 1e6,
      maxRssMb: usage.maxRSS / 1024,
      bytes: statSync(out).size,
    }),
  );
}

if (values.child !== undefined) {
  await child(values.child as WriterName, values.out!);
} else {
  const dir = mkdtempSync(join(tmpdir(), 'vb-pq-bench-'));
  const self = fileURLToPath(import.meta.url);
  const results = new Map<WriterName, { writeSeconds: number; cpuSeconds: number; maxRssMb: number; bytes: number }>();
  try {
    for (const w of writers) {
      const out = join(dir, `${w}.parquet`);
      const text = execFileSync(
        process.execPath,
        [...process.execArgv, self, '--child', w, '--out', out, '--count', String(count), '--dims', String(dims)],
        { encoding: 'utf8', maxBuffer: 1 << 20 },
      );
      results.set(w, JSON.parse(text) as never);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const base = results.get('hyparquet-writer')!;
  console.log(
    `${count} documents (${dims}-float embedding, struct, strings), row groups of ${groupRows}; ratios to hyparquet-writer`,
  );
  for (const [w, r] of results) {
    const rate = count / r.writeSeconds;
    console.log(
      `${w.padEnd(18)} ${Math.round(rate).toString().padStart(7)} rows/s (x${(rate / (count / base.writeSeconds)).toFixed(2)})  peak RSS ${Math.round(r.maxRssMb)} MB (x${(r.maxRssMb / base.maxRssMb).toFixed(2)})  file ${(r.bytes / 2 ** 20).toFixed(1)} MB (x${(r.bytes / base.bytes).toFixed(2)})  process CPU ${r.cpuSeconds.toFixed(1)} s`,
    );
  }
  writeFileSync(join(tmpdir(), 'vb-parquet-writers.json'), JSON.stringify(Object.fromEntries(results)));
}
