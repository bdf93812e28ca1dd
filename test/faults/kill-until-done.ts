import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { runCli, seededInt, type CliRun } from './harness.js';

/** Where an export's cases write: one file (when it exists yet), or every file of a folder. */
export function outputFile(dir: string, name: string): () => string[] {
  return () => (existsSync(join(dir, name)) ? [join(dir, name)] : []);
}

export function outputFolder(dir: string, name: string): () => string[] {
  return () => (existsSync(join(dir, name)) ? readdirSync(join(dir, name)).map((f) => join(dir, name, f)) : []);
}

export interface KillUntilDoneOptions {
  /** The CLI's arguments, run in `dir` each time. */
  args: string[];
  dir: string;
  /** The files the export writes, as they are now. */
  files: () => string[];
  seed: number;
  /** Each kill comes 200 ms plus a seeded share of this after the run's first output bytes. */
  spreadMs: number;
  /** What the state before a run (after the first) says, for the test's log. */
  before?: () => string | undefined;
}

/**
 * Runs an export, kills it outright (SIGKILL: no handler runs, nothing is flushed) twice at seeded times after
 * its first output bytes, as a Kubernetes Job's evicted pod, then runs the same command until one run ends
 * on its own (8 runs at most). Returns the notes for the test's log and the run that ended, if one did.
 */
export async function killTwiceThenFinish(o: KillUntilDoneOptions): Promise<{ notes: string[]; finished?: CliRun }> {
  const notes: string[] = [];
  for (let attempt = 0; attempt < 8; attempt++) {
    const kill = attempt < 2;
    const delayMs = 200 + (Math.abs(seededInt(o.seed * 10 + attempt, 0, 1 << 30)) % o.spreadMs);
    let outputSeen: number | undefined;
    const stopWhen = (): boolean => {
      if (outputSeen === undefined && o.files().some((f) => existsSync(f) && statSync(f).size > 0))
        outputSeen = Date.now();
      return outputSeen !== undefined && Date.now() >= outputSeen + delayMs;
    };
    const note = attempt > 0 ? o.before?.() : undefined;
    if (note !== undefined) notes.push(note);
    const run = await runCli(o.args, { cwd: o.dir, ...(kill && { stopWith: 'SIGKILL' as const, stopWhen }) });
    if (run.signal === 'SIGKILL') {
      notes.push(`killed ${delayMs} ms after the first output`);
      continue;
    }
    return { notes, finished: run };
  }
  return { notes };
}

/**
 * The ids of every document in the export's files, in file order: each file reads whole (gunzip throws on a cut
 * member), and a line is a document (`id`) or a put (`put`, for the feed format).
 */
export function exportedIds(files: string[]): string[] {
  return files.flatMap((f) =>
    (f.endsWith('.gz') ? gunzipSync(readFileSync(f)) : readFileSync(f))
      .toString('utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => {
        const doc = JSON.parse(l) as { id?: string; put?: string };
        return doc.put ?? doc.id ?? '';
      }),
  );
}
