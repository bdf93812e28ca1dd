import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { bulkOperation } from '../../src/visit/bulk.js';
import { exportDocuments } from '../../src/visit/export/index.js';
import { visit } from '../../src/visit/visit.js';
import { runCommand } from '../support/run-command.js';
import { abortAfter } from './abort-after.js';

/**
 * The whole cluster is both bucket spaces: the service visits only `default` at the root unless asked, so
 * the documents of global types (parents of imported fields) need a visit of their own.
 */

const musicIds = Array.from({ length: 150 }, (_, i) => `id:ns:music::m${i}`);
const bookIds = Array.from({ length: 60 }, (_, i) => `id:ns:book::b${i}`);

describe('visiting the whole cluster', () => {
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  async function server(): Promise<DocumentServer> {
    const s = await startDocumentServer({ port: 0, visitChunkDocuments: 10, globalDocumentTypes: ['book'] });
    cleanups.push(() => s.close());
    s.store.seed([
      ...musicIds.map((id, n) => ({ id, fields: { n } })),
      ...bookIds.map((id, n) => ({ id, fields: { n } })),
    ]);
    return s;
  }
  async function ids(
    options: Parameters<typeof visit>[0],
  ): Promise<{ ids: string[]; report: Awaited<ReturnType<typeof visit>['report']> }> {
    const v = visit(options);
    const out: string[] = [];
    for await (const d of v) out.push(d.id);
    return { ids: out, report: await v.report };
  }

  it('goes through both bucket spaces, each slice of each once; --bucket-space or a type picks one', async () => {
    const s = await server();
    const all = await ids({ endpoint: s.url, cluster: 'content', slices: 3 });
    expect(all.ids).toHaveLength(musicIds.length + bookIds.length);
    expect([...all.ids].sort()).toEqual([...musicIds, ...bookIds].sort());
    expect(all.report.slices.map((r) => `${r.slice}/${r.bucketSpace}`).sort()).toEqual([
      '0/default',
      '0/global',
      '1/default',
      '1/global',
      '2/default',
      '2/global',
    ]);

    expect((await ids({ endpoint: s.url, cluster: 'content', bucketSpace: 'default' })).ids.sort()).toEqual(
      [...musicIds].sort(),
    );
    const global = await ids({ endpoint: s.url, cluster: 'content', bucketSpace: 'global', slices: 2 });
    expect(global.ids.sort()).toEqual([...bookIds].sort());
    // A single space is no split: reports stay as they were.
    expect(global.report.slices.every((r) => r.bucketSpace === undefined)).toBe(true);
    expect((await ids({ endpoint: s.url, namespace: 'ns', documentType: 'book' })).ids.sort()).toEqual(
      [...bookIds].sort(),
    );
  });

  it('checkpoints both spaces separately: stopped half way and run again, every document once', async () => {
    const s = await server();
    const dir = mkdtempSync(join(tmpdir(), 'vb-space-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const out = join(dir, 'all.jsonl');
    const checkpoint = join(dir, 'cp.json');
    const controller = new AbortController();
    const base = { endpoint: s.url, cluster: 'content', slices: 2, output: out, checkpoint, wantedDocumentCount: 7 };
    const first = await exportDocuments({
      ...base,
      signal: controller.signal,
      onStart: abortAfter(controller, 80),
    });
    expect(first.ok).toBe(false);
    const saved = JSON.parse(readFileSync(checkpoint, 'utf8')) as { slices: Record<string, unknown> };
    expect(Object.keys(saved.slices).sort()).toEqual(['0', '0@global', '1', '1@global']);
    const second = await exportDocuments(base);
    expect(second.ok).toBe(true);
    expect(second.resumed).toBe(true);
    const written = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { put: string }).put);
    expect(written).toHaveLength(musicIds.length + bookIds.length);
    expect(new Set(written).size).toBe(written.length);
  });

  it('counts in a bulk dry run at the root what the bulk request would touch: the default space', async () => {
    const s = await server();
    const base = { endpoint: s.url, cluster: 'content', selection: 'true' };
    const dry = await bulkOperation({ ...base, kind: 'delete-where', dryRun: true });
    const real = await bulkOperation({ ...base, kind: 'delete-where' });
    expect(real.ok).toBe(true);
    expect(dry.documentCount).toBe(real.documentCount);
    expect(
      s.store
        .all('content')
        .map((d) => d.id)
        .sort(),
    ).toEqual([...bookIds].sort());
  });

  it('on the command line: everything by default; a failed slice says its space; a refused request is not "start again"', async () => {
    const s = await server();
    const all = await runCommand(['visit', '-t', s.url, '--content-cluster', 'content', '--slices', '2', '--quiet']);
    expect(all.code).toBe(0);
    expect(all.stdout.trim().split('\n')).toHaveLength(musicIds.length + bookIds.length);

    const ambiguous = await runCommand([
      'visit',
      '-t',
      s.url,
      '--cluster',
      'content',
      '--continuation',
      'x',
      '--quiet',
    ]);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toMatch(/--continuation of a whole-cluster visit needs --bucket-space/);

    // A selection that does not parse is refused before anything is sent (exit 2); the service refuses this field set.
    const refused = await runCommand([
      'visit',
      '-t',
      s.url,
      '--cluster',
      'content',
      '--field-set',
      '[nonsense]',
      '--quiet',
    ]);
    expect(refused.code).toBe(1);
    // Every slice failed alike: one line, naming the bucket spaces, not 512.
    expect(refused.stderr).toMatch(
      /^vespa-bulk: 512 slices \(default and global bucket spaces\) failed: HTTP 400: .*fix it and run again$/m,
    );
    expect(refused.stderr.match(/failed:/g)).toHaveLength(1);
    expect(refused.stderr).not.toMatch(/start it again/);
  });
});
