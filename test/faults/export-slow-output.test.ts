import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { WireProtocol } from '../../src/http/transport.js';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { alternateProtocols, protocolFlag } from '../support/protocols.js';
import { runCli, seededInt, tempDir, type CliRun } from './harness.js';

/**
 * An export whose output lags behind its reads, killed outright (SIGKILL) at seeded points after a checkpoint
 * was saved, then the same command run again until one run ends on its own (issue 40, lead 1). The documents go
 * to stdout, a pipe the test reads at about 2.5 MB/s, while the service answers at loopback speed: the transport's
 * window holds many documents (and continuation tokens) that the output has not taken yet. A checkpoint must
 * cover only what was handed to the output, or the rerun continues past documents that never reached it.
 * Standard output cannot be cut back, so documents after the last save may come again (guarantees.md): every
 * id at least once, none missing, is the promise checked here. The seeds take a protocol each (1 and 3 HTTP/2,
 * 2 and 4 HTTP/1.1).
 *
 * A file output (`-o`) cannot be made to lag from here: its writes go to the page cache at memory speed, and a
 * FIFO given as `-o` cannot be resumed (its length cannot be cut back to the checkpoint's, so the rerun refuses
 * it). The slow pipe is stdout; slice-handed-on.test.ts holds a slow consumer under the library.
 */
// Concurrent: most of each case's time is the slow reader's, so the cases overlap it.
describe.concurrent('export to a slow output, killed after a checkpoint, then the same command until done', () => {
  const documents = 5000;
  // About 2 KB a document, so that the window of a stream holds hundreds of them past what the output took.
  const noise = (i: number): string =>
    Array.from({ length: 32 }, (_, k) => createHash('sha256').update(`${i}/${k}`).digest('hex')).join('');
  const corpus = Array.from({ length: documents }, (_, i) => ({
    id: `id:ns:music::s${i}`,
    fields: { n: i, text: noise(i) },
  }));
  // About 2.5 MB/s: 50 KB every 20 ms (the rate the issue was seen at).
  const slowReader = { bytesPerTick: 50_000, tickMs: 20 };

  for (const { seed, protocol } of alternateProtocols([1, 2, 3, 4].map((seed) => ({ seed })))) {
    it(`stdout read slowly, seed ${seed} over ${protocol}: every document at least once`, async () => {
      // A continuation line every 10 documents: many tokens in the window, each one a point the state can reach.
      const server = await startDocumentServer({ port: 0, visitChunkDocuments: 10 });
      const { dir, cleanup } = tempDir();
      try {
        await killUntilDone(seed, protocol, server, dir);
      } finally {
        cleanup();
        await server.close();
      }
    });
  }

  async function killUntilDone(
    seed: number,
    protocol: WireProtocol,
    server: DocumentServer,
    dir: string,
  ): Promise<void> {
    server.store.seed(corpus);
    const checkpoint = join(dir, 'cp.json');
    const saved = (): string | undefined => (existsSync(checkpoint) ? readFileSync(checkpoint, 'utf8') : undefined);
    const args = [
      'visit',
      'ns/music',
      '-t',
      server.url,
      ...protocolFlag(protocol),
      '--slices',
      '2',
      '--checkpoint',
      'cp.json',
      '--quiet',
    ];

    const notes: string[] = [];
    const outputs: string[] = [];
    let finished: CliRun | undefined;
    for (let attempt = 0; attempt < 8 && finished === undefined; attempt++) {
      const kill = attempt < 2;
      const delayMs = 1000 + (Math.abs(seededInt(seed * 10 + attempt, 0, 1 << 30)) % 1000);
      // Killed 1-2 s after this run's first save of progress (a save at the start holds none): the saves after
      // it (one a second) are taken while the output lags, so a kill then finds a checkpoint taken under lag.
      const before = saved();
      let savedAt: number | undefined;
      const stopWhen = (): boolean => {
        const now = saved();
        if (savedAt === undefined && now !== before && holdsProgress(now)) savedAt = Date.now();
        return savedAt !== undefined && Date.now() >= savedAt + delayMs;
      };
      const run = await runCli(args, {
        cwd: dir,
        slowStdout: slowReader,
        pollMs: 20,
        ...(kill && { stopWith: 'SIGKILL' as const, stopWhen }),
      });
      outputs.push(run.stdout);
      if (run.signal === 'SIGKILL') notes.push(`killed ${delayMs} ms after a save, ${lines(run.stdout)} lines out`);
      else finished = run;
    }
    expect(finished?.code, `seed ${seed}: ${finished?.stderr ?? 'never finished'}`).toBe(0);
    notes.push(`finished, ${lines(finished!.stdout)} lines out`);
    const story = `seed ${seed} over ${protocol}: ${notes.join('; ')}`;

    const ids = outputs.flatMap(documentIds);
    const unique = new Set(ids);
    const missing = Array.from({ length: documents }, (_, i) => `id:ns:music::s${i}`).filter((id) => !unique.has(id));
    expect(missing.length, `${story}; missing e.g. ${missing.slice(0, 3).join(', ')}`).toBe(0);
    expect(unique.size, story).toBe(documents);
  }
});

/** A checkpoint that has a slice with a token or finished (one saved at the start has none). */
function holdsProgress(text: string | undefined): boolean {
  if (text === undefined) return false;
  const slices = (JSON.parse(text) as { slices?: Record<string, { continuation?: string; finished?: boolean }> })
    .slices;
  return Object.values(slices ?? {}).some((s) => s.continuation !== undefined || s.finished === true);
}

function lines(out: string): number {
  return out.split('\n').length - 1;
}

/**
 * The ids of the documents one run wrote to stdout. A run killed mid-write may leave its last line cut (no
 * newline after it): that one is not a document written; every other line must read whole.
 */
function documentIds(out: string): string[] {
  const whole = out.slice(0, out.lastIndexOf('\n') + 1);
  return whole
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      const doc = JSON.parse(l) as { id?: string; put?: string };
      return doc.put ?? doc.id ?? '';
    });
}
