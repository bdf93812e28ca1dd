// Builds dist/ from src/ (tsconfig.build.json) after removing the old one, so a file deleted from src/ never
// ships. It is the `prepack` hook, which npm runs on `npm pack`, `npm publish` and an install from git; there is
// no `prepare` hook, which would make `npm i -g` of the package warn of an install script.
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = fileURLToPath(new URL('../dist/', import.meta.url));

rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const run = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
process.exit(run.status ?? 1);
