import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startDocumentServer } from '../../src/simulator/document-api/document-server.js';
import { alternateProtocols, expectSpoke, protocolFlag } from '../support/protocols.js';
import { tempDir } from './harness.js';
import { exportedIds, killTwiceThenFinish, outputFile, outputFolder } from './kill-until-done.js';

/**
 * A checkpointed export killed outright (SIGKILL: no handler runs, nothing is flushed on the way out) at random
 * points while the service is slow and answers some requests with 503, then the same command run again until it
 * finishes, as a Kubernetes Job restarts an evicted pod. The files may hold more than the last checkpoint covers,
 * or end in a cut line or a cut gzip member: the rerun cuts them back to the checkpoint's lengths, so at the end
 * every document is in them exactly once and gunzip reads them whole. The gzip file written by two workers (cut
 * gzip members, the workers' outputs merged) has two seeds, one a protocol; the plain file one seed over HTTP/2,
 * the folder one over HTTP/1.1. Each form meets two kill points, and each protocol a gzip output.
 */
describe('visit killed with SIGKILL, then the same command again until done', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  const documents = 3000;
  // About 2 KB a document that gzip cannot shrink much, so 1 MiB blocks and gzip members reach the files
  // between checkpoints too (what a kill then leaves past the checkpoint is what the rerun must cut back).
  const noise = (i: number): string =>
    Array.from({ length: 32 }, (_, k) => createHash('sha256').update(`${i}/${k}`).digest('hex')).join('');
  const cases = [
    { name: '-o out.jsonl', output: ['-o', 'out.jsonl'], files: (dir: string) => outputFile(dir, 'out.jsonl') },
    {
      name: '-o out.jsonl.gz --workers 2',
      output: ['-o', 'out.jsonl.gz', '--workers', '2'],
      files: (dir: string) => outputFile(dir, 'out.jsonl.gz'),
      seeds: [1, 2],
    },
    {
      name: '--output-dir out --gzip',
      output: ['--output-dir', 'out', '--gzip'],
      files: (dir: string) => outputFolder(dir, 'out'),
    },
  ];

  // Four cases, not six (each is 10 s of a suite kept near ten minutes): a second seed of the plain file and of
  // the folder met the same code at other kill points.
  const runs = alternateProtocols(cases.flatMap((c) => (c.seeds ?? [1]).map((seed) => ({ c, seed }))));
  for (const { c, seed, protocol } of runs) {
    it(`${c.name}, seed ${seed} over ${protocol}: every document once, files valid`, async () => {
      const server = await startDocumentServer({
        port: 0,
        faults: { latencyMs: 20, errorRate: 0.03, errorStatuses: [503] },
      });
      cleanups.push(() => server.close());
      server.store.seed(
        Array.from({ length: documents }, (_, i) => ({ id: `id:ns:music::c${i}`, fields: { n: i, text: noise(i) } })),
      );
      const { dir, cleanup } = tempDir();
      cleanups.push(cleanup);
      const files = c.files(dir);
      // What a rerun has to cut back: the bytes written after the last checkpoint (and a cut line or member).
      const before = (): string => {
        const recorded = existsSync(join(dir, 'cp.json'))
          ? (JSON.parse(readFileSync(join(dir, 'cp.json'), 'utf8')) as { outputs?: Record<string, number> }).outputs
          : undefined;
        const written = files().reduce((n, f) => n + statSync(f).size, 0);
        return recorded === undefined
          ? `no checkpoint yet, starts over from ${written} bytes`
          : `cuts back ${written - Object.values(recorded).reduce((n, s) => n + s, 0)} bytes`;
      };
      const args = [
        'visit',
        'ns/music',
        '-t',
        server.url,
        ...protocolFlag(protocol),
        '--slices',
        '4',
        '--no-stream',
        '--wanted-document-count',
        '5',
        '--checkpoint',
        'cp.json',
        ...c.output,
        '--quiet',
      ];
      const { notes, finished } = await killTwiceThenFinish({ args, dir, files, seed, spreadMs: 2000, before });
      expect(finished?.code, `seed ${seed}: ${finished?.stderr ?? 'never finished'}`).toBe(0);
      const summary = JSON.parse(finished!.stdout) as Record<string, unknown>;
      expectSpoke(summary, protocol);
      notes.push(`finished (resumed: ${String(summary['checkpoint.resumed'])})`);
      const story = `${c.name}, seed ${seed}: ${notes.join('; ')}`;

      const ids = exportedIds(files());
      expect(new Set(ids).size, story).toBe(documents);
      expect(ids.length, story).toBe(documents);
    });
  }
});
