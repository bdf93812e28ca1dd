import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Two rules of the layout, read from the import graph of src/:
 * - the simulator stands on its own: it may use the pure shared folders (document ids, the selection language,
 *   the schema model, errors, neutral helpers) but nothing of the client, so the two sides can change apart;
 * - no module imports itself through others (type-only imports included: a cycle of types still ties two
 *   modules into one, as the Sink interface once did with the file it was implemented in).
 */
const src = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');
const clientFolders = ['feed', 'visit', 'http', 'deploy', 'cli', 'sinks'];

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** Relative specifiers of `from '...'`, `import '...'` and `import('...')`, comments included (a false alarm is cheap). */
function importSpecifiers(source: string): string[] {
  const found: string[] = [];
  for (const m of source.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)(['"])([^'"]+)\1/g)) found.push(m[2]);
  return found;
}

/** The src/ module a relative specifier names (`./a.js` written for `./a.ts`), or undefined for a package. */
function resolveImport(file: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  return resolve(dirname(file), spec).replace(/\.js$/, '.ts');
}

/** Each cycle once, as the list of its modules, found by depth-first search over the graph. */
function cyclesOf(graph: Map<string, string[]>): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (node: string): void => {
    state.set(node, 'open');
    path.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') cycles.push(path.slice(path.indexOf(next)));
      else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return cycles;
}

describe('src/ has no import cycles', () => {
  const files = filesUnder(src);
  const graph = new Map(files.map((f) => [f, importSpecifiers(readFileSync(f, 'utf8')).flatMap((spec) => resolveImport(f, spec) ?? [])]));

  it('finds a cycle where there is one', () => {
    const probe = new Map([['a', ['b']], ['b', ['c']], ['c', ['a', 'd']], ['d', []]]);
    expect(cyclesOf(probe)).toEqual([['a', 'b', 'c']]);
  });

  it('has none', () => {
    expect([...graph.values()].flat().length).toBeGreaterThan(300);
    expect(cyclesOf(graph).map((cycle) => cycle.map((f) => relative(src, f)).join(' -> '))).toEqual([]);
  });
});

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
/**
 * The CLI is not built on the published entries (src/index.ts, simulator/, report/, bench/ index.ts): it imports
 * each name from the module that defines it, so that a command loads only the part of the library it uses (an
 * entry loads all of its part: benchmarks/startup/run.ts), and so that what the CLI needs (flags, presentation,
 * its files) never has to join the published contract to be reached (test/architecture/public-api.test.ts pins
 * that contract; src/cli/main.ts is the CLI's own, internal entry).
 */
describe('CLI imports', () => {
  const files = filesUnder(join(src, 'cli'));
  const entries = ['index.ts', 'simulator/index.ts', 'report/index.ts', 'bench/index.ts'].map((f) => join(src, f));
  const throughEntries = (file: string, source: string): string[] =>
    importSpecifiers(source).filter((spec) => entries.includes(resolveImport(file, spec) ?? '')).map((spec) => `${relative(src, file)} -> ${spec}`);

  it('finds the CLI and tells an import through an entry from one by path', () => {
    expect(files.length).toBeGreaterThan(20);
    const probe = join(src, 'cli/commands/probe.ts');
    const source = [
      "import { feed, type FeedOptions } from '../../index.js';",
      "import { Feeder } from '../../feed/feeder.js';",
      "const { renderReport } = await import('../../report/index.js');",
      "const h = await import('../../report/html.js');",
      "import { startSimulator } from '../../simulator/simulator.js';",
    ].join('\n');
    expect(throughEntries(probe, source)).toEqual(['cli/commands/probe.ts -> ../../index.js', 'cli/commands/probe.ts -> ../../report/index.js']);
  });

  it('imports no published entry', () => {
    expect(files.flatMap((file) => throughEntries(file, readFileSync(file, 'utf8')))).toEqual([]);
  });
});
