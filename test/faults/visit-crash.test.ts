import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { startDocumentServer } from '../../src/simulator/document-api/document-server.js';
import { runCli, seededInt, tempDir } from './harness.js';

/**
 * A checkpointed export killed outright (SIGKILL: no handler runs, nothing is flushed on the way out) at random
 * points while the service is slow and answers some requests with 503, then the same command run again until it
 * finishes, as a Kubernetes Job restarts an evicted pod. The files may hold more than the last checkpoint covers,
 * or end in a cut line or a cut gzip member: the rerun cuts them back to the checkpoint's lengths, so at the end
 * every document is in them exactly once and gunzip reads them whole.
 */
describe('visit killed with SIGKILL, then the same command again until done', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  const documents = 3000;
  // About 2 KB a document that gzip cannot shrink much, so 1 MiB blocks and gzip members reach the files
  // between checkpoints too (what a kill then leaves past the checkpoint is what the rerun must cut back).
  const noise = (i: number): string => Array.from({ length: 32 }, (_, k) => createHash('sha256').update(`${i}/${k}`).digest('hex')).join('');
  const existing = (files: string[]): string[] => files.filter((f) => existsSync(f));
  const cases = [
    { name: '-o out.jsonl', output: ['-o', 'out.jsonl'], files: (dir: string) => existing([join(dir, 'out.jsonl')]) },
    { name: '-o out.jsonl.gz --workers 2', output: ['-o', 'out.jsonl.gz', '--workers', '2'], files: (dir: string) => existing([join(dir, 'out.jsonl.gz')]) },
    {
      name: '--output-dir out --gzip',
      output: ['--output-dir', 'out', '--gzip'],
      files: (dir: string) => (existsSync(join(dir, 'out')) ? readdirSync(join(dir, 'out')).map((f) => join(dir, 'out', f)) : []),
    },
  ];

  for (const c of cases) {
    for (const seed of [1, 2, 3]) {
      it(`${c.name}, seed ${seed}: every document once, files valid`, async () => {
        const server = await startDocumentServer({ port: 0, faults: { latencyMs: 20, errorRate: 0.03, errorStatuses: [503] } });
        cleanups.push(() => server.close());
        server.store.seed(Array.from({ length: documents }, (_, i) => ({ id: `id:ns:music::c${i}`, fields: { n: i, text: noise(i) } })));
        const { dir, cleanup } = tempDir();
        cleanups.push(cleanup);
        const args = ['visit', 'ns/music', '-t', server.url, '--slices', '4', '--no-stream', '--wanted-document-count', '5', '--checkpoint', 'cp.json', ...c.output, '--quiet'];
        const read = (file: string): string => (file.endsWith('.gz') ? gunzipSync(readFileSync(file)) : readFileSync(file)).toString('utf8');
        const notes: string[] = [];

        // Two kills, each a seeded time after the run's first output bytes, then runs until one finishes.
        let finished = false;
        for (let attempt = 0; attempt < 8 && !finished; attempt++) {
          const kill = attempt < 2;
          const delayMs = 200 + (Math.abs(seededInt(seed * 10 + attempt, 0, 1 << 30)) % 2000);
          let outputSeen: number | undefined;
          const stopWhen = (): boolean => {
            if (outputSeen === undefined && c.files(dir).some((f) => existsSync(f) && statSync(f).size > 0)) outputSeen = Date.now();
            return outputSeen !== undefined && Date.now() >= outputSeen + delayMs;
          };
          const recorded = existsSync(join(dir, 'cp.json')) ? (JSON.parse(readFileSync(join(dir, 'cp.json'), 'utf8')) as { outputs?: Record<string, number> }).outputs : undefined;
          const sizes = c.files(dir).map((f) => statSync(f).size);
          // What the rerun has to cut back: the bytes written after the last checkpoint (and a cut line or member).
          const past = recorded === undefined ? sizes.reduce((n, s) => n + s, 0) : sizes.reduce((n, s) => n + s, 0) - Object.values(recorded).reduce((n, s) => n + s, 0);
          if (attempt > 0) notes.push(`${recorded === undefined ? 'no checkpoint yet, starts over from' : 'cuts back'} ${past} bytes`);
          const run = await runCli(args, { cwd: dir, ...(kill && { stopWith: 'SIGKILL' as const, stopWhen }) });
          if (run.signal === 'SIGKILL') {
            notes.push(`killed ${delayMs} ms after the first output`);
            continue;
          }
          expect(run.code, `seed ${seed}, run ${attempt}: ${run.stderr}`).toBe(0);
          notes.push(`finished (resumed: ${String((JSON.parse(run.stdout) as Record<string, unknown>)['checkpoint.resumed'])})`);
          finished = true;
        }
        expect(finished).toBe(true);
        console.log(`${c.name}, seed ${seed}: ${notes.join('; ')}`);

        // Every file reads whole (gunzip throws on a cut member), and every document is in them exactly once.
        const ids = c.files(dir).flatMap((f) =>
          read(f)
            .split('\n')
            .filter((l) => l !== '')
            .map((l) => (JSON.parse(l) as { id: string }).id),
        );
        expect(new Set(ids).size, c.name).toBe(documents);
        expect(ids.length, c.name).toBe(documents);
      });
    }
  }
});
