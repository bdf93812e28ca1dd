/**
 * Feeding tables against feeding JSONL of the same documents, one run each, printed as ratios to JSONL:
 *
 *   feed      docs/s and peak RSS of a feed (benchmarks/feed/feed-child.ts, its own process) into the minimal
 *             sink (benchmarks/feed/sink-server.ts) from Parquet, CSV and JSONL holding the same N documents
 *             (DuckDB writes all three: an id, a title, an int, a tag list and a 64-float embedding into a
 *             tensor field), the tables typed by a schema (--app) so every input sends the same operations.
 *   read      operations/s of reading alone (readSources, nothing sent): JSONL, then Parquet and CSV. The
 *             JSONL figure is the raw-bytes path's; compare it with the same script on the main branch to see
 *             that the table work added nothing per item there.
 *
 * Usage: npx tsx benchmarks/formats/input.ts [--docs N]   (default 100,000; everything on 127.0.0.1, temp files removed)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { readSources } from '../../src/feed/source.js';
import type { FeedOptions } from '../../src/feed/options.js';

const args = process.argv.slice(2);
const docsAt = args.indexOf('--docs');
const docs = docsAt >= 0 ? Number(args[docsAt + 1]) : 100_000;
const here = fileURLToPath(new URL('.', import.meta.url));
const feedDir = join(here, '..', 'feed');
const work = mkdtempSync(join(tmpdir(), 'vb-bench-input-'));
const children: ChildProcess[] = [];

const schema = `schema doc {
  document doc {
    field title type string { indexing: summary | index }
    field n type int { indexing: summary | attribute }
    field tags type array<string> { indexing: summary }
    field emb type tensor<float>(x[64]) { indexing: summary | attribute }
  }
}
`;

async function writeInputs(): Promise<{ parquet: string; csv: string; jsonl: string; app: string }> {
  const app = join(work, 'app');
  mkdirSync(join(app, 'schemas'), { recursive: true });
  writeFileSync(join(app, 'schemas', 'doc.sd'), schema);
  writeFileSync(
    join(app, 'services.xml'),
    '<services version="1.0"><container id="c" version="1.0"><document-api/></container></services>',
  );
  const con = await (await DuckDBInstance.create()).connect();
  await con.run(`CREATE TABLE t AS SELECT 'id:ns:doc::' || i AS id, 'title ' || md5(i::VARCHAR) AS title, i::INTEGER AS n, ['a' || (i % 7), 'b'] AS tags,
    list_transform(range(64), x -> ((i * 31 + x) % 1000 / 1000.0)::FLOAT) AS emb FROM range(${docs}) r(i)`);
  const out = {
    parquet: join(work, 'docs.parquet'),
    csv: join(work, 'docs.csv'),
    jsonl: join(work, 'docs.jsonl'),
    app,
  };
  await con.run(`COPY t TO '${out.parquet}' (FORMAT parquet)`);
  await con.run(`COPY t TO '${out.csv}' (HEADER)`);
  await con.run(
    `COPY (SELECT id AS put, {'title': title, 'n': n, 'tags': tags, 'emb': {'values': emb}} AS fields FROM t) TO '${out.jsonl}' (FORMAT json)`,
  );
  return out;
}

async function startSink(): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(feedDir, 'sink-server.ts')], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  children.push(child);
  let buf = '';
  for await (const chunk of child.stdout) {
    buf += String(chunk);
    if (buf.includes('\n')) break;
  }
  return buf.trim();
}

async function feedChild(
  source: string,
  options: FeedOptions,
): Promise<{ docsPerSecond: number; maxRssMB: number; ok: number }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(feedDir, 'feed-child.ts'), JSON.stringify({ source, options })],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  for await (const chunk of child.stdout) out += String(chunk);
  const r = JSON.parse(out.trim().split('\n').pop()!) as { summary: Record<string, number>; maxRssMB: number };
  const ok = r.summary['feeder.ok.count'];
  return { docsPerSecond: ok / r.summary['feeder.seconds'], maxRssMB: r.maxRssMB, ok };
}

async function readRate(source: string, options: { rows?: FeedOptions['rows'] }): Promise<number> {
  const started = performance.now();
  let n = 0;
  for await (const b of readSources(source, options)) n += b.items.length;
  return n / ((performance.now() - started) / 1000);
}

try {
  process.stderr.write(`writing ${docs} documents as Parquet, CSV and JSONL with DuckDB...\n`);
  const files = await writeInputs();
  const url = await startSink();
  const rows = { app: files.app };
  const table: Record<string, string>[] = [];
  const jsonl = await feedChild(files.jsonl, { endpoint: url });
  for (const [name, source] of [
    ['jsonl', files.jsonl],
    ['parquet', files.parquet],
    ['csv', files.csv],
  ] as const) {
    const r = name === 'jsonl' ? jsonl : await feedChild(source, { endpoint: url, rows });
    table.push({
      input: name,
      MB: (statSync(source).size / 1e6).toFixed(1),
      'feed docs/s': r.docsPerSecond.toFixed(0),
      'vs jsonl': (r.docsPerSecond / jsonl.docsPerSecond).toFixed(2),
      'peak RSS MB': r.maxRssMB.toFixed(0),
      'RSS vs jsonl': (r.maxRssMB / jsonl.maxRssMB).toFixed(2),
      ok: String(r.ok),
    });
  }
  console.table(table);
  const readJsonl = await readRate(files.jsonl, {});
  const readTable = [{ input: 'jsonl', 'read ops/s': readJsonl.toFixed(0), 'vs jsonl': '1.00' }];
  for (const [name, source] of [
    ['parquet', files.parquet],
    ['csv', files.csv],
  ] as const) {
    const r = await readRate(source, { rows });
    readTable.push({ input: name, 'read ops/s': r.toFixed(0), 'vs jsonl': (r / readJsonl).toFixed(2) });
  }
  console.table(readTable);
} finally {
  for (const c of children) c.stdin?.end();
  rmSync(work, { recursive: true, force: true });
}
