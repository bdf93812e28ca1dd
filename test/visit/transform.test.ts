import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { exportDocuments } from '../../src/visit/export/index.js';
import { migrate } from '../../src/migrate/migrate.js';
import { tempDir } from '../support/temp-dir.js';

/** Renames `title` to `name`, drops odd `n`, and for n % 10 == 0 adds a second operation. */
const transformModule = `
export default async function (op) {
  if (op.remove !== undefined) return op;
  if (op.fields.n % 2 === 1) return null;
  const { title, ...rest } = op.fields;
  const out = { put: op.put, fields: { ...rest, name: title } };
  return op.fields.n % 10 === 0 ? [out, { put: op.put + '-copy', fields: { n: op.fields.n } }] : out;
}
`;

function songs(n: number) {
  return Array.from({ length: n }, (_, i) => ({ id: `id:ns:music::${i}`, fields: { title: `song ${i}`, n: i } }));
}

/** What the transform makes of songs(n). */
function expected(n: number): Map<string, Record<string, unknown>> {
  const m = new Map<string, Record<string, unknown>>();
  for (let i = 0; i < n; i += 2) {
    m.set(`id:ns:music::${i}`, { n: i, name: `song ${i}` });
    if (i % 10 === 0) m.set(`id:ns:music::${i}-copy`, { n: i });
  }
  return m;
}

describe('--transform on visit output', () => {
  const servers: DocumentServer[] = [];
  const cleanups: (() => void)[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
    cleanups.splice(0).forEach((c) => c());
  });
  async function server(): Promise<DocumentServer> {
    const s = await startDocumentServer({ port: 0, visitChunkDocuments: 25 });
    servers.push(s);
    return s;
  }
  function dir(): string {
    const t = tempDir();
    cleanups.push(t.cleanup);
    return t.dir;
  }

  it('an export writes what the transform returns, as feed operations', async () => {
    const s = await server();
    s.store.seed(songs(100));
    const d = dir();
    const module = join(d, 't.mjs');
    writeFileSync(module, transformModule);
    const out = join(d, 'out.jsonl');
    const summary = await exportDocuments({
      endpoint: s.url,
      namespace: 'ns',
      documentType: 'music',
      slices: 2,
      output: out,
      transform: module,
    });
    expect(summary.ok).toBe(true);
    const lines = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { put: string; fields: Record<string, unknown> });
    expect(new Map(lines.map((l) => [l.put, l.fields]))).toEqual(expected(100));
    expect(lines.length).toBe(expected(100).size);
  });

  it('a transform that throws fails the export with VB_TRANSFORM naming the document', async () => {
    const s = await server();
    s.store.seed(songs(10));
    await expect(
      exportDocuments({
        endpoint: s.url,
        namespace: 'ns',
        documentType: 'music',
        slices: 1,
        output: join(dir(), 'out.jsonl'),
        transform: (op) => {
          if (op.put === 'id:ns:music::3') throw new Error('no 3');
          return op;
        },
      }),
    ).rejects.toThrow(/no 3 \(document id:ns:music::3\)/);
  });

  it('a table export writes the transformed documents; a remove returned fails it with VB_TRANSFORM naming the document', async () => {
    const s = await server();
    s.store.seed(songs(10));
    const d = dir();
    const module = join(d, 't.mjs');
    writeFileSync(module, transformModule);
    const base = { endpoint: s.url, namespace: 'ns', documentType: 'music', slices: 1, format: 'csv' as const };
    await exportDocuments({ ...base, output: join(d, 'out.csv'), transform: module });
    const lines = readFileSync(join(d, 'out.csv'), 'utf8').trim().split('\n');
    expect(lines[0]).toBe('id,n,name');
    expect(lines.slice(1).sort()).toEqual(
      [...expected(10)].map(([id, f]) => `${id},${String(f.n)},${(f.name as string | undefined) ?? ''}`).sort(),
    );
    await expect(
      exportDocuments({
        ...base,
        output: join(d, 'rm.csv'),
        transform: (op) => (op.put === 'id:ns:music::3' ? { remove: op.put } : op),
      }),
    ).rejects.toMatchObject({
      code: 'VB_TRANSFORM',
      message: expect.stringMatching(/return null .*\(document id:ns:music::3\)/) as unknown,
    });
  });

  it('migrate feeds what the transform returns (shuffled by default), removes included', async () => {
    const [a, b] = [await server(), await server()];
    a.store.seed(songs(60));
    b.store.seed([{ id: 'id:ns:music::stale', fields: { n: -1 } }]);
    a.store.put('id:ns:music::stale', { n: -1 });
    a.store.remove('id:ns:music::stale');
    const d = dir();
    const module = join(d, 't.mjs');
    writeFileSync(module, transformModule);
    const summary = await migrate({
      endpoint: a.url,
      namespace: 'ns',
      documentType: 'music',
      includeRemoves: true,
      slices: 2,
      destination: b.url,
      feed: { transform: module },
    });
    expect(summary.ok).toBe(true);
    expect(summary.feed.dropped).toBe(30);
    expect(new Map(b.store.all().map((doc) => [doc.id, doc.fields]))).toEqual(expected(60));
  });
});
