import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckDBInstance } from '@duckdb/node-api';
import { compare } from '../../src/compare/index.js';
import { feed } from '../../src/feed/feeder.js';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { modelFromPackage } from '../../src/deploy/load-model.js';
import { exportDocuments } from '../../src/visit/export/index.js';
import { tempDir, type TempDir } from '../support/temp-dir.js';
import { duck } from '../support/duckdb.js';

/**
 * The round trip of issue 23: a Parquet file written by DuckDB is fed into the simulator typed by a schema, exported
 * to Parquet with the same schema, and the export read back with DuckDB (not our reader) equals the original. The
 * export is then fed into a second simulator, and `compare()` finds the two equal.
 */

const schema = `schema rt {
  document rt {
    struct pair { field a type int {} field b type string {} }
    field title type string { indexing: summary | index }
    field big type long { indexing: summary | attribute }
    field ts type long { indexing: summary | attribute }
    field score type double { indexing: summary | attribute }
    field flag type bool { indexing: summary | attribute }
    field emb type tensor<float>(x[3]) { indexing: summary | attribute }
    field st type pair { indexing: summary }
    field tags type array<string> { indexing: summary | attribute }
    field nums type array<long> { indexing: summary | attribute }
    field pairs type array<pair> { indexing: summary }
    field m type map<string, int> { indexing: summary }
    field ws type weightedset<string> { indexing: summary | attribute }
  }
}
`;
const services = `<?xml version="1.0" encoding="utf-8" ?>
<services version="1.0">
  <container id="default" version="1.0"><document-api/><nodes><node hostalias="node1"/></nodes></container>
  <content id="content" version="1.0">
    <min-redundancy>1</min-redundancy>
    <documents><document type="rt" mode="index"/></documents>
    <nodes><node hostalias="node1" distribution-key="0"/></nodes>
  </content>
</services>
`;
const rows = 30;

/**
 * Each column as DuckDB reads it, ordered by id: the original's and the export's must match. The original's
 * timestamp is compared as the long it became (seconds since the epoch, the feed's default `timestampUnit`): Vespa
 * has no timestamp type, so the schema's `long` is what is stored and exported. Longs as text, exact past 2^53.
 */
const originalQuery = (
  file: string,
): string => `SELECT 'id:ns:rt::' || doc_id AS id, title, big::VARCHAR AS big, epoch(ts)::BIGINT::VARCHAR AS ts,
  score, flag, emb, st, tags, list_transform(nums, x -> x::VARCHAR) AS nums, pairs, m, ws
  FROM read_parquet('${file}') ORDER BY id`;
const exportQuery = (file: string): string => `SELECT id, title, big::VARCHAR AS big, ts::VARCHAR AS ts,
  score, flag, emb, st, tags, list_transform(nums, x -> x::VARCHAR) AS nums, pairs, m, ws
  FROM read_parquet('${file}') ORDER BY id`;

describe('Parquet round trip: DuckDB → feed → export → DuckDB', () => {
  let tmp: TempDir;
  let app: string;
  let source: DocumentServer;
  let copy: DocumentServer;
  const file = (name: string): string => join(tmp.dir, name);

  beforeAll(async () => {
    tmp = tempDir('vb-round-trip-');
    app = file('app');
    mkdirSync(join(app, 'schemas'), { recursive: true });
    writeFileSync(join(app, 'services.xml'), services);
    writeFileSync(join(app, 'schemas', 'rt.sd'), schema);
    const db = await DuckDBInstance.create(':memory:');
    const duckdb = await db.connect();
    // Every kind of column, with nulls spread over rows (a null is an absent field, and an absent field a null cell).
    // Typed as the schema's fields are (INT for int, BIGINT for long), as Spark or pandas would write them; floats and
    // doubles exact in binary, so that equality is exact.
    await duckdb.run(`COPY (
      SELECT 'r' || lpad(i::VARCHAR, 2, '0') AS doc_id,
        CASE WHEN i % 4 = 1 THEN NULL ELSE 'title ' || i || ', "quoted"' END AS title,
        9007199254740993 + i * 1000000007 AS big,
        TIMESTAMP '2024-02-29 23:59:58' + INTERVAL (i * 86401) SECOND AS ts,
        i / 8 - 1 AS score,
        CASE WHEN i % 5 = 2 THEN NULL ELSE i % 2 = 0 END AS flag,
        CASE WHEN i % 6 = 3 THEN NULL ELSE [i::FLOAT, 0.5, -1.25]::FLOAT[] END AS emb,
        CASE WHEN i % 7 = 4 THEN NULL ELSE {'a': i::INT, 'b': 'b' || i} END AS st,
        ['t' || i, 'u'] AS tags,
        CASE WHEN i % 3 = 0 THEN NULL ELSE [i, -9007199254740993 - i] END AS nums,
        [{'a': i::INT, 'b': 'x'}, {'a': -i::INT, 'b': 'y'}] AS pairs,
        CASE WHEN i % 8 = 5 THEN NULL ELSE MAP {'k': i::INT, 'j': -i::INT} END AS m,
        MAP {'w' || i: (i + 1)::INT} AS ws
      FROM range(${rows}) t(i)) TO '${file('original.parquet')}' (FORMAT parquet, ROW_GROUP_SIZE 8)`);
    duckdb.closeSync();
    db.closeSync();
    const model = await modelFromPackage(app);
    source = await startDocumentServer({ port: 0 });
    source.setDocumentModel(model);
    copy = await startDocumentServer({ port: 0 });
    copy.setDocumentModel(model);
  });
  afterAll(async () => {
    await source.close();
    await copy.close();
    tmp.cleanup();
  });

  it('reads back equal to the original, and a copy fed from the export compares equal to the source', async () => {
    const fed = await feed(file('original.parquet'), {
      endpoint: source.url,
      rows: { id: 'id:ns:rt::{doc_id}', app },
      failures: file('failures.jsonl'),
    });
    expect([fed.ok, fed.errors]).toEqual([rows, 0]);

    const exported = await exportDocuments({
      endpoint: source.url,
      namespace: 'ns',
      documentType: 'rt',
      slices: 3,
      format: 'parquet',
      output: file('export.parquet'),
      app,
      rowGroupRows: 7,
    });
    expect(exported.documents).toBe(rows);
    const original = await duck(originalQuery(file('original.parquet')));
    const back = await duck(exportQuery(file('export.parquet')));
    expect(original).toHaveLength(rows);
    // The nulls and the long past 2^53 are there to be compared, not lost on the way.
    expect(original.filter((r) => r.title === null)).toHaveLength(8);
    expect(original[0].big).toBe('9007199254740993');
    expect(original[1].nums).toEqual(['1', '-9007199254740994']);
    for (const [k, row] of original.entries()) expect(back[k]).toEqual(row);

    // Our export fed back (its `id` column holds the full ids) into a second simulator: the two compare equal.
    const refed = await feed(file('export.parquet'), {
      endpoint: copy.url,
      rows: { app },
      failures: file('refed-failures.jsonl'),
    });
    expect([refed.ok, refed.errors]).toEqual([rows, 0]);
    const side = { namespace: 'ns', documentType: 'rt', slices: 2 };
    const same = await compare({
      a: { endpoint: source.url, ...side },
      b: { endpoint: copy.url, ...side },
      partitions: 4,
    });
    expect(same).toMatchObject({
      equal: true,
      onlyInA: 0,
      onlyInB: 0,
      differing: 0,
      same: rows,
      a: { documents: rows },
      b: { documents: rows },
    });
  });
});
