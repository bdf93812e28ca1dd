import { join, resolve } from 'node:path';
import { run as runIn, type Run } from '../../benchmarks/lib/packed-install.js';

const root = join(import.meta.dirname, '../..');

export type { Run };

/** Runs `file` with `args` (in the repository unless `cwd`); resolves with its exit code and both outputs, never rejects. */
export function run(
  file: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<Run> {
  return runIn(file, args, options.cwd ?? root, options.timeoutMs ?? 120_000, options.env);
}

/**
 * The single executable for this machine (or `arch`), built by scripts/build-sea.mjs. It builds once per set of inputs (the
 * sources, package.json and its lock, the script) into a cache under the temp folder, so the test files that use
 * it share one build, and a run whose sources have not changed since the last builds nothing.
 */
export async function singleExecutable(arch?: 'x64' | 'arm64'): Promise<string> {
  const build = await run(
    process.execPath,
    [join(root, 'scripts/build-sea.mjs'), ...(arch === undefined ? [] : ['--arch', arch])],
    { timeoutMs: 600_000 },
  );
  if (build.code !== 0) throw new Error(`scripts/build-sea.mjs failed:\n${build.stderr}`);
  const path = build.stdout
    .trim()
    .split('\n')
    .pop()!
    .replace(/ \(\d+ bytes\)$/, '');
  return resolve(root, path);
}
