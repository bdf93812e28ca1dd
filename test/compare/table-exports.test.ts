import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compare } from '../../src/compare/index.js';
import { main } from '../../src/cli/main.js';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { modelFromPackage } from '../../src/deploy/load-model.js';
import { exportDocuments } from '../../src/visit/export/index.js';
import { tempDir, type TempDir } from '../support/temp-dir.js';
import { kindsPackage } from '../schema/fixtures.js';

/** Exports written as tables (`visit --format csv|parquet`) compared with their cluster: typed by the schema (`rows`). */
describe('compare of CSV and Parquet exports', () => {
  let tmp: TempDir;
  let app: string;
  let server: DocumentServer;
  const file = (name: string): string => join(tmp.dir, name);
  const cluster = () => ({ endpoint: server.url, namespace: 'ns', documentType: 'kinds', slices: 2 });

  beforeAll(async () => {
    tmp = tempDir('vb-compare-tables-');
    app = file('app');
    mkdirSync(join(app, 'schemas'), { recursive: true });
    for (const [path, text] of Object.entries(kindsPackage())) writeFileSync(join(app, path), text);
    server = await startDocumentServer({ port: 0 });
    server.setDocumentModel(await modelFromPackage(app));
    server.store.seed(
      Array.from({ length: 12 }, (_, i) => ({
        id: `id:ns:kinds::${i}`,
        fields: {
          year: 2000 + i,
          big: 9007199254740993 + i,
          title: `t,"${i}"`,
          tags: ['a', `b${i}`],
          ratings: { r: i },
          nested: { sub: i },
          emb: { values: [i, 0.5, -1] },
        },
      })),
    );
    await exportDocuments({ ...cluster(), format: 'csv', outputDir: file('csv'), app });
    await exportDocuments({ ...cluster(), format: 'parquet', outputDir: file('parquet'), app });
  });
  afterAll(async () => {
    await server.close();
    tmp.cleanup();
  });

  it('a CSV export typed by the schema equals its cluster; untyped, its text cells differ from the numbers', async () => {
    const typed = await compare({ a: { files: file('csv'), rows: { app } }, b: cluster(), partitions: 2 });
    expect(typed).toMatchObject({ equal: true, same: 12, a: { documents: 12 } });
    const untyped = await compare({ a: { files: file('csv') }, b: cluster(), partitions: 2 });
    expect(untyped).toMatchObject({ equal: false, differing: 12, onlyInA: 0, onlyInB: 0 });
    const parquet = await compare({ a: { files: file('parquet'), rows: { app } }, b: cluster(), partitions: 2 });
    expect(parquet).toMatchObject({ equal: true, same: 12 });
  });

  it('a row that cannot become a document fails the comparison, naming its file and row; the CLI takes --app', async () => {
    writeFileSync(file('bad.csv'), 'id,year\nid:ns:kinds::0,2000\nid:ns:kinds::1,not-a-year\n');
    await expect(
      compare({ a: { files: file('bad.csv'), rows: { app } }, b: cluster(), partitions: 2 }),
    ).rejects.toMatchObject({
      code: 'VB_BAD_ROW',
      place: { file: file('bad.csv'), line: 3 },
    });
    await expect(
      compare({ a: { files: file('csv'), rows: { operation: 'nope' as 'put' } }, b: cluster() }),
    ).rejects.toMatchObject({ code: 'VB_USAGE' });
    const write = process.stdout.write;
    const out: string[] = [];
    process.stdout.write = (chunk: string) => out.push(chunk) > 0;
    try {
      expect(
        await main(['compare', file('csv'), server.url, 'ns/kinds', '--app', app, '--quiet', '--partitions', '2']),
      ).toBe(0);
    } finally {
      process.stdout.write = write;
      process.exitCode = undefined;
    }
    expect(JSON.parse(out.join(''))).toMatchObject({ 'compare.equal': true, 'compare.same.count': 12 });
  });
});
