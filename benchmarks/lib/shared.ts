import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A path under the `shared/` folder beside the repository (the servers the benchmarks measure against that are
 * not part of it: shared/jetty-endpoint, shared/lb-cluster), looked for beside this checkout and beside each
 * folder above it (a git worktree under work/wt/NAME finds work/shared), or where `override` (an environment
 * variable's value) says.
 */
export function findShared(rel: string, override?: string): string | undefined {
  if (override !== undefined) return existsSync(override) ? resolve(override) : undefined;
  let dir = fileURLToPath(new URL('../..', import.meta.url));
  for (let i = 0; i < 4; i++) {
    const parent = dirname(dir.replace(/\/$/, ''));
    const candidate = join(parent, 'shared', rel);
    if (existsSync(candidate)) return candidate;
    if (parent === dir) break;
    dir = parent;
  }
  return undefined;
}
