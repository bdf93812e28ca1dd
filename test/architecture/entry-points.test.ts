import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as root from '../../src/index.js';
import * as simulator from '../../src/simulator/index.js';
import * as report from '../../src/report/index.js';
import * as bench from '../../src/bench/index.js';

/**
 * The package's entries: `vespa-bulk` (feed, visit, documents, deploy, validate), `vespa-bulk/simulator`,
 * `vespa-bulk/report` and `vespa-bulk/bench`. Importing the root must not load the others' weight: the
 * simulator, the report, nor undici, which HTTP/1.1 loads when a transport first
 * speaks it (src/http/http1-transport.ts).
 */
const repo = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Every script a fresh process compiles while it imports `entry` (ESM through tsx and CommonJS alike), as the
 * inspector reports them, with paths relative to the repository (node_modules/... for packages).
 */
function modulesLoadedBy(entry: string): string[] {
  const script = `
    const { Session } = await import('node:inspector');
    const { fileURLToPath } = await import('node:url');
    const session = new Session();
    session.connect();
    const urls = new Set();
    session.on('Debugger.scriptParsed', (m) => { if (m.params.url) urls.add(m.params.url); });
    session.post('Debugger.enable');
    await import(${JSON.stringify(entry)});
    session.disconnect();
    const files = [...urls].filter((u) => u.startsWith('file:')).map((u) => fileURLToPath(u.replace(/[?#].*$/, '')));
    console.log(JSON.stringify(files));`;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: repo,
    encoding: 'utf8',
  });
  return (JSON.parse(out) as string[]).map((f) => {
    const slashed = f.replace(/\\/g, '/');
    const packages = slashed.lastIndexOf('/node_modules/');
    return packages >= 0
      ? slashed.slice(packages + 1)
      : slashed.startsWith(repo.replace(/\\/g, '/'))
        ? slashed.slice(repo.length)
        : slashed;
  });
}

describe('importing the root entry', () => {
  const loaded = modulesLoadedBy('./src/index.ts');

  it('sees what it loads (the feeder, the visitor, the transports)', () => {
    expect(loaded).toContain('src/index.ts');
    expect(loaded).toContain('src/feed/feeder.ts');
    expect(loaded).toContain('src/visit/visit.ts');
    expect(loaded).toContain('src/deploy/deploy.ts');
    expect(loaded).toContain('src/http/h2/session.ts');
  });

  it('loads neither the simulator nor the report, nor undici', () => {
    const heavy = loaded.filter((f) => /^src\/(simulator|report|bench)\//.test(f) || /^node_modules\/undici\//.test(f));
    expect(heavy).toEqual([]);
  });

  it('while the simulator entry does load the simulator (the probe finds what is there)', () => {
    expect(modulesLoadedBy('./src/simulator/index.ts')).toContain('src/simulator/simulator.ts');
  });
});

describe('each entry exports its own names', () => {
  const entries = { root, simulator, report, bench } as Record<string, Record<string, unknown>>;

  it('the root: feeding, visiting, single documents, deployment, validation', () => {
    for (const name of [
      'feed',
      'Feeder',
      'visit',
      'exportDocuments',
      'bulkOperation',
      'migrate',
      'DocumentClient',
      'deploy',
      'validate',
      'parseSelection',
      'VespaBulkError',
    ]) {
      expect(typeof root[name as keyof typeof root], name).toBe('function');
    }
  });

  it('vespa-bulk/simulator: the simulator and its two servers', () => {
    for (const name of ['startSimulator', 'startDocumentServer', 'startConfigServer'])
      expect(typeof simulator[name as keyof typeof simulator], name).toBe('function');
  });

  it('vespa-bulk/report: the recorder, the stats file, the HTML report, the metrics endpoint', () => {
    for (const name of [
      'RunRecorder',
      'StatsFileWriter',
      'readStatsFile',
      'renderReport',
      'startMetricsServer',
      'mergeRuns',
    ])
      expect(typeof report[name as keyof typeof report], name).toBe('function');
  });

  it('vespa-bulk/bench: generated load and the speedtest', () => {
    for (const name of ['bench', 'speedtestSource'])
      expect(typeof bench[name as keyof typeof bench], name).toBe('function');
  });

  it('no name is exported by two entries', () => {
    const owners = new Map<string, string[]>();
    for (const [entry, exports] of Object.entries(entries))
      for (const name of Object.keys(exports)) owners.set(name, [...(owners.get(name) ?? []), entry]);
    expect([...owners].filter(([, where]) => where.length > 1)).toEqual([]);
  });

  it('package.json maps each subpath to the built entry of its source, with types', () => {
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      exports: Record<string, unknown>;
    };
    const expected: Record<string, string> = {
      '.': 'index',
      './simulator': 'simulator/index',
      './report': 'report/index',
      './bench': 'bench/index',
    };
    expect(Object.keys(manifest.exports).sort()).toEqual([...Object.keys(expected), './package.json'].sort());
    for (const [subpath, file] of Object.entries(expected)) {
      expect(manifest.exports[subpath], subpath).toEqual({
        types: `./dist/${file}.d.ts`,
        default: `./dist/${file}.js`,
      });
      expect(existsSync(new URL(`../../src/${file}.ts`, import.meta.url)), file).toBe(true);
    }
    const typedoc = JSON.parse(readFileSync(new URL('../../typedoc.json', import.meta.url), 'utf8')) as {
      entryPoints: string[];
    };
    expect(typedoc.entryPoints.sort()).toEqual(
      Object.values(expected)
        .map((f) => `src/${f}.ts`)
        .sort(),
    );
  });
});
