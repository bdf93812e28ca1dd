import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tsFilesUnder } from '../support/ts-files.js';

/**
 * Three rules of the layout, read from the import graph of src/ (type-only imports included: a cycle or an
 * upward arrow of types still ties two modules into one, as the Sink interface once did with the file it was
 * implemented in):
 * - folders point down: a module imports only its own folder and folders of lower rank in `layers`, so each
 *   folder can be read, tested and changed knowing only what is below it;
 * - the simulator stands on its own: it may use the pure shared folders (document ids, the selection language,
 *   the schema model, errors, neutral helpers) but nothing of the client, so the two sides can change apart;
 * - no module imports itself through others.
 */
const src = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');

/** The folders of src/ from the bottom up; a folder's rank is its layer's index. Subfolders belong to their top folder. */
const layers: ReadonlyArray<{ folders: readonly string[]; why: string }> = [
  {
    folders: ['core'],
    why: 'errors, option checks, the JSON byte scanner and the operation splitter: what nearly every folder uses',
  },
  {
    folders: ['structures', 'time', 'archive', 'limit'],
    why: 'neutral helpers (queues, durations, tar headers, the limit search) that know nothing of Vespa',
  },
  { folders: ['fs'], why: 'files: the atomic write and the checkpoint file' },
  {
    folders: ['document', 'selection'],
    why: 'pure models: document ids, operations, tensor formats, the selection language',
  },
  {
    folders: ['schema'],
    why: 'the document model of a package and the judge of a document against it, shared with the simulator',
  },
  { folders: ['http', 'threads'], why: 'the mechanisms: the transport and document requests, worker threads' },
  { folders: ['deploy'], why: 'application packages and the config server (and the document model read from them)' },
  {
    folders: ['tabular', 'transform'],
    why: 'what a user hands over turned into operations: table rows, a transform module',
  },
  { folders: ['sinks'], why: 'every export output: files, streams, the CSV and Parquet writers' },
  { folders: ['feed', 'visit'], why: 'the two directions a document moves in; neither imports the other' },
  { folders: ['validate', 'compare'], why: "commands made of the feed's reading and the visit" },
  { folders: ['migrate'], why: 'a visit fed into a feed, checked by compare' },
  {
    folders: ['report', 'bench', 'simulator'],
    why: 'the other package entries: beside a run (its report, generated load, a simulated cluster), not part of one',
  },
  { folders: ['.'], why: 'the package entry, src/index.ts: the library as its users get it' },
  { folders: ['cli'], why: 'the shell over the package as its users get it (cli/demo.ts runs the root entry)' },
];
const rankOf = new Map(layers.flatMap((layer, rank) => layer.folders.map((folder) => [folder, rank] as const)));

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

/** Each module of src/ with the src/ modules it imports. */
function importGraph(): Map<string, string[]> {
  return new Map(
    tsFilesUnder(src).map((f) => [
      f,
      importSpecifiers(readFileSync(f, 'utf8')).flatMap((spec) => resolveImport(f, spec) ?? []),
    ]),
  );
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

/** The top folder of a module of src/ ('.' for the entry files at its root; '..' outside src/). */
function folderOf(file: string): string {
  const parts = relative(src, file).split(/[\\/]/);
  return parts[0] === '..' ? '..' : parts.length === 1 ? '.' : parts[0];
}

/** Each import, as `file -> file` under src/, that goes to a folder of the same or a higher rank (or none). */
function upwardImports(graph: Map<string, string[]>): string[] {
  const found: string[] = [];
  for (const [file, targets] of graph) {
    const from = folderOf(file);
    for (const target of targets) {
      const to = folderOf(target);
      if (to === from) continue;
      if (!((rankOf.get(to) ?? Infinity) < (rankOf.get(from) ?? -Infinity)))
        found.push(`${relative(src, file)} -> ${relative(src, target)}`);
    }
  }
  return found;
}

describe('src/ has no import cycles', () => {
  const graph = importGraph();

  it('finds a cycle where there is one', () => {
    const probe = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a', 'd']],
      ['d', []],
    ]);
    expect(cyclesOf(probe)).toEqual([['a', 'b', 'c']]);
  });

  it('has none', () => {
    expect([...graph.values()].flat().length).toBeGreaterThan(300);
    expect(cyclesOf(graph).map((cycle) => cycle.map((f) => relative(src, f)).join(' -> '))).toEqual([]);
  });
});

describe('folders point down', () => {
  const graph = importGraph();

  it('finds an import of the same or a higher rank, and of a folder without one, naming both files', () => {
    const at = (path: string) => join(src, path);
    const probe = new Map([
      [at('document/a.ts'), [at('document/b.ts'), at('core/errors.ts'), at('feed/c.ts')]],
      [at('feed/workers/w.ts'), [at('visit/v.ts'), at('feed/c.ts'), at('http/t.ts')]],
      [at('index.ts'), [at('feed/c.ts'), at('nowhere/x.ts')]],
    ]);
    expect(upwardImports(probe)).toEqual([
      'document/a.ts -> feed/c.ts',
      'feed/workers/w.ts -> visit/v.ts',
      'index.ts -> nowhere/x.ts',
    ]);
  });

  it('gives every folder of src/ a rank', () => {
    const folders = readdirSync(src, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    expect(folders.length).toBeGreaterThan(20);
    expect(folders.filter((f) => !rankOf.has(f))).toEqual([]);
  });

  it('has no upward import', () => {
    expect(upwardImports(graph)).toEqual([]);
  });
});

describe('simulator imports', () => {
  /** schema/: the simulator shares the pure models (and core/, the neutral helpers) with the client, nothing else. */
  const simulatorMaxRank = rankOf.get('schema')!;
  const files = tsFilesUnder(join(src, 'simulator'));

  it('finds the simulator and reads its imports', () => {
    expect(files.length).toBeGreaterThan(20);
    expect(
      importSpecifiers(
        "import { a } from './a.js';\nexport { b } from \"../b.js\";\nconst c = await import('../../c.js');\nimport './d.js';",
      ),
    ).toEqual(['./a.js', '../b.js', '../../c.js', './d.js']);
  });

  it('imports only folders of rank 4 or lower (schema/ and what is below it)', () => {
    const offending: string[] = [];
    for (const file of files) {
      for (const spec of importSpecifiers(readFileSync(file, 'utf8'))) {
        if (!spec.startsWith('.')) continue;
        const top = folderOf(resolve(dirname(file), spec));
        if (top !== 'simulator' && !((rankOf.get(top) ?? Infinity) <= simulatorMaxRank))
          offending.push(`${relative(src, file)} -> ${spec}`);
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
  const files = tsFilesUnder(join(src, 'cli'));
  const entries = ['index.ts', 'simulator/index.ts', 'report/index.ts', 'bench/index.ts'].map((f) => join(src, f));
  const throughEntries = (file: string, source: string): string[] =>
    importSpecifiers(source)
      .filter((spec) => entries.includes(resolveImport(file, spec) ?? ''))
      .map((spec) => `${relative(src, file)} -> ${spec}`);

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
    expect(throughEntries(probe, source)).toEqual([
      'cli/commands/probe.ts -> ../../index.js',
      'cli/commands/probe.ts -> ../../report/index.js',
    ]);
  });

  it('imports no published entry', () => {
    expect(files.flatMap((file) => throughEntries(file, readFileSync(file, 'utf8')))).toEqual([]);
  });
});
