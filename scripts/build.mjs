// Builds dist/ from src/ (tsconfig.build.json) after removing the old one, so a file deleted from src/ never
// ships. It is the `prepack` hook, which npm runs on `npm pack`, `npm publish` and an install from git; there is
// no `prepare` hook, which would make `npm i -g` of the package warn of an install script.
//
// With `--api` (the prepack hook) it also writes the API reference from the doc comments into dist/api/, so the
// package carries the reference of exactly the code it ships and the repository commits none (`npm run docs`
// writes the same pages into docs/api/ of a clone).
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = fileURLToPath(new URL('../dist/', import.meta.url));
const resolve = createRequire(import.meta.url).resolve;

function node(args) {
  const run = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  if (run.status !== 0) process.exit(run.status ?? 1);
}

rmSync(dist, { recursive: true, force: true });
node([resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json']);
if (process.argv.includes('--api'))
  node([join(dirname(resolve('typedoc/package.json')), 'bin/typedoc'), '--out', 'dist/api', '--logLevel', 'Warn']);
