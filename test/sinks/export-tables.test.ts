import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentTypesOf } from '../../src/schema/document-model.js';
import { parseSchema } from '../../src/schema/sd-schema.js';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { exportDocuments, type ExportOptions } from '../../src/visit/export/index.js';
import { runCommand } from '../support/run-command.js';
import { tempDir, type TempDir } from '../support/temp-dir.js';
import { servicesXml } from '../schema/fixtures.js';
import { duck, duckTypes } from '../support/duckdb.js';

/** `format: 'parquet' | 'csv'` exports from the simulator, read back with DuckDB. */

const schema = `schema doc {
  document doc {
    struct pair { field a type int {} field b type string {} }
    field i type int { indexing: attribute }
    field l type long { indexing: attribute }
    field f type float { indexing: attribute }
    field d type double { indexing: attribute }
    field flag type bool { indexing: attribute }
    field s type string { indexing: summary }
    field emb type tensor<float>(x[4]) { indexing: attribute }
    field sparse type tensor(key{}) { indexing: attribute }
    field st type pair { indexing: summary }
    field tags type array<string> { indexing: summary }
    field m type map<string, int> { indexing: summary }
    field ws type weightedset<string> { indexing: attribute }
  }
}`;
const model = {
  types: documentTypesOf([parseSchema(schema, 'doc.sd')]),
  ignoreUndefinedFields: false,
  documentApi: true,
};
const count = 24;
/** 2^53 + 1 and its neighbours: a double would round them. */
const longOf = (n: number): string => (9007199254740993n + BigInt(n)).toString();
const text = (n: number): string => (n % 3 === 0 ? `a,"quoted"\nline ${n}` : `plain ${n}`);

function fieldsOf(n: number): string {
  const fields = [
    `"i":${n}`,
    `"l":${longOf(n)}`,
    `"f":${n + 0.5}`,
    `"d":${n / 4}`,
    `"flag":${n % 2 === 0}`,
    `"s":${JSON.stringify(text(n))}`,
    `"emb":[${n},1.5,-2,0.25]`,
    `"sparse":{"cells":{"k${n}":1}}`,
    `"st":{"a":${n},"b":"b${n}"}`,
    `"tags":["t${n}","u"]`,
    `"m":{"k":${n}}`,
    `"ws":{"w${n}":${n + 1}}`,
  ];
  // Every fifth document lacks the struct and the tensor: nulls in those columns.
  return `{${fields.filter((f) => n % 5 !== 0 || !(f.startsWith('"st"') || f.startsWith('"emb"'))).join(',')}}`;
}

