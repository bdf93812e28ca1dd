import { describe, expect, it } from 'vitest';
import { modulesLoadedBy, packageOf } from '../../benchmarks/lib/loaded-modules.js';
import { repoRoot } from '../../benchmarks/lib/packed-install.js';

/**
 * What a command loads is in proportion to the command (benchmarks/startup/run.ts measures the time): the
 * top-level help loads no command module and none of the library, a command's help its own module alone, and
 * neither loads the simulator, the report, the Prometheus endpoint, the table readers and writers, the YAML
 * parser or undici (HTTP/1.1, src/http/http1-transport.ts), each loaded where it is used.
 */

/** Packages a `--help` must not load. */
const heavy = [
  'parquet-wasm',
  'apache-arrow',
  'hyparquet',
  'hyparquet-writer',
  'csv-parse',
  'yaml',
  'undici',
  'fast-xml-parser',
];

async function loadedBy(args: string[]): Promise<{ own: string[]; packages: Set<string> }> {
  const { code, files } = await modulesLoadedBy('src/cli/main.ts', args, {
    cwd: repoRoot,
    root: repoRoot,
    nodeArgs: ['--import', 'tsx'],
  });
  expect(code).toBe(0);
  const packages = new Set(files.flatMap((f) => packageOf(f) ?? []));
  // tsx compiles the sources here; an installed package runs dist/ without it.
  for (const tool of ['tsx', 'esbuild', 'get-tsconfig', 'resolve-pkg-maps']) packages.delete(tool);
  return { own: files.filter((f) => f.startsWith('src/')), packages };
}

describe('vespa-bulk --help', () => {
  it('loads the command list, no command module, nothing of the library but its errors, and no package, yargs included', async () => {
    const { own, packages } = await loadedBy(['--help']);
    expect(own).toContain('src/cli/main.ts');
    expect(own).toContain('src/cli/top-help.ts');
    expect(own).toContain('src/cli/command-list.ts');
    expect(
      own.filter(
        (f) =>
          !/^src\/(?:cli\/[^/]+\.ts|core\/(?:errors|options-check|closest-name)\.ts|http\/reachability\.ts)$/.test(f),
      ),
    ).toEqual([]);
    expect([...packages]).toEqual([]);
  });
});

describe('vespa-bulk feed --help', () => {
  it('loads the feed command and the feeder, and no other command, the simulator, the report or a heavy package', async () => {
    const { own, packages } = await loadedBy(['feed', '--help']);
    expect(own).toContain('src/cli/commands/feed.ts');
    expect(own).toContain('src/feed/feeder.ts');
    expect(own.filter((f) => /^src\/cli\/commands\//.test(f) && f !== 'src/cli/commands/feed.ts')).toEqual([]);
    expect(
      own.filter(
        (f) =>
          /^src\/(?:simulator|report|bench|visit|deploy|compare|validate|schema|sinks)\//.test(f) ||
          /^src\/tabular\/(?:csv|parquet|table-input)/.test(f),
      ),
    ).toEqual([]);
    expect([...packages].filter((p) => heavy.includes(p))).toEqual([]);
  });
});
