import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const cli = join(here, '../../src/cli/main.ts');
const esbuild = join(here, '../../node_modules/.bin/esbuild');

/**
 * The exporter runs as users run the package: compiled JavaScript (here one esbuild bundle), not through tsx,
 * whose loader alone would add some 40 MB to the measured RSS.
 */
export function bundleCli(dir: string): string {
  // Laid out as in the package: the CLI reads its version from ../../package.json.
  const out = join(dir, 'src', 'cli', 'main.js');
  execFileSync(esbuild, [
    cli,
    '--bundle',
    '--platform=node',
    '--format=esm',
    '--target=node20',
    `--outfile=${out}`,
    "--banner:js=import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
    '--log-level=warning',
  ]);
  const { version } = JSON.parse(readFileSync(join(here, '../../package.json'), 'utf8')) as { version: string };
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ type: 'module', version })}\n`);
  // undici is loaded part by part through createRequire (src/http/undici-parts.ts), which esbuild leaves to run
  // time: the bundle finds it in the project's node_modules, as an installed package finds its dependencies.
  const modules = join(dir, 'node_modules');
  if (!existsSync(modules)) symlinkSync(join(here, '../../node_modules'), modules, 'dir');
  return out;
}
