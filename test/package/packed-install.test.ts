import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../benchmarks/lib/packed-install.js';

/**
 * The package as a user gets it: `npm pack` (which builds dist/ itself), the tarball installed offline from
 * the npm cache `npm ci` filled into an empty project, then the bin and a strict TypeScript consumer run there.
 * One pack and one install serve every case.
 */

const root = fileURLToPath(new URL('../..', import.meta.url));
const tsc = join(root, 'node_modules/typescript/bin/tsc');
const own = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { name: string; version: string };

const consumerManifest = { name: 'consumer', version: '7.7.7', private: true, type: 'module' };

interface LockEntry {
  dev?: boolean;
  [key: string]: unknown;
}

/**
 * The consumer's lockfile: the tarball, then our own lockfile's runtime packages at the same places. `npm ci`
 * filled the cache with exactly these tarballs, but not with the registry metadata a lockless install asks for.
 */
function consumerLock(tarballSpec: string): object {
  const ours = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  const { version, dependencies, bin, engines, license } = ours.packages[''];
  const packages: Record<string, unknown> = {
    '': { name: consumerManifest.name, version: consumerManifest.version, dependencies: { [own.name]: tarballSpec } },
    [`node_modules/${own.name}`]: { version, resolved: tarballSpec, license, dependencies, bin, engines },
  };
  for (const [path, entry] of Object.entries(ours.packages)) {
    if (path !== '' && !entry.dev && path.startsWith('node_modules/')) packages[path] = entry;
  }
  return {
    name: consumerManifest.name,
    version: consumerManifest.version,
    lockfileVersion: 3,
    requires: true,
    packages,
  };
}

let work: string;
let project: string;
let bin: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'vespa-bulk-pack-'));
  const packed = await run('npm', ['pack', '--pack-destination', work], root, 240_000);
  expect(packed.code, packed.stderr).toBe(0);
  const tarball = (await readdir(work)).find((f) => f.endsWith('.tgz'));
  expect(tarball).toBeDefined();

  project = join(work, 'consumer');
  await mkdir(project);
  // A version of its own: `vespa-bulk --version` must not print it.
  await writeFile(
    join(project, 'package.json'),
    JSON.stringify({ ...consumerManifest, dependencies: { [own.name]: `file:../${tarball!}` } }),
  );
  await writeFile(join(project, 'package-lock.json'), JSON.stringify(consumerLock(`file:../${tarball!}`)));
  // With a lockfile npm needs only the tarballs (in the cache by integrity), not the registry's metadata.
  const installed = await run('npm', ['ci', '--offline', '--no-audit', '--no-fund'], project, 240_000);
  expect(installed.code, installed.stderr).toBe(0);
  bin = join(project, 'node_modules/.bin/vespa-bulk');
  process.stderr.write(`packed install on Node ${process.version}: ${tarball} into ${project}\n`);
}, 300_000);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

