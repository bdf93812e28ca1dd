import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { Feeder, feed } from '../../src/feed/feeder.js';
import { readSources } from '../../src/feed/source.js';
import { modelFromPackage } from '../../src/deploy/load-model.js';
import { tempDir, type TempDir } from '../support/temp-dir.js';
import { ensureZstd } from '../support/zstd-tool.js';
import { kindsPackage } from '../schema/fixtures.js';

/** Files written by other writers (DuckDB, the zstd tool), fed into the simulator, the stored documents checked. */
describe('feed of CSV, TSV, Parquet and .zst inputs', () => {
  let tmp: TempDir;
  let server: DocumentServer;
  let app: string;
  const file = (name: string) => join(tmp.dir, name);

  beforeAll(async () => {
    tmp = tempDir();
    app = file('app');
    mkdirSync(join(app, 'schemas'), { recursive: true });
    for (const [path, text] of Object.entries(kindsPackage())) writeFileSync(join(app, path), text);
    const duck = await (await DuckDBInstance.create()).connect();
    // Typed for the `kinds` schema: lists, a struct, maps, nulls, a float list for a tensor, a long past 2^53.
    await duck.run(`COPY (
      SELECT 'k' || i AS doc_id, 1990 + i AS year, 9007199254740993 + i AS big, (i / 2)::FLOAT AS score, i % 2 = 0 AS flag,
        CASE WHEN i = 1 THEN NULL ELSE 'title ' || i END AS title, ['a', 'b' || i] AS tags, MAP {'w': i + 1} AS weights,
        MAP {'r': i} AS ratings, {'sub': i} AS nested, [i::FLOAT, 0.5, -1.0]::FLOAT[] AS emb
      FROM range(5) t(i)) TO '${file('kinds.parquet')}' (FORMAT parquet, ROW_GROUP_SIZE 2)`);
    // No schema: natural JSON, timestamps as seconds, a null left out; row 3 has a float list of the wrong length for the tensor field of a later test.
    await duck.run(`COPY (
      SELECT 'id:ns:plain::' || i AS id, TIMESTAMP '2024-01-02 03:04:05.5' + INTERVAL (i) SECOND AS at, CASE WHEN i = 1 THEN NULL ELSE i END AS n,
        {'x': [1, 2], 'y': 'z'} AS s
      FROM range(3) t(i)) TO '${file('plain.parquet')}' (FORMAT parquet, COMPRESSION zstd)`);
    // A tensor cell of the wrong length: the row fails, the others are stored.
    await duck.run(
      `COPY (SELECT 'id:ns:kinds::bad' || i AS id, CASE WHEN i = 1 THEN [1.0, 2.0] ELSE [1.0, 2.0, 3.0] END::FLOAT[] AS emb FROM range(3) t(i)) TO '${file('bad.parquet')}' (FORMAT parquet)`,
    );
    server = await startDocumentServer({ port: 0 });
    server.setDocumentModel(await modelFromPackage(app));
  });
  afterAll(async () => {
    await server.close();
    tmp.cleanup();
  });

  it('stores Parquet rows typed by the schema (DuckDB: nested lists, structs, maps, nulls, float lists for a tensor)', async () => {
    const summary = await feed(file('kinds.parquet'), {
      endpoint: server.url,
      rows: { id: 'id:ns:kinds::{doc_id}', app },
      failures: file('f1.jsonl'),
    });
    expect(summary.errors).toBe(0);
    expect(summary.ok).toBe(5);
    expect(server.store.get('id:ns:kinds::k1')!.fields).toEqual({
      year: 1991,
      big: 9007199254740994,
      score: 0.5,
      flag: false,
      tags: ['a', 'b1'],
      weights: { w: 2 },
      ratings: { r: 1 },
      nested: { sub: 1 },
      emb: { values: [1, 0.5, -1] },
    });
    expect(server.store.get('id:ns:kinds::k4')!.fields.title).toBe('title 4');
  });

  it('sends longs past 2^53 digit for digit', async () => {
    const seen: string[] = [];
    for await (const b of readSources(file('kinds.parquet'), { rows: { id: 'id:ns:kinds::{doc_id}', app } }))
      for (const it of b.items) seen.push(it.bytes.toString());
    expect(seen[0]).toContain('"big":9007199254740993,');
    expect(seen.map((s) => JSON.parse(s).put)).toEqual(['k0', 'k1', 'k2', 'k3', 'k4'].map((k) => `id:ns:kinds::${k}`));
  });

  it('without a schema: natural JSON, timestamps as seconds since the epoch, nulls left out (zstd pages)', async () => {
    const plain = await startDocumentServer({ port: 0 });
    try {
      const summary = await feed(file('plain.parquet'), { endpoint: plain.url, failures: false });
      expect(summary.ok).toBe(3);
      expect(plain.store.get('id:ns:plain::1')!.fields).toEqual({ at: 1704164646, s: { x: [1, 2], y: 'z' } });
      expect(plain.store.get('id:ns:plain::2')!.fields).toEqual({ at: 1704164647, n: 2, s: { x: [1, 2], y: 'z' } });
    } finally {
      await plain.close();
    }
  });

  it('writes a row that cannot become an operation to the failure output with file, row and reason, and counts it', async () => {
    const failures = file('bad-failures.jsonl');
    const summary = await feed(file('bad.parquet'), { endpoint: server.url, rows: { app }, failures });
    expect(summary.ok).toBe(2);
    expect(summary.errors).toBe(1);
    const reasons = readFileSync(`${failures}.reasons.jsonl`, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(reasons).toEqual([
      expect.objectContaining({
        input: file('bad.parquet'),
        inputLine: 2,
        code: 'VB_BAD_ROW',
        message: "column 'emb': tensor<float>(x[3]) has 3 cells, the list 2",
      }),
    ]);
    expect(JSON.parse(readFileSync(failures, 'utf8'))).toEqual({ id: 'id:ns:kinds::bad1', emb: [1, 2] });
    expect(server.store.get('id:ns:kinds::bad1')).toBeUndefined();
  });

  it('reads CSV with a BOM, a header, quoting and line breaks in cells; a bad row fails at the line it starts on', async () => {
    const csv =
      '\ufeffid,title,year,tags\r\n' +
      'id:ns:kinds::c1,"says ""hi"", then\nleaves",2001,"[""x""]"\r\n' +
      '\r\n' +
      'id:ns:kinds::c2,plain,not-a-year,\r\n' +
      'id:ns:kinds::c3,short\r\n' +
      'id:ns:kinds::c4,,2004,\r\n';
    writeFileSync(file('t.csv'), csv);
    const failures = file('csv-failures.jsonl');
    const summary = await feed(file('t.csv'), { endpoint: server.url, rows: { app }, failures });
    expect(summary.ok).toBe(2);
    expect(summary.errors).toBe(2);
    expect(server.store.get('id:ns:kinds::c1')!.fields).toEqual({
      title: 'says "hi", then\nleaves',
      year: 2001,
      tags: ['x'],
    });
    expect(server.store.get('id:ns:kinds::c4')!.fields).toEqual({ year: 2004 });
    const reasons = readFileSync(`${failures}.reasons.jsonl`, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(reasons.map((r) => [r.input, r.inputLine, r.code, r.message])).toEqual([
      [file('t.csv'), 5, 'VB_BAD_ROW', "column 'year': int needs an integer, got 'not-a-year'"],
      [file('t.csv'), 6, 'VB_BAD_ROW', '2 cells, the header has 4'],
    ]);
  });

  it('reads TSV, and CSV without a schema as text, from stdin with an input format', async () => {
    const plain = await startDocumentServer({ port: 0 });
    try {
      writeFileSync(file('t.tsv'), 'key\tv\nx\t1\n');
      expect(
        (
          await feed(file('t.tsv'), {
            endpoint: plain.url,
            failures: false,
            rows: { idField: 'key', documentType: 'doc', namespace: 'n' },
          })
        ).ok,
      ).toBe(1);
      expect(plain.store.get('id:n:doc::x')!.fields).toEqual({ v: '1' });
      const { Readable } = await import('node:stream');
      const stdin = Readable.from([Buffer.from('key,v\ny,2\n')]);
      expect(
        (
          await feed('-', {
            endpoint: plain.url,
            failures: false,
            stdin,
            inputFormat: 'csv',
            rows: { id: 'id:n:doc::{key}', operation: 'update', create: true },
          })
        ).ok,
      ).toBe(1);
      expect(plain.store.get('id:n:doc::y')!.fields).toEqual({ v: '2' });
    } finally {
      await plain.close();
    }
  });

  it('decompresses .zst written by the zstd tool: JSONL and CSV', async () => {
    const zstd = ensureZstd();
    writeFileSync(
      file('z.jsonl'),
      '{"put":"id:ns:kinds::z1","fields":{"year":1}}\n{"put":"id:ns:kinds::z2","fields":{"year":2}}\n',
    );
    writeFileSync(
      file('z.csv'),
      `id,year\n${Array.from({ length: 50 }, (_, i) => `id:ns:kinds::zc${i},${i}`).join('\n')}\n`,
    );
    execFileSync(zstd, ['-q', '-f', file('z.jsonl'), file('z.csv')]);
    const summary = await feed([file('z.jsonl.zst'), file('z.csv.zst')], {
      endpoint: server.url,
      rows: { app },
      failures: file('z-failures.jsonl'),
    });
    expect(summary.errors).toBe(0);
    expect(summary.ok).toBe(52);
    expect(server.store.get('id:ns:kinds::z2')!.fields).toEqual({ year: 2 });
    expect(server.store.get('id:ns:kinds::zc49')!.fields).toEqual({ year: 49 });
  });

  it('reads Parquet (downloaded to a temporary file) and .csv.zst (streamed) from URLs', async () => {
    const { createServer } = await import('node:http');
    const zstd = ensureZstd();
    writeFileSync(file('u.csv'), 'doc_id,year\nu1,7\n');
    execFileSync(zstd, ['-q', '-f', file('u.csv')]);
    const web = createServer((req, res) => res.end(readFileSync(file(req.url!.slice(1).split('?')[0])))).listen(
      0,
      '127.0.0.1',
    );
    await new Promise((r) => web.once('listening', r));
    try {
      const base = `http://127.0.0.1:${(web.address() as { port: number }).port}`;
      const summary = await feed([`${base}/kinds.parquet?sig=secret`, `${base}/u.csv.zst`], {
        endpoint: server.url,
        rows: { idField: 'doc_id', documentType: 'kinds', namespace: 'url', app },
        failures: false,
      });
      expect(summary.errors).toBe(0);
      expect(summary.ok).toBe(6);
      expect(server.store.get('id:url:kinds::k3')!.fields.year).toBe(1993);
      expect(server.store.get('id:url:kinds::u1')!.fields).toEqual({ year: 7 });
    } finally {
      web.close();
    }
  });

  it('a feed of a table stopped midway resumes from its checkpoint (counted in rows) and stores every row once', async () => {
    const plain = await startDocumentServer({ port: 0 });
    try {
      writeFileSync(file('r.csv'), `id,v\n${Array.from({ length: 300 }, (_, i) => `id:ns:r::${i},${i}`).join('\n')}\n`);
      const checkpoint = file('r-cp.json');
      const controller = new AbortController();
      let ok = 0;
      const first = await new Feeder({
        endpoint: plain.url,
        checkpoint,
        failures: false,
        signal: controller.signal,
        inflight: 4,
        onResult: (r) => r.ok && ++ok === 100 && controller.abort(),
      }).run(file('r.csv'));
      expect(first.stopped).toBe('interrupted');
      const cp = JSON.parse(readFileSync(checkpoint, 'utf8'));
      // Offsets are row indexes: the read position is within the 300 rows, not a byte count.
      expect(cp.readTo.offset).toBeLessThanOrEqual(300);
      expect(cp.position.offset).toBeLessThan(300);
      const stored = plain.store.size();
      expect(stored).toBeLessThan(300);
      const resumed = await feed(file('r.csv'), { endpoint: plain.url, resume: checkpoint, failures: false });
      expect(resumed.ok + first.summary.ok).toBeGreaterThanOrEqual(300);
      // The whole feed's count; this run fed only the rows the checkpoint had not finished.
      expect(resumed.ok).toBe(300);
      expect(resumed.runOperations).toBeLessThan(300);
      expect(plain.store.size()).toBe(300);
      expect(plain.store.get('id:ns:r::299')!.fields).toEqual({ v: '299' });
    } finally {
      await plain.close();
    }
  });

  it('a resumed feed skips rows before the checkpoint by index, counting each row as one offset', async () => {
    const batches = [];
    for await (const b of readSources(file('kinds.parquet'), {
      rows: { id: 'id:ns:kinds::{doc_id}' },
      from: { input: 0, offset: 3, line: 4 },
    }))
      batches.push(...b.items);
    expect(batches.map((i) => [i.offset, i.line, i.skip === true])).toEqual([
      [0, 1, true],
      [1, 2, true],
      [2, 3, true],
      [3, 4, false],
      [4, 5, false],
    ]);
    expect(batches.every((i) => i.span === 1)).toBe(true);
  });
});
