// Builds dist/ from src/ (tsconfig.build.json) after removing the old one, so a file deleted from src/ never
// ships. `--if-packing` is the `prepare` hook: npm runs it on `npm ci` in a clone too, where the sources run
// through tsx and a build would only cost time (and a type error in work in progress would fail the install),
// so it builds only while npm packs this directory (pacote then sets npm_package_resolved: `npm pack`,
// `npm publish`, or installing vespa-bulk from git) and dist/ is not there yet (`prepack` has built it on
// `npm pack`).
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = fileURLToPath(new URL('../dist/', import.meta.url));

if (process.argv.includes('--if-packing')) {
  const packing = (process.env.npm_package_resolved ?? '') !== '' && process.env.npm_package_resolved !== 'null';
  if (!packing || existsSync(join(dist, 'index.js'))) process.exit(0);
}

rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const run = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
process.exit(run.status ?? 1);
