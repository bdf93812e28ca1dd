import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { compare, type CompareClusterSide } from '../../src/compare/index.js';
import { feed } from '../../src/feed/feeder.js';
import { DocumentStore, startDocumentServer } from '../../src/simulator/document-api/document-server.js';
import { exportDocuments, type ExportOptions } from '../../src/visit/export/index.js';
import { tempDir } from '../support/temp-dir.js';

/**
 * Issue 23's backup recipe checked by `compare()`, not by the test reading stores: a copy restored from a full export
 * differs from the source by exactly the changes made since, and the increment (`since`) brings it to equality.
 */
describe('visit --since, checked by compare', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  const hour = 3_600_000;
  const id = (i: number | string): string => `id:ns:music::${i}`;

  it('a copy from the full export differs by the changes made since; fed the increment, it compares equal', async () => {
    // Seeded an hour back, as since.test.ts does, so that the increment's margin leaves the seeded documents out.
    const clock = { offsetMs: -hour };
    const source = await startDocumentServer({
      port: 0,
      store: new DocumentStore(['content'], { nowMs: () => Date.now() + clock.offsetMs }),
    });
    cleanups.push(() => source.close());
    source.store.seed(
      Array.from({ length: 30 }, (_, i) => ({ id: id(i), fields: { title: `t${i}`, n: i, tags: [`a${i}`] } })),
    );
    clock.offsetMs = 0;
    const copy = await startDocumentServer({ port: 0 });
    cleanups.push(() => copy.close());
    const { dir, cleanup } = tempDir('vb-since-compare-');
    cleanups.push(cleanup);
    const base: ExportOptions = { endpoint: source.url, namespace: 'ns', documentType: 'music', slices: 3 };

    const full = await exportDocuments({
      ...base,
      outputDir: join(dir, 'full'),
      gzip: true,
      checkpoint: join(dir, 'full.ckpt'),
    });
    expect(full.documents).toBe(30);
    const changes = await feed(
      [
        { put: id('new1'), fields: { title: 'new', n: 100 } },
        { put: id('new2'), fields: { title: 'new', n: 101 } },
        { update: id(1), fields: { title: { assign: 'changed' } } },
        { update: id(2), fields: { n: { increment: 5 } } },
        { update: id(6), fields: { tags: { add: ['b6'] } } },
        { put: id(5), fields: { title: 'replaced' } },
        { remove: id(3) },
        { remove: id(4) },
        { remove: id(7) },
        // Put and removed again between the exports: neither side has it.
        { put: id('brief'), fields: { title: 'gone again' } },
        { remove: id('brief') },
      ],
      { endpoint: source.url, failures: false, checkpoint: false },
    );
    expect(changes.errors).toBe(0);
    const inc = await exportDocuments({
      ...base,
      since: join(dir, 'full.ckpt'),
      outputDir: join(dir, 'inc'),
      gzip: true,
    });
    expect(inc.ok).toBe(true);

    const restore = async (path: string): Promise<void> => {
      const files = readdirSync(path)
        .sort()
        .map((f) => join(path, f));
      expect((await feed(files, { endpoint: copy.url, failures: false, checkpoint: false })).errors).toBe(0);
    };
    const side = (endpoint: string): CompareClusterSide => ({
      endpoint,
      namespace: 'ns',
      documentType: 'music',
      slices: 2,
    });
    await restore(join(dir, 'full'));
    const before = await compare({
      a: side(source.url),
      b: side(copy.url),
      partitions: 4,
      diff: join(dir, 'before.diff.jsonl'),
    });
    expect(before).toMatchObject({
      equal: false,
      onlyInA: 2,
      onlyInB: 3,
      differing: 4,
      same: 23,
      a: { documents: 29 },
      b: { documents: 30 },
    });
    expect(before.examples.onlyInA.sort()).toEqual([id('new1'), id('new2')]);
    expect(before.examples.onlyInB.sort()).toEqual([id(3), id(4), id(7)]);
    expect(before.examples.differing.sort()).toEqual([id(1), id(2), id(5), id(6)]);
    // The diff file says field by field what the increment has to bring: id 5 was replaced by a put of a title alone.
    const diff = readFileSync(join(dir, 'before.diff.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string; side?: string; field?: string });
    expect(
      diff
        .filter((d) => d.id === id(5))
        .map((d) => d.field)
        .sort(),
    ).toEqual(['n', 'tags', 'title']);
    expect(diff.find((d) => d.id === id(6))).toEqual({ id: id(6), field: 'tags', a: ['a6', 'b6'], b: ['a6'] });
    expect(
      diff
        .filter((d) => d.side !== undefined)
        .map((d) => `${d.side} ${d.id}`)
        .sort(),
    ).toEqual([`a ${id('new1')}`, `a ${id('new2')}`, `b ${id(3)}`, `b ${id(4)}`, `b ${id(7)}`]);
    expect(before.types).toEqual({ music: { a: 29, b: 30, onlyInA: 2, onlyInB: 3, differing: 4 } });

    await restore(join(dir, 'inc'));
    const after = await compare({ a: side(source.url), b: side(copy.url), partitions: 4 });
    expect(after).toMatchObject({ equal: true, onlyInA: 0, onlyInB: 0, differing: 0, same: 29 });
    // The export files themselves, full then increment (later puts replace, removes take out), are the source too.
    const files = await compare({
      a: side(source.url),
      b: { files: [join(dir, 'full'), join(dir, 'inc')] },
      partitions: 4,
    });
    expect(files).toMatchObject({ equal: true, same: 29, b: { documents: 29 } });
  });
});
