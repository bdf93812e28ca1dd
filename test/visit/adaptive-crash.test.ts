import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startDocumentServer } from '../../src/simulator/document-api/document-server.js';
import type { VisitCheckpoint } from '../../src/visit/visit-checkpoint.js';
import { tempDir } from '../faults/harness.js';
import { exportedIds, killTwiceThenFinish, outputFile, outputFolder } from '../faults/kill-until-done.js';

/**
 * As test/faults/visit-crash.test.ts, for the default visit (no --slices: 256 slices, as many in flight as pay): a
 * checkpointed export killed with SIGKILL at seeded times while the service is slow and answers some requests with
 * 503, then the same command until it finishes. The checkpoint holds finished, begun and unstarted slices and the
 * search's level; the rerun cuts the files back, resumes the begun slices first and starts the rest, and every
 * document is in the files once.
 */
describe('the adaptive visit killed with SIGKILL, then the same command again until done', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  const documents = 3000;
  const noise = (i: number): string =>
    Array.from({ length: 16 }, (_, k) => createHash('sha256').update(`${i}/${k}`).digest('hex')).join('');
  const cases = [
    {
      name: '-o out.jsonl, pages of 5',
      output: ['-o', 'out.jsonl', '--no-stream', '--wanted-document-count', '5'],
      files: (dir: string) => outputFile(dir, 'out.jsonl'),
    },
    {
      name: '-o out.jsonl.gz --workers 2, streamed',
      output: ['-o', 'out.jsonl.gz', '--workers', '2'],
      files: (dir: string) => outputFile(dir, 'out.jsonl.gz'),
    },
    {
      name: '--output-dir out --gzip, streamed',
      output: ['--output-dir', 'out', '--gzip'],
      files: (dir: string) => outputFolder(dir, 'out'),
    },
  ];

  for (const c of cases) {
    const seed = cases.indexOf(c) + 11;
    it(`${c.name}, seed ${seed}: every document once, files valid`, async () => {
      // A visit cost over 4 lanes keeps a streamed run going for seconds; the latency does for pages.
      const server = await startDocumentServer({
        port: 0,
        visitChunkDocuments: 10,
        faults: { latencyMs: 20, errorRate: 0.03, errorStatuses: [503], visitCostUs: 1000, visitParallelism: 4 },
      });
      cleanups.push(() => server.close());
      server.store.seed(
        Array.from({ length: documents }, (_, i) => ({ id: `id:ns:music::k${i}`, fields: { n: i, text: noise(i) } })),
      );
      const { dir, cleanup } = tempDir();
      cleanups.push(cleanup);
      const before = (): string | undefined => {
        if (!existsSync(join(dir, 'cp.json'))) return undefined;
        const saved = JSON.parse(readFileSync(join(dir, 'cp.json'), 'utf8')) as VisitCheckpoint;
        const entries = Object.values(saved.slices);
        return `checkpoint: ${entries.filter((s) => s.finished).length} finished, ${entries.filter((s) => !s.finished).length} begun, ${256 - entries.length} not started, level ${saved.inflight}`;
      };
      const args = ['visit', 'ns/music', '-t', server.url, '--checkpoint', 'cp.json', ...c.output, '--quiet'];
      const files = c.files(dir);
      const { notes, finished } = await killTwiceThenFinish({ args, dir, files, seed, spreadMs: 1500, before });
      expect(finished?.code, `seed ${seed}: ${finished?.stderr ?? 'never finished'}`).toBe(0);
      const story = `${c.name}, seed ${seed}: ${notes.join('; ')}`;
      const ids = exportedIds(files());
      expect(new Set(ids).size, story).toBe(documents);
      expect(ids.length, story).toBe(documents);
    });
  }
});
