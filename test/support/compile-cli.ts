import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { TestProject } from 'vitest/node';
import { tsFilesUnder } from './ts-files.js';

/**
 * Vitest's global setup: compiles src/ to JavaScript once per run, file for file (esbuild, no bundle), for the
 * tests that start the CLI as a child process (test/support/cli-entry.ts). Through tsx each start transforms the
 * sources again (about 0.7 s of a 0.9 s `--help` on a 2-core machine, and again in each worker thread); the
 * compiled tree starts in 0.2 s. The tree keeps src/'s layout beside a copy of package.json, so what the sources
 * find beside themselves (`../../package.json`, the workers' `.js` entries, `createRequire()` lookups in the
 * repository's node_modules) is where a built package has it.
 *
 * The tree's folder is named for the hash of its inputs: a rerun with unchanged sources reuses it, and a watch
 * mode rerun compiles again only what changed.
 */

const root = join(import.meta.dirname, '../..');
const outRoot = join(root, 'test-output/compiled-cli');

/** Compiles the sources unless a tree of the same inputs exists; the compiled `src/cli/main.js`. */
export async function compileCli(): Promise<string> {
  const esbuild = await import('esbuild');
  const sources = tsFilesUnder(join(root, 'src'));
  const hash = createHash('sha256');
  for (const file of [...sources, join(root, 'package.json'), join(root, 'tsconfig.json'), import.meta.filename]) {
    hash.update(`${relative(root, file)}\0`);
    hash.update(readFileSync(file));
  }
  hash.update(`${esbuild.version}\0${process.versions.node}`);
  const dir = join(outRoot, hash.digest('hex').slice(0, 16));
  const main = join(dir, 'src/cli/main.js');
  if (existsSync(main)) return main;

  // Written beside and renamed: a second vitest run in this checkout never starts a half-written tree.
  const work = `${dir}.${process.pid}`;
  rmSync(work, { recursive: true, force: true });
  // Rejects on an error (a source esbuild cannot read); the type-check is tsc's, before the tests.
  await esbuild.build({
    entryPoints: sources,
    outbase: join(root, 'src'),
    outdir: join(work, 'src'),
    bundle: false,
    platform: 'node',
    format: 'esm',
    target: `node${process.versions.node.split('.')[0]}`,
    logLevel: 'silent',
  });
  copyFileSync(join(root, 'package.json'), join(work, 'package.json'));
  try {
    renameSync(work, dir);
  } catch (err) {
    // Another run compiled the same sources first.
    rmSync(work, { recursive: true, force: true });
    if (!existsSync(main)) throw err;
  }
  prune(dir);
  return main;
}

/** Removes older trees, keeping any touched in the last hour: another vitest run in this checkout may use it. */
function prune(keep: string): void {
  const hourAgo = Date.now() - 3_600_000;
  for (const name of readdirSync(outRoot)) {
    const path = join(outRoot, name);
    if (path !== keep && statSync(path).mtimeMs < hourAgo) rmSync(path, { recursive: true, force: true });
  }
}

export default async function setup(project: TestProject): Promise<void> {
  const provide = async (): Promise<void> => project.provide('compiledCli', await compileCli());
  await provide();
  project.onTestsRerun(provide);
}