describe('the packed and installed package', () => {
  it('holds dist/ with types, bin/, README and LICENSE; no sources, demo, source maps, or tsx', async () => {
    const pkg = join(project, 'node_modules', own.name);
    for (const file of [
      'dist/index.js',
      'dist/index.d.ts',
      'dist/simulator/index.js',
      'dist/simulator/index.d.ts',
      'dist/report/index.js',
      'dist/report/index.d.ts',
      'dist/bench/index.js',
      'dist/bench/index.d.ts',
      'dist/cli/main.js',
      'dist/api/README.md',
      'bin/vespa-bulk.js',
      'README.md',
      'LICENSE',
      'package.json',
    ]) {
      expect(existsSync(join(pkg, file)), file).toBe(true);
    }
    expect(await readFile(join(pkg, 'LICENSE'), 'utf8')).toMatch(/Apache License\s+Version 2\.0/);
    expect(existsSync(join(pkg, 'src'))).toBe(false);
    expect(existsSync(join(pkg, 'dist/cli/demo.js'))).toBe(false);
    const distFiles = await readdir(join(pkg, 'dist'), { recursive: true });
    expect(distFiles.filter((f) => f.endsWith('.map'))).toEqual([]);
    // tsx would pull esbuild (and its install script) into every install.
    expect(existsSync(join(project, 'node_modules/tsx'))).toBe(false);
    expect(existsSync(join(project, 'node_modules/esbuild'))).toBe(false);
    expect(existsSync(join(project, 'node_modules/p-limit'))).toBe(false);
    // No install-time script: `npm i -g` would warn of one (prepack builds on pack, publish and git installs).
    const manifest = JSON.parse(await readFile(join(pkg, 'package.json'), 'utf8')) as {
      scripts?: Record<string, string>;
    };
    for (const hook of ['preinstall', 'install', 'postinstall', 'prepare'])
      expect(manifest.scripts?.[hook], hook).toBeUndefined();
  });

  it('the bin prints its own version (not the project’s) and its help', async () => {
    const version = await run(bin, ['--version'], project);
    expect(version.code, version.stderr).toBe(0);
    expect(version.stdout.trim()).toBe(own.version);
    const help = await run(bin, ['--help'], project);
    expect(help.code, help.stderr).toBe(0);
    for (const command of ['serve', 'feed', 'visit', 'deploy']) expect(help.stdout).toContain(`vespa-bulk ${command}`);
  });

  it('serve listens on free ports for both interfaces and reports them', async () => {
    const child = spawn(bin, ['serve', '--port', '0', '--config-port', '0'], {
      cwd: project,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const urls = await new Promise<{ documents: string; config: string }>((resolve, reject) => {
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString('utf8');
          const documents = /document interface: (http:\/\/127\.0\.0\.1:(\d+))\//.exec(stderr);
          const config = /config server:\s+(http:\/\/127\.0\.0\.1:(\d+))\//.exec(stderr);
          if (documents && config) resolve({ documents: documents[1], config: config[1] });
        });
        child.once('exit', () => reject(new Error(`serve exited: ${stderr}`)));
      });
      const documentPort = Number(new URL(urls.documents).port);
      const configPort = Number(new URL(urls.config).port);
      expect(documentPort).toBeGreaterThan(0);
      expect(configPort).toBeGreaterThan(0);
      expect(configPort).not.toBe(19071);
      expect(configPort).not.toBe(documentPort);
      const get = await fetch(`${urls.documents}/document/v1/mynamespace/music/docid/nothing`);
      expect(get.status).toBe(404);
      const health = await fetch(`${urls.config}/state/v1/health`);
      expect(await health.json()).toEqual({ status: { code: 'up' } });
    } finally {
      child.kill('SIGTERM');
    }
    // Closed cleanly, and exited as every command does after SIGTERM.
    expect(await exited).toBe(143);
  });

  // Each name from its entry: the root, and the simulator from its subpath (the root does not load it).
  const consumer = `import { feed, visit, DocumentClient, type FeedSummary } from 'vespa-bulk';
import { startSimulator } from 'vespa-bulk/simulator';
import { renderReport } from 'vespa-bulk/report';
import { speedtestSource } from 'vespa-bulk/bench';

const sim = await startSimulator({ port: 0, configPort: false });
try {
  const operations = [1, 2, 3].map((n) => ({ put: \`id:mynamespace:music::song-\${n}\`, fields: { title: \`Song \${n}\` } }));
  // Two worker threads: the installed package starts them from dist/ (no tsx there).
  const summary: FeedSummary = await feed(operations, { endpoint: sim.url, failures: 'failures.jsonl', workers: 2 });
  const visited: string[] = [];
  for await (const doc of visit({ endpoint: sim.url, cluster: 'content' })) visited.push(doc.id);
  const client = new DocumentClient({ endpoint: sim.url });
  const { status } = await client.get('id:mynamespace:music::song-2');
  await client.close();
  const entries = [typeof renderReport, typeof speedtestSource];
  console.log(JSON.stringify({ ok: summary.ok, visited: visited.sort(), status, entries }));
} finally {
  await sim.close();
}
`;

  for (const moduleResolution of ['nodenext', 'bundler'] as const) {
    it(`a strict TypeScript consumer (moduleResolution ${moduleResolution}) type-checks against the installed types`, async () => {
      const config = {
        compilerOptions: {
          strict: true,
          target: 'ES2022',
          module: moduleResolution === 'nodenext' ? 'nodenext' : 'esnext',
          moduleResolution,
          // The installed .d.ts files are checked too: a type they name that the consumer cannot resolve fails here.
          skipLibCheck: false,
          types: ['node'],
          typeRoots: [join(root, 'node_modules/@types')],
          outDir: `out-${moduleResolution}`,
        },
        files: ['consumer.ts'],
      };
      await writeFile(join(project, 'consumer.ts'), consumer);
      await writeFile(join(project, `tsconfig.${moduleResolution}.json`), JSON.stringify(config, null, 2));
      const checked = await run(process.execPath, [tsc, '-p', `tsconfig.${moduleResolution}.json`], project);
      expect(checked.code, checked.stdout + checked.stderr).toBe(0);

      // What the compiler emitted runs against the installed package: feeds three documents and visits them back.
      const ran = await run(process.execPath, [join(`out-${moduleResolution}`, 'consumer.js')], project);
      expect(ran.code, ran.stderr).toBe(0);
      expect(JSON.parse(ran.stdout)).toEqual({
        ok: 3,
        visited: ['id:mynamespace:music::song-1', 'id:mynamespace:music::song-2', 'id:mynamespace:music::song-3'],
        status: 200,
        entries: ['function', 'function'],
      });
    });
  }
});