let server: DocumentServer;
let tmp: TempDir;
beforeAll(async () => {
  tmp = tempDir('vb-tables-');
  server = await startDocumentServer({ port: 0 });
  server.setDocumentModel(model);
  for (let n = 0; n < count; n++) {
    const res = await fetch(`${server.url}/document/v1/ns/doc/docid/d${n}`, {
      method: 'POST',
      body: `{"fields":${fieldsOf(n)}}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(200);
  }
});
afterAll(async () => {
  await server.close();
  tmp.cleanup();
});

const base = (): ExportOptions => ({ endpoint: server.url, namespace: 'ns', documentType: 'doc', slices: 3 });
let n = 0;
const fresh = (name: string): string => join(tmp.dir, `${n++}-${name}`);

describe('parquet', () => {
  it('typed from the schema: every type mapped, longs exact, absent fields null', async () => {
    const output = fresh('out.parquet');
    const summary = await exportDocuments({ ...base(), format: 'parquet', output, model, rowGroupRows: 10 });
    expect(summary.documents).toBe(count);
    expect(existsSync(`${output}.partial`)).toBe(false);
    const from = `read_parquet('${output}')`;
    expect(await duckTypes(from)).toEqual({
      id: 'VARCHAR',
      i: 'INTEGER',
      l: 'BIGINT',
      f: 'FLOAT',
      d: 'DOUBLE',
      flag: 'BOOLEAN',
      s: 'VARCHAR',
      emb: 'FLOAT[]',
      sparse: 'VARCHAR',
      st: 'STRUCT(a INTEGER, b VARCHAR)',
      tags: 'VARCHAR[]',
      m: 'MAP(VARCHAR, INTEGER)',
      ws: 'MAP(VARCHAR, INTEGER)',
    });
    const rows = await duck(
      `SELECT id, i, CAST(l AS VARCHAR) AS l, f, d, flag, s, emb, sparse, st, tags, m['k'] AS mk, ws FROM ${from} ORDER BY i`,
    );
    expect(rows).toHaveLength(count);
    for (const [k, r] of rows.entries()) {
      expect(r).toMatchObject({
        id: `id:ns:doc::d${k}`,
        i: k,
        l: longOf(k),
        f: k + 0.5,
        d: k / 4,
        flag: k % 2 === 0,
        s: text(k),
        tags: [`t${k}`, 'u'],
        mk: k,
      });
      expect(JSON.parse(r.sparse as string)).toMatchObject({ cells: { [`k${k}`]: 1 } });
      expect(r.ws).toEqual([{ key: `w${k}`, value: k + 1 }]);
      if (k % 5 === 0) expect([r.st, r.emb]).toEqual([null, null]);
      else expect([r.st, r.emb]).toEqual([{ a: k, b: `b${k}` }, [k, 1.5, -2, 0.25]]);
    }
  });

  it('hex tensors are decoded into the float list', async () => {
    const output = fresh('hex.parquet');
    await exportDocuments({
      ...base(),
      format: 'parquet',
      output,
      model,
      tensorFormat: 'hex-value',
      fieldSet: 'doc:emb',
    });
    const rows = await duck(`SELECT emb FROM read_parquet('${output}') WHERE id = 'id:ns:doc::d3'`);
    expect(rows).toEqual([{ emb: [3, 1.5, -2, 0.25] }]);
  });

  it('--output-dir: one whole file per slice, every document once across them', async () => {
    const outputDir = fresh('dir');
    const checkpoint = fresh('cp.json');
    await exportDocuments({ ...base(), format: 'parquet', outputDir, model, checkpoint });
    expect(readdirSync(outputDir).sort()).toEqual(['slice-0000.parquet', 'slice-0001.parquet', 'slice-0002.parquet']);
    const all = `read_parquet('${outputDir}/*.parquet')`;
    expect(await duck(`SELECT count(*)::INT AS n, count(DISTINCT id)::INT AS ids FROM ${all}`)).toEqual([
      { n: count, ids: count },
    ]);
    // A crash between the footer and the rename leaves a .partial: the resumed export redoes that slice alone.
    const before = readFileSync(join(outputDir, 'slice-0000.parquet'));
    renameSync(join(outputDir, 'slice-0001.parquet'), join(outputDir, 'slice-0001.parquet.partial'));
    const again = await exportDocuments({ ...base(), format: 'parquet', outputDir, model, checkpoint });
    expect(again.resumed).toBe(true);
    expect(again.documents).toBeGreaterThan(0);
    expect(again.documents).toBeLessThan(count);
    expect(readFileSync(join(outputDir, 'slice-0000.parquet')).equals(before)).toBe(true);
    expect(readdirSync(outputDir).sort()).toEqual(['slice-0000.parquet', 'slice-0001.parquet', 'slice-0002.parquet']);
    expect(await duck(`SELECT count(*)::INT AS n, count(DISTINCT id)::INT AS ids FROM ${all}`)).toEqual([
      { n: count, ids: count },
    ]);
    // A slice the checkpoint saw unfinished is visited again from its start, its file replaced.
    const saved = JSON.parse(readFileSync(checkpoint, 'utf8')) as { slices: Record<string, { finished?: boolean }> };
    delete saved.slices['2'].finished;
    writeFileSync(checkpoint, JSON.stringify(saved));
    const third = await exportDocuments({ ...base(), format: 'parquet', outputDir, model, checkpoint });
    expect(third.documents).toBe(
      Number((await duck(`SELECT count(*)::INT AS n FROM read_parquet('${outputDir}/slice-0002.parquet')`))[0].n),
    );
    expect(await duck(`SELECT count(*)::INT AS n, count(DISTINCT id)::INT AS ids FROM ${all}`)).toEqual([
      { n: count, ids: count },
    ]);
  });

  it('--output-dir without a checkpoint: files of rows, not of slices (one for a small export, parts of rowsPerFile)', async () => {
    const one = fresh('parts-one');
    await exportDocuments({ ...base(), format: 'parquet', outputDir: one, model });
    expect(readdirSync(one)).toEqual(['part-0000.parquet']);
    expect(await duck(`SELECT count(DISTINCT id)::INT AS ids FROM read_parquet('${one}/part-0000.parquet')`)).toEqual([
      { ids: count },
    ]);

    const parts = fresh('parts-ten');
    await exportDocuments({ ...base(), format: 'parquet', outputDir: parts, model, rowsPerFile: 10, rowGroupRows: 4 });
    const files = readdirSync(parts).sort();
    // A part closes once it holds 10 rows or more, after the batch that filled it: never an empty or partial file.
    expect(files.length).toBeGreaterThan(1);
    expect(files).toEqual(files.map((_, i) => `part-${String(i).padStart(4, '0')}.parquet`));
    const sizes = await duck(
      `SELECT filename, count(*)::INT AS n FROM read_parquet('${parts}/*.parquet', filename = true) GROUP BY filename ORDER BY filename`,
    );
    expect(sizes.slice(0, -1).every((r) => Number(r.n) >= 10)).toBe(true);
    expect(
      await duck(`SELECT count(*)::INT AS n, count(DISTINCT id)::INT AS ids FROM read_parquet('${parts}/*.parquet')`),
    ).toEqual([{ n: count, ids: count }]);

    const csv = fresh('parts-csv');
    await exportDocuments({ ...base(), format: 'csv', outputDir: csv, rowsPerFile: 10 });
    expect(readdirSync(csv).length).toBeGreaterThan(1);
    expect(
      await duck(
        `SELECT count(*)::INT AS n, count(DISTINCT id)::INT AS ids FROM read_csv('${csv}/*.csv', header = true, union_by_name = true)`,
      ),
    ).toEqual([{ n: count, ids: count }]);
  });

  it('without a schema: columns inferred from the first row group, nested values as JSON text', async () => {
    const output = fresh('plain.parquet');
    await exportDocuments({ ...base(), format: 'parquet', output });
    const types = await duckTypes(`read_parquet('${output}')`);
    expect(types).toMatchObject({
      id: 'VARCHAR',
      i: 'BIGINT',
      l: 'BIGINT',
      d: 'DOUBLE',
      flag: 'BOOLEAN',
      s: 'VARCHAR',
      st: 'VARCHAR',
      emb: 'VARCHAR',
    });
    const rows = await duck(
      `SELECT CAST(l AS VARCHAR) AS l, st FROM read_parquet('${output}') WHERE id = 'id:ns:doc::d7'`,
    );
    expect(rows).toEqual([{ l: longOf(7), st: '{"a":7,"b":"b7"}' }]);
  });

  it('an empty export is a valid file with the columns', async () => {
    const output = fresh('empty.parquet');
    await exportDocuments({ ...base(), selection: 'doc.i > 1000', format: 'parquet', output, model });
    expect(await duck(`SELECT count(*)::INT AS n FROM read_parquet('${output}')`)).toEqual([{ n: 0 }]);
  });

  it.each<[string, Partial<ExportOptions>, RegExp]>([
    ['a checkpoint with a single file', { output: 'x.parquet', checkpoint: 'cp.json' }, /needs --output-dir/],
    ['workers', { output: 'x.parquet', workers: 2 }, /workers must be 1 with format parquet/],
    ['removes', { output: 'x.parquet', includeRemoves: true }, /no place for removed documents/],
    [
      'an increment, naming --since rather than --include-removes',
      { output: 'x.parquet', since: '1700000000' },
      /no place for the removes an increment \(--since\) carries/,
    ],
    ['gzip', { outputDir: 'd', gzip: true }, /leave out --gzip/],
  ])('refuses %s', async (_name, extra, message) => {
    const options = { ...base(), format: 'parquet' as const, ...extra };
    for (const k of ['output', 'outputDir', 'checkpoint'] as const)
      if (options[k] !== undefined) options[k] = fresh(options[k]);
    await expect(exportDocuments(options)).rejects.toMatchObject({
      code: 'VB_USAGE',
      message: expect.stringMatching(message) as unknown,
    });
  });
});

describe('csv', () => {
  it('a header, then a quoted line per document; DuckDB reads the same values', async () => {
    const output = fresh('out.csv');
    await exportDocuments({ ...base(), format: 'csv', output, model });
    const rows = await duck(
      `SELECT id, CAST(l AS VARCHAR) AS l, s, st, emb FROM read_csv('${output}', header = true, all_varchar = true) ORDER BY CAST(i AS INT)`,
    );
    expect(rows).toHaveLength(count);
    expect(rows[3]).toEqual({
      id: 'id:ns:doc::d3',
      l: longOf(3),
      s: text(3),
      st: '{"a":3,"b":"b3"}',
      emb: expect.stringContaining('"values":[3,1.5,-2,0.25]') as unknown,
    });
    expect(rows[5].st).toBeNull();
    expect(readFileSync(output, 'utf8').split('\n')[0]).toBe('id,i,l,f,d,flag,s,emb,sparse,st,tags,m,ws');
  });

  it('to stdout without a schema, and a gzipped file per slice', async () => {
    const stdout = new PassThrough();
    const chunks: Buffer[] = [];
    stdout.on('data', (c: Buffer) => chunks.push(c));
    await exportDocuments({ ...base(), format: 'csv', stdout });
    const lines = Buffer.concat(chunks).toString('utf8');
    expect(lines.startsWith('id,')).toBe(true);
    expect(lines.match(/^id:ns:doc::/gm)).toHaveLength(count);

    const outputDir = fresh('csvdir');
    await exportDocuments({ ...base(), format: 'csv', outputDir, gzip: true });
    expect(
      await duck(
        `SELECT count(*)::INT AS n FROM read_csv('${outputDir}/*.csv.gz', header = true, union_by_name = true)`,
      ),
    ).toEqual([{ n: count }]);
  });
});

describe('cli', () => {
  it('visit --format parquet --app DIR types the columns', async () => {
    const app = fresh('app');
    mkdirSync(join(app, 'schemas'), { recursive: true });
    writeFileSync(
      join(app, 'services.xml'),
      servicesXml().replace("type='kinds'", "type='doc'").replace('type="kinds"', 'type="doc"'),
    );
    writeFileSync(join(app, 'schemas', 'doc.sd'), schema);
    const output = fresh('cli.parquet');
    const run = await runCommand([
      'visit',
      'ns/doc',
      '-t',
      server.url,
      '--format',
      'parquet',
      '-o',
      output,
      '--app',
      app,
      '--quiet',
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)['visit.document.count']).toBe(count);
    expect(await duckTypes(`read_parquet('${output}')`)).toMatchObject({
      l: 'BIGINT',
      emb: 'FLOAT[]',
      st: 'STRUCT(a INTEGER, b VARCHAR)',
    });
  });
});
