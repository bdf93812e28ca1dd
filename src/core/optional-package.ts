import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { isSea } from 'node:sea';
import { VespaBulkError } from './errors.js';

/**
 * Packages that vespa-bulk uses for one job only and does not install with itself (optional peer dependencies
 * in package.json): together they were more than half of an install. Each is loaded here, at its first use, so
 * a missing one is a {@link VespaBulkError} `VB_MISSING_PACKAGE` that says how to add it, not a stack trace.
 */
export const optionalPackages = {
  'parquet-wasm': 'reading Parquet',
  'apache-arrow': 'reading Parquet',
} as const;

export type OptionalPackage = keyof typeof optionalPackages;

/**
 * `load()` (an `import()` of `name`), or `VB_MISSING_PACKAGE` when `name` is not installed. `together` names the
 * packages the same job needs, so the one command given installs them all.
 */
export async function importOptional<T>(
  name: OptionalPackage,
  load: () => Promise<T>,
  together: readonly OptionalPackage[] = [name],
): Promise<T> {
  try {
    return await load();
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (
      (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') ||
      !String((err as Error).message).includes(name)
    )
      throw err;
    // The versions that work: package.json's peerDependencies (beside src/ in a clone, dist/ installed).
    const { peerDependencies: versions = {} } = JSON.parse(
      readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
    ) as { peerDependencies?: Record<string, string> };
    const specs = together.map((p) => (versions[p] === undefined ? p : `${p}@${versions[p]}`)).join(' ');
    // The single executable looks in node_modules of the working folder and of its own (scripts/build-sea.mjs).
    const where = isSea()
      ? `'npm i ${specs}' in the folder it runs in or in the executable's (${dirname(process.execPath)}).`
      : `'npm i -g ${specs}' for a global install, 'npm i ${specs}' in a project, 'npx -p vespa-bulk ${together.map((p) => `-p ${p}`).join(' ')} vespa-bulk ...' for npx.`;
    throw new VespaBulkError(
      'VB_MISSING_PACKAGE',
      `${optionalPackages[name]} needs ${together.join(' and ')}, which vespa-bulk does not install with itself. Add ${together.length > 1 ? 'them' : 'it'} beside vespa-bulk: ${where}`,
      { cause: err },
    );
  }
}
