import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The simulator stands on its own: it may use the pure shared folders (document ids, the selection language,
 * errors, neutral helpers) but nothing of the client, so the two sides can change apart.
 */
const src = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');
const clientFolders = ['feed', 'visit', 'http', 'deploy', 'cli', 'sinks', 'target'];

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** Relative specifiers of `from '...'`, `import '...'` and `import('...')`, comments included (a false alarm is cheap). */
function importSpecifiers(source: string): string[] {
  const found: string[] = [];
  for (const m of source.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)(['"])([^'"]+)\1/g)) found.push(m[2]);
  return found;
}

describe('simulator imports', () => {
  const files = filesUnder(join(src, 'simulator'));

  it('finds the simulator and reads its imports', () => {
    expect(files.length).toBeGreaterThan(20);
    expect(importSpecifiers("import { a } from './a.js';\nexport { b } from \"../b.js\";\nconst c = await import('../../c.js');\nimport './d.js';")).toEqual(['./a.js', '../b.js', '../../c.js', './d.js']);
  });

  it('imports nothing from the client folders', () => {
    const offending: string[] = [];
    for (const file of files) {
      for (const spec of importSpecifiers(readFileSync(file, 'utf8'))) {
        if (!spec.startsWith('.')) continue;
        const target = relative(src, resolve(dirname(file), spec));
        const top = target.split(/[\\/]/)[0];
        if (target.startsWith('..') || clientFolders.includes(top) || target === 'index.js') offending.push(`${relative(src, file)} -> ${spec}`);
      }
    }
    expect(offending).toEqual([]);
  });
});
