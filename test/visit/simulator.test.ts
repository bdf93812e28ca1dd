import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { visit } from '../../src/visit/visit.js';
import type { VisitRun } from '../../src/visit/visitor.js';
import { exportDocuments } from '../../src/visit/export/index.js';
import { bulkOperation } from '../../src/visit/bulk.js';
import { feed } from '../../src/feed/feeder.js';
import { tempDir as makeTempDir } from '../support/temp-dir.js';
import { abortAfter } from './abort-after.js';

const fastRetry = { baseDelayMs: 1, maxDelayMs: 10 };

function music(n: number, from = 0) {
  return Array.from({ length: n }, (_, k) => {
    const i = from + k;
    return { id: `id:ns:music::${i}`, fields: { title: `song ${i}`, year: 1990 + (i % 30), n: i } };
  });
}

async function collect(options: Parameters<typeof visit>[0]) {
  const docs: Array<{ id: string; kind: string; fields: Record<string, unknown> | undefined; slice: number }> = [];
  const v = visit(options);
  for await (const d of v) docs.push({ id: d.id, kind: d.kind, fields: d.fields, slice: d.slice });
  return { docs, report: await v.report };
}

function jsonLines(file: string): Array<Record<string, unknown>> {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('visiting the simulator', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  async function server(options: Parameters<typeof startDocumentServer>[0] = {}): Promise<DocumentServer> {
    const s = await startDocumentServer({ port: 0, visitChunkDocuments: 50, ...options });
    cleanups.push(() => s.close());
    return s;
  }
  function tempDir(): string {
    const { dir, cleanup } = makeTempDir('vb-visit-');
    cleanups.push(cleanup);
    return dir;
  }

  it('delivers every document exactly once across slices, and slice ids split the corpus without overlap', async () => {
    const s = await server();
    s.store.seed(music(1000));
    const all = await collect({ endpoint: s.url, namespace: 'ns', documentType: 'music', slices: 4 });
    expect(all.report.ok).toBe(true);
    expect(all.docs).toHaveLength(1000);
    expect(new Set(all.docs.map((d) => d.id)).size).toBe(1000);
    expect(new Set(all.docs.map((d) => d.slice))).toEqual(new Set([0, 1, 2, 3]));
    const a = await collect({ endpoint: s.url, namespace: 'ns', documentType: 'music', slices: 4, sliceIds: [0, 2] });
    const b = await collect({ endpoint: s.url, namespace: 'ns', documentType: 'music', slices: 4, sliceIds: [1, 3] });
    const ids = [...a.docs, ...b.docs].map((d) => d.id);
    expect(ids).toHaveLength(1000);
    expect(new Set(ids).size).toBe(1000);
  });

  it('honours selection, field sets, time ranges and tombstones', async () => {
    const s = await server();
    s.store.seed(music(200));
    const selected = await collect({
      endpoint: s.url,
      namespace: 'ns',
      documentType: 'music',
      selection: 'music.year >= 2015',
      slices: 2,
    });
    const expected = music(200)
      .filter((d) => d.fields.year >= 2015)
      .map((d) => d.id);
    expect(selected.docs.map((d) => d.id).sort()).toEqual(expected.sort());

    const titles = await collect({
      endpoint: s.url,
      namespace: 'ns',
      documentType: 'music',
      fieldSet: 'music:title',
      selection: 'music.n < 5',
    });
    expect(titles.docs).toHaveLength(5);
    for (const d of titles.docs) expect(Object.keys(d.fields!)).toEqual(['title']);

    // Time range: documents written at known times.
    const store = s.store.cluster();
    store.put('id:ns:music::old', { title: 'old' }, 1_000_000_000_000_000);
    store.put('id:ns:music::mid', { title: 'mid' }, 1_500_000_000_000_000);
    store.put('id:ns:music::new', { title: 'new' }, 1_800_000_000_000_000);
    const ranged = await collect({
      endpoint: s.url,
      namespace: 'ns',
      documentType: 'music',
      fromTimestamp: 1_200_000_000_000_000n,
      toTimestamp: 1_600_000_000_000_000n,
    });
    expect(ranged.docs.map((d) => d.id)).toEqual(['id:ns:music::mid']);

    s.store.remove('id:ns:music::3');
    s.store.remove('id:ns:music::4');
    const withRemoves = await collect({
      endpoint: s.url,
      namespace: 'ns',
      documentType: 'music',
      includeRemoves: true,
      selection: 'music.n < 5 or id = "id:ns:music::3" or id = "id:ns:music::4"',
      slices: 3,
    });
    const removes = withRemoves.docs
      .filter((d) => d.kind === 'remove')
      .map((d) => d.id)
      .sort();
    expect(removes).toEqual(['id:ns:music::3', 'id:ns:music::4']);
    expect(withRemoves.report.removes).toBe(2);
    const without = await collect({
      endpoint: s.url,
      namespace: 'ns',
      documentType: 'music',
      selection: 'music.n < 5',
    });
    expect(without.docs.map((d) => d.id).sort()).toEqual(['id:ns:music::0', 'id:ns:music::1', 'id:ns:music::2']);
  });

  it('resumes streams the simulator cuts, losing none and writing none twice', async () => {
    // A token every 20 documents, a cut after 37: every response makes some progress, then dies.
    const s = await server({ visitChunkDocuments: 20, faults: { cutStreamAfterDocuments: 37 } });
    s.store.seed(music(600));
    const dir = tempDir();
    const out = join(dir, 'out.jsonl');
    const summary = await exportDocuments({
      endpoint: s.url,
      namespace: 'ns',
      documentType: 'music',
      slices: 3,
      output: out,
      retry: { ...fastRetry, maxRetries: 5 },
    });
    expect(summary.ok).toBe(true);
    const ids = jsonLines(out).map((d) => d.put as string);
    expect(ids).toHaveLength(600);
    expect(new Set(ids).size).toBe(600);

    // A response that is always cut before its next token makes no progress: the slice gives up and says where.
    s.faults.set({ cutStreamAfterDocuments: 5 });
    // Four slices of 150: each response is cut (there are more than 5 documents in every slice).
    const stuck = await exportDocuments({
      endpoint: s.url,
      namespace: 'ns',
      documentType: 'music',
      slices: 4,
      output: join(dir, 'stuck.jsonl'),
      retry: { ...fastRetry, maxRetries: 3 },
    });
    expect(stuck.ok).toBe(false);
    expect(stuck.slices[0].status).toBe('failed');
    // Cut before the first token: there is no token yet, so the report says to start over.
    expect(stuck.slices[0].continuation).toBeUndefined();
    expect(stuck.slices[0].error).toMatch(/cut off/);
    expect(jsonLines(join(dir, 'stuck.jsonl')).map((d) => d.put)).toHaveLength(
      new Set(jsonLines(join(dir, 'stuck.jsonl')).map((d) => d.put)).size,
    );
    expect(summary.slices.reduce((n, r) => n + r.retries, 0)).toBeGreaterThan(0);
    expect(summary.slices.reduce((n, r) => n + r.repeatsSkipped, 0)).toBeGreaterThan(0);
  });

  it('a checkpointed export stopped half way continues with the rest, each document once', async () => {
    const s = await server({ visitChunkDocuments: 20 });
    s.store.seed(music(1000));
    const dir = tempDir();
    const out = join(dir, 'out.jsonl');
    const checkpoint = join(dir, 'cp.json');
    const controller = new AbortController();
    const first = await exportDocuments({
      endpoint: s.url,
      namespace: 'ns',
      documentType: 'music',
      slices: 2,
      output: out,
      checkpoint,
      // Small responses so the stop falls between requests and inside them.
      wantedDocumentCount: 30,
      stream: true,
      signal: controller.signal,
      onStart: abortAfter(controller, 400),
    });
    expect(first.ok).toBe(false);
    const partial = jsonLines(out).length;
    expect(partial).toBeGreaterThan(0);
    expect(partial).toBeLessThan(1000);
    const saved = JSON.parse(readFileSync(checkpoint, 'utf8')) as { slices: Record<string, { continuation?: string }> };
    expect(Object.keys(saved.slices).sort()).toEqual(['0', '1']);

    const second = await exportDocuments({
      endpoint: s.url,
      namespace: 'ns',
      documentType: 'music',
      slices: 2,
      output: out,
      checkpoint,
      wantedDocumentCount: 30,
    });
    expect(second.ok).toBe(true);
    expect(second.resumed).toBe(true);
    const ids = jsonLines(out).map((d) => d.put as string);
    expect(ids).toHaveLength(1000);
    expect(new Set(ids).size).toBe(1000);
    // A third run finds every slice finished and requests nothing.
    const third = await exportDocuments({
      endpoint: s.url,
      namespace: 'ns',
      documentType: 'music',
      slices: 2,
      output: out,
      checkpoint,
    });
    expect(third.slices.every((r) => r.requests === 0)).toBe(true);
    expect(jsonLines(out)).toHaveLength(1000);
    // A checkpoint is never applied to another visit.
    await expect(
      exportDocuments({ endpoint: s.url, namespace: 'ns', documentType: 'music', slices: 3, output: out, checkpoint }),
    ).rejects.toMatchObject({ code: 'VB_USAGE' });
  });

  it('--format feed output fed into a second simulator reproduces the first; json and plain paging agree', async () => {
    const a = await server();
    const b = await server();
    a.store.seed(music(300));
    const dir = tempDir();
    const file = join(dir, 'feed.jsonl');
    const summary = await exportDocuments({
      endpoint: a.url,
      namespace: 'ns',
      documentType: 'music',
      slices: 2,
      format: 'feed',
      output: file,
    });
    expect(summary.documents).toBe(300);
    const fed = await feed(file, { endpoint: b.url, failures: false, checkpoint: false });
    expect(fed.ok).toBe(300);
    const strip = (docs: Array<{ id: string; fields: Record<string, unknown> }>) =>
      docs.map((d) => ({ id: d.id, fields: d.fields })).sort((x, y) => x.id.localeCompare(y.id));
    expect(strip(b.store.all())).toEqual(strip(a.store.all()));

    const json = join(dir, 'all.json');
    await exportDocuments({
      endpoint: a.url,
      namespace: 'ns',
      documentType: 'music',
      format: 'json',
      output: json,
      stream: false,
      wantedDocumentCount: 40,
    });
    const array = JSON.parse(readFileSync(json, 'utf8')) as Array<{ put: string; fields: unknown }>;
    expect(array).toHaveLength(300);
    expect(strip(array.map((o) => ({ id: o.put, fields: o.fields as Record<string, unknown> })))).toEqual(
      strip(a.store.all()),
    );
  });

  it('visits the whole cluster without a type, and compresses .gz output', async () => {
    const s = await server();
    s.store.seed(music(50));
    s.store.seed([{ id: 'id:other:book::1', fields: { t: 1 } }]);
    const all = await collect({ endpoint: s.url, cluster: 'content', slices: 2 });
    expect(all.docs.map((d) => d.id).sort()).toEqual([...music(50).map((d) => d.id), 'id:other:book::1'].sort());
    const dir = tempDir();
    const file = join(dir, 'all.jsonl.gz');
    const summary = await exportDocuments({ endpoint: s.url, cluster: 'content', output: file });
    expect(summary.documents).toBe(51);
    const lines = gunzipSync(readFileSync(file)).toString().trim().split('\n');
    expect(lines).toHaveLength(51);
    expect(readFileSync(file).length).toBeLessThan(summary.outputBytes);
  });

  it('a consumer that does not pull stops the HTTP reads instead of buffering', async () => {
    const s = await server({ visitChunkDocuments: 1000 });
    // 4 KB documents: what HTTP/2 lets arrive unread is the stream's 16 MiB window, some 4,000 of them (of 80 MB).
    const filler = 'x'.repeat(4000);
    s.store.seed(Array.from({ length: 20_000 }, (_, i) => ({ id: `id:ns:music::${i}`, fields: { filler, n: i } })));
    let run: VisitRun | undefined;
    const v = visit(
      { endpoint: s.url, namespace: 'ns', documentType: 'music', slices: 1 },
      { onStart: (r) => (run = r) },
    );
    const it = v[Symbol.asyncIterator]();
    expect((await it.next()).done).toBe(false);
    // 80 MB would cross loopback in far less than this if nothing held the reads back.
    await new Promise((r) => setTimeout(r, 300));
    expect(run!.documents()).toBeLessThan(10_000);
    let n = 1;
    while (!(await it.next()).done) n++;
    expect(n).toBe(20_000);
  });

  it('bulk update, delete and copy change exactly the selected documents; dry runs change nothing', async () => {
    const s = await server({ clusters: ['content', 'backup'], visitChunkDocuments: 25 });
    s.store.seed(music(200));
    const base = { endpoint: s.url, namespace: 'ns', documentType: 'music', cluster: 'content', retry: fastRetry };
    const selected = music(200)
      .filter((d) => d.fields.year < 1995)
      .map((d) => d.id);

    const dry = await bulkOperation({
      ...base,
      kind: 'update-where',
      selection: 'music.year < 1995',
      fields: { title: { assign: 'x' } },
      dryRun: true,
    });
    expect(dry).toMatchObject({ ok: true, dryRun: true, documentCount: selected.length });
    expect(s.store.get('id:ns:music::0')!.fields.title).toBe('song 0');

    let progress = 0;
    const updated = await bulkOperation({
      ...base,
      kind: 'update-where',
      selection: 'music.year < 1995',
      fields: { title: { assign: 'old' } },
      onProgress: (n) => (progress = n),
    });
    expect(updated).toMatchObject({ ok: true, documentCount: selected.length });
    expect(updated.requests).toBeGreaterThan(1);
    expect(progress).toBe(selected.length);
    for (const d of s.store.all('content')) expect(d.fields.title === 'old').toBe(selected.includes(d.id));

    const copied = await bulkOperation({
      ...base,
      kind: 'copy',
      selection: 'music.year < 1995',
      destinationCluster: 'backup',
    });
    expect(copied).toMatchObject({ ok: true, documentCount: selected.length });
    expect(
      s.store
        .all('backup')
        .map((d) => d.id)
        .sort(),
    ).toEqual([...selected].sort());

    const deleted = await bulkOperation({ ...base, kind: 'delete-where', selection: 'music.year < 1995' });
    expect(deleted).toMatchObject({ ok: true, documentCount: selected.length });
    expect(s.store.size('content')).toBe(200 - selected.length);
    expect(s.store.all('content').some((d) => selected.includes(d.id))).toBe(false);

    await expect(
      bulkOperation({ ...base, kind: 'update-where', fields: { title: { assign: 'y' } } }),
    ).rejects.toMatchObject({ code: 'VB_USAGE' });
  });

  it("bulk operations without a cluster send the service's only one (it requires one); of several, the caller picks", async () => {
    const one = await server();
    one.store.seed(music(10));
    const messages: string[] = [];
    const deleted = await bulkOperation({
      endpoint: one.url,
      namespace: 'ns',
      documentType: 'music',
      kind: 'delete-where',
      selection: 'music.n < 4',
      onMessage: (m) => messages.push(m),
    });
    expect(deleted).toMatchObject({ ok: true, documentCount: 4 });
    expect(messages).toEqual(["content cluster 'content' (the service's only one)"]);
    expect(one.store.size()).toBe(6);

    const two = await server({ clusters: ['content', 'backup'] });
    two.store.seed(music(10));
    await expect(
      bulkOperation({
        endpoint: two.url,
        namespace: 'ns',
        documentType: 'music',
        kind: 'delete-where',
        selection: 'true',
      }),
    ).rejects.toMatchObject({
      code: 'VB_USAGE',
      message: "the service has several content clusters ('content', 'backup'): name one with cluster",
    });
    expect(two.store.size('content')).toBe(10);
  });
});
