/**
 * Export to Parquet (and CSV) against export to JSONL, from the simulator (in this process), each export in its own
 * child process (`exportDocuments`, 4 slices, to a file): documents/s, the exporter's CPU per document (user +
 * system) and its peak RSS, each printed as a ratio to JSONL's in the same run. The documents carry a 384-float
 * embedding (a dense tensor), a struct and strings; the Parquet export is typed from their schema.
 *
 *   npx tsx benchmarks/formats/export.ts [--documents 20000] [--dims 384] [--formats jsonl,parquet,csv]
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { documentTypesOf } from '../../src/schema/document-model.js';
import { parseSchema } from '../../src/schema/sd-schema.js';
import { startDocumentServer } from '../../src/simulator/document-api/document-server.js';
import { exportDocuments } from '../../src/visit/export/index.js';
import type { OutputFormat } from '../../src/sinks/output-format.js';

const { values } = parseArgs({
  options: {
    documents: { type: 'string', default: '20000' },
    dims: { type: 'string', default: '384' },
    formats: { type: 'string', default: 'jsonl,parquet,csv' },
    child: { type: 'string' },
    url: { type: 'string' },
    out: { type: 'string' },
  },
});
const documents = Number(values.documents);
const dims = Number(values.dims);

const sd = `schema doc { document doc { struct pair { field a type int {} field b type string {} }
  field title type string {} field year type int {} field emb type tensor<float>(x[${dims}]) {} field st type pair {} } }`;

if (values.child !== undefined) {
  const format = values.child as OutputFormat;
  const model = {
    types: documentTypesOf([parseSchema(sd, 'doc.sd')]),
    ignoreUndefinedFields: false,
    documentApi: true,
  };
  const t0 = performance.now();
  const summary = await exportDocuments({
    endpoint: values.url!,
    namespace: 'bench',
    documentType: 'doc',
    slices: 4,
    format,
    output: values.out!,
    ...(format === 'parquet' || format === 'csv' ? { model } : {}),
  });
  const seconds = (performance.now() - t0) / 1000;
  const usage = process.resourceUsage();
  process.stdout.write(
    JSON.stringify({
      documents: summary.documents,
      seconds,
      cpuSeconds: (usage.userCPUTime + usage.systemCPUTime) / 1e6,
      maxRssMb: usage.maxRSS / 1024,
      bytes: statSync(values.out!).size,
    }),
  );
} else {
  const server = await startDocumentServer({ port: 0, host: '127.0.0.1' });
  server.store.seed(
    Array.from({ length: documents }, (_, n) => ({
      id: `id:bench:doc::${n}`,
      fields: {
        title: `a title of document number ${n}`,
        year: 1900 + (n % 120),
        emb: {
          type: `tensor<float>(x[${dims}])`,
          values: Array.from({ length: dims }, () => Math.fround(Math.random() * 2 - 1)),
        },
        st: { a: n, b: `b${n}` },
      },
    })),
  );
  const dir = mkdtempSync(join(tmpdir(), 'vb-export-bench-'));
  const self = fileURLToPath(import.meta.url);
  const results: Record<
    string,
    { documents: number; seconds: number; cpuSeconds: number; maxRssMb: number; bytes: number }
  > = {};
  try {
    for (const format of values.formats.split(',')) {
      const out = join(dir, `out.${format}`);
      const text = await new Promise<string>((resolve, reject) => {
        // Asynchronous: the simulator in this process must keep answering while the child exports.
        execFile(
          process.execPath,
          [...process.execArgv, self, '--child', format, '--url', server.url, '--out', out, '--dims', String(dims)],
          { encoding: 'utf8', maxBuffer: 1 << 20 },
          (err, stdout) => (err ? reject(err) : resolve(stdout)),
        );
      });
      results[format] = JSON.parse(text) as never;
      rmSync(out, { force: true });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await server.close();
  }
  const base = results.jsonl;
  console.log(
    `${documents} documents (${dims}-float embedding, a struct, strings) exported with 4 slices; ratios to jsonl in this run`,
  );
  for (const [format, r] of Object.entries(results)) {
    const rate = r.documents / r.seconds;
    const cpu = (r.cpuSeconds / r.documents) * 1e6;
    const ratio = (a: number, b: number | undefined): string => (b === undefined ? '' : ` (x${(a / b).toFixed(2)})`);
    console.log(
      `${format.padEnd(8)} ${Math.round(rate).toString().padStart(7)} docs/s${ratio(rate, base && base.documents / base.seconds)}  CPU ${Math.round(cpu)} µs/doc${ratio(cpu, base && (base.cpuSeconds / base.documents) * 1e6)}  peak RSS ${Math.round(r.maxRssMb)} MB${ratio(r.maxRssMb, base?.maxRssMb)}  file ${(r.bytes / 2 ** 20).toFixed(1)} MB${ratio(r.bytes, base?.bytes)}`,
    );
  }
}
