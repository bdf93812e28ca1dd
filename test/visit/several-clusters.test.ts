import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { exportDocuments } from '../../src/visit/export/index.js';
import { chainsOf } from '../../src/visit/query.js';
import { countsByCluster } from '../../src/cli/summary-names.js';
import { runCommand } from '../support/run-command.js';
import { abortAfter } from './abort-after.js';

/**
 * A deployment with several content clusters: `vespa visit` visits each (client/go/internal/cli/cmd/visit.go,
 * visitClusters, lines 288-312), so the whole-cluster export here does too, each slice with a chain per cluster.
 */

const aIds = Array.from({ length: 90 }, (_, i) => `id:ns:music::a${i}`);
const bIds = Array.from({ length: 40 }, (_, i) => `id:ns:music::b${i}`);

describe('visiting several content clusters', () => {
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  async function server(): Promise<DocumentServer> {
    const s = await startDocumentServer({ port: 0, clusters: ['a', 'b'], visitChunkDocuments: 10 });
    cleanups.push(() => s.close());
    s.store.seed(
      aIds.map((id, n) => ({ id, fields: { n } })),
      { cluster: 'a' },
    );
    s.store.seed(
      bIds.map((id, n) => ({ id, fields: { n } })),
      { cluster: 'b' },
    );
    return s;
  }
  function folder(): string {
    const dir = mkdtempSync(join(tmpdir(), 'vb-clusters-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    return dir;
  }
  const idsIn = (file: string): string[] =>
    readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { put: string }).put);

  it('keys each chain after its cluster; one cluster in `clusters` is no split', () => {
    expect(
      chainsOf({ slices: 2, clusters: ['a', 'b'], namespace: 'ns', documentType: 'music' }).map((c) => c.key),
    ).toEqual(['a/0', 'a/1', 'b/0', 'b/1']);
    expect(chainsOf({ slices: 1, clusters: ['a', 'b'] }).map((c) => c.key)).toEqual([
      'a/0',
      'a/0@global',
      'b/0',
      'b/0@global',
    ]);
    expect(chainsOf({ slices: 1, clusters: ['a'] }).map((c) => `${c.key}:${c.cluster ?? '-'}`)).toEqual([
      '0:-',
      '0@global:-',
    ]);
    expect(
      countsByCluster([
        { cluster: 'a', documents: 2, removes: 1 },
        { cluster: 'a', documents: 3, removes: 0 },
        { cluster: 'b', documents: 1, removes: 0 },
        { documents: 9, removes: 0 },
      ]),
    ).toEqual({
      a: { documents: 5, removes: 1 },
      b: { documents: 1, removes: 0 },
    });
  });

  it('exports every cluster, naming the cluster of each slice in the report', async () => {
    const s = await server();
    const out = join(folder(), 'all.jsonl');
    const summary = await exportDocuments({ endpoint: s.url, clusters: ['a', 'b'], slices: 2, output: out });
    expect(summary.ok).toBe(true);
    expect(idsIn(out).sort()).toEqual([...aIds, ...bIds].sort());
    expect(countsByCluster(summary.slices)).toEqual({
      a: { documents: aIds.length, removes: 0 },
      b: { documents: bIds.length, removes: 0 },
    });
    expect(new Set(summary.slices.map((r) => r.cluster))).toEqual(new Set(['a', 'b']));
  });

  it('refuses cluster and clusters together', async () => {
    await expect(
      exportDocuments({ endpoint: 'http://127.0.0.1:1', cluster: 'a', clusters: ['a', 'b'] }),
    ).rejects.toMatchObject({
      code: 'VB_USAGE',
      message: 'give clusters or cluster, not both',
    });
  });

  it('checkpoints per cluster: stopped half way and run again, every document once', async () => {
    const s = await server();
    const dir = folder();
    const out = join(dir, 'all.jsonl');
    const checkpoint = join(dir, 'cp.json');
    const controller = new AbortController();
    const base = { endpoint: s.url, clusters: ['a', 'b'], slices: 2, output: out, checkpoint, wantedDocumentCount: 7 };
    const first = await exportDocuments({
      ...base,
      signal: controller.signal,
      onStart: abortAfter(controller, 50),
    });
    expect(first.ok).toBe(false);
    const saved = JSON.parse(readFileSync(checkpoint, 'utf8')) as { slices: Record<string, unknown> };
    expect(Object.keys(saved.slices).every((k) => /^[ab]\/\d(@global)?$/.test(k))).toBe(true);
    const second = await exportDocuments(base);
    expect(second.ok).toBe(true);
    expect(second.resumed).toBe(true);
    const written = idsIn(out);
    expect(written.sort()).toEqual([...aIds, ...bIds].sort());
  });

  it('on the command line: without --cluster each is visited and named in the summary', async () => {
    const s = await server();
    const out = join(folder(), 'all.jsonl');
    const run = await runCommand(['visit', '-t', s.url, '--slices', '2', '--output', out]);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain("vespa-bulk: content clusters 'a', 'b': visiting each");
    expect(idsIn(out).sort()).toEqual([...aIds, ...bIds].sort());
    const summary = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(summary['visit.clusters']).toEqual({
      a: { documents: aIds.length, removes: 0 },
      b: { documents: bIds.length, removes: 0 },
    });
    // The last progress line counts the slices finished (2 per cluster, in 2 bucket spaces) of all, none in flight.
    const last = run.stderr
      .trimEnd()
      .split('\n')
      .filter((l) => l.startsWith('visit '))
      .at(-1);
    expect(last).toMatch(/^visit done .* slices 8\/8 {2}failed 0 {2}retried 0$/);
  });
});
