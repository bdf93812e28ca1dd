import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compare, isVespaBulkError, type CompareSummary } from '../../src/index.js';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { tempDir, type TempDir } from '../support/temp-dir.js';
import { feedLines, plantedDiff, seed, sideA, sideB, writeExportDir } from './corpus.js';

function readDiff(path: string): unknown[] {
  return readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as unknown)
    .sort((x, y) => ((x as { id: string }).id < (y as { id: string }).id ? -1 : 1));
}

function expectPlanted(summary: CompareSummary, diffFile: string): void {
  expect(summary).toMatchObject({
    equal: false,
    onlyInA: 1,
    onlyInB: 1,
    differing: 1,
    same: 33,
    a: { documents: 35 },
    b: { documents: 35 },
  });
  expect(summary.types).toEqual({
    music: { a: 30, b: 30, onlyInA: 1, onlyInB: 1, differing: 1 },
    book: { a: 5, b: 5, onlyInA: 0, onlyInB: 0, differing: 0 },
  });
  expect(summary.examples).toEqual({
    onlyInA: ['id:ns:music::0'],
    onlyInB: ['id:ns:music::extra'],
    differing: ['id:ns:music::1'],
  });
  expect(readDiff(diffFile)).toEqual(plantedDiff);
}

describe('compare', () => {
  let a: DocumentServer;
  let b: DocumentServer;
  let tmp: TempDir;
  let exportA: string;
  let exportB: string;
  beforeAll(async () => {
    [a, b] = await Promise.all([startDocumentServer({ port: 0 }), startDocumentServer({ port: 0 })]);
    seed(a, sideA());
    seed(b, sideB());
    tmp = tempDir('vb-compare-');
    exportA = writeExportDir(join(tmp.dir, 'export-a'), sideA());
    // B as one feed JSON array, with a put and then a remove of an id A has: the remove wins.
    exportB = join(tmp.dir, 'b.json');
    writeFileSync(
      exportB,
      `[\n${[...feedLines(sideB()), '{"put":"id:ns:music::0","fields":{"title":"t0"}}', '{"remove":"id:ns:music::0"}'].join(',\n')}\n]\n`,
    );
  });
  afterAll(async () => {
    await Promise.all([a.close(), b.close()]);
    tmp.cleanup();
  });

  it('finds the planted differences between two clusters and nothing else', async () => {
    const diff = join(tmp.dir, 'cc.jsonl');
    const summary = await compare({
      a: { endpoint: a.url, slices: 4 },
      b: { endpoint: b.url, slices: 3 },
      diff,
      partitions: 5,
    });
    expectPlanted(summary, diff);
    expect(summary.a.source).toBe(a.url);
  });

  it('compares one type and a selection of each cluster', async () => {
    const summary = await compare({
      a: { endpoint: a.url, namespace: 'ns', documentType: 'book', selection: 'book.pages > 101', slices: 1 },
      b: { endpoint: b.url, namespace: 'ns', documentType: 'book', selection: 'book.pages > 101', slices: 2 },
    });
    expect(summary).toMatchObject({ equal: true, same: 3, types: { book: { a: 3, b: 3 } } });
  });

  it('finds them between a cluster and an export, and between two exports', async () => {
    const diff = join(tmp.dir, 'ce.jsonl');
    expectPlanted(
      await compare({ a: { endpoint: a.url, slices: 2 }, b: { files: exportB }, diff, partitions: 3 }),
      diff,
    );
    const diff2 = join(tmp.dir, 'ee.jsonl');
    expectPlanted(await compare({ a: { files: exportA }, b: { files: [exportB] }, diff: diff2 }), diff2);
    // An export of a cluster is the cluster.
    expect(await compare({ a: { files: exportA }, b: { endpoint: a.url, slices: 2 } })).toMatchObject({
      equal: true,
      same: 35,
      onlyInA: 0,
    });
  });

  it('refuses an update in an export, naming its file and line, and bad options before reading', async () => {
    const bad = join(tmp.dir, 'update.jsonl');
    writeFileSync(
      bad,
      '{"put":"id:ns:music::1","fields":{}}\n{"update":"id:ns:music::2","fields":{"title":{"assign":"x"}}}\n',
    );
    const err: unknown = await compare({ a: { files: bad }, b: { files: exportA } }).catch((e: unknown) => e);
    expect(isVespaBulkError(err, 'VB_BAD_OPERATION')).toBe(true);
    expect((err as { place: unknown }).place).toMatchObject({ file: bad, line: 2, documentId: 'id:ns:music::2' });
    await expect(compare({ a: { files: [] }, b: { files: exportA } })).rejects.toThrow(/a\.files/);
    await expect(compare({ a: { endpoint: 'nope' }, b: { files: exportA } })).rejects.toThrow(/side a: endpoint/);
    await expect(compare({ a: { files: exportA }, b: { files: exportA }, partitions: 0 })).rejects.toThrow(
      /partitions/,
    );
    await expect(compare({ a: { files: join(tmp.dir, 'absent') }, b: { files: exportA } })).rejects.toThrow(
      /cannot read '.*absent'/,
    );
    expect(b.store.size()).toBe(35);
    // Stopped: an error, never a result of what was read so far.
    const stopped = new AbortController();
    stopped.abort();
    await expect(
      compare({ a: { endpoint: a.url, slices: 2 }, b: { files: exportA }, signal: stopped.signal }),
    ).rejects.toMatchObject({ code: 'VB_ABORTED' });
  });
});
