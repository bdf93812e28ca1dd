import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildDist, cliOf, repoRoot } from './cli-feed.js';
import { onTeardown } from './teardown.js';

/**
 * The CLI as built from another commit, for "no worse than before": a detached `git worktree add` of the commit
 * in a temporary folder, this checkout's node_modules linked into it, `node scripts/build.mjs` there. remove()
 * (also run when the benchmark is interrupted) removes the worktree.
 */
export interface CommitBuild {
  /** The full hash built. */
  hash: string;
  root: string;
  cli: string;
  remove(): void;
}

const git = (...args: string[]): string => execFileSync('git', args, { cwd: repoRoot, encoding: 'utf8' }).trim();

export const resolveCommit = (rev: string): string => git('rev-parse', '--verify', `${rev}^{commit}`);

export async function buildCommit(rev: string): Promise<CommitBuild> {
  const hash = resolveCommit(rev);
  const root = mkdtempSync(join(tmpdir(), `vb-baseline-${hash.slice(0, 10)}-`));
  let removed = false;
  const remove = (): void => {
    if (removed) return;
    removed = true;
    try {
      git('worktree', 'remove', '--force', root);
    } catch {
      // Not added (or already gone): prune what git still records.
      git('worktree', 'prune');
    }
    rmSync(root, { recursive: true, force: true });
  };
  const untrack = onTeardown(remove);
  git('worktree', 'add', '--detach', '--quiet', root, hash);
  symlinkSync(realpathSync(join(repoRoot, 'node_modules')), join(root, 'node_modules'));
  await buildDist(root);
  return {
    hash,
    root,
    cli: cliOf(root),
    remove: () => {
      untrack();
      remove();
    },
  };
}
