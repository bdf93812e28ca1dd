import { execFile } from 'node:child_process';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The package as a user gets it: `npm pack` (which builds dist/ itself), the tarball installed offline into an
 * empty project from the npm cache that `npm ci` filled, with a lockfile made from our own. Shared by the
 * packed-install test and the start-up benchmark.
 */

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export function run(
  file: string,
  args: string[],
  cwd: string,
  timeoutMs = 120_000,
  env?: NodeJS.ProcessEnv,
): Promise<Run> {
  return new Promise((done) => {
    execFile(
      file,
      args,
      { cwd, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024, ...(env !== undefined && { env }) },
      (err, stdout, stderr) => {
        done({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

interface LockEntry {
  dev?: boolean;
  peer?: boolean;
  optional?: boolean;
  dependencies?: Record<string, string>;
  [key: string]: unknown;
}

interface Lock {
  packages: Record<string, LockEntry>;
}

const own = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  peerDependencies?: Record<string, string>;
};

/** The lock path of `name` as a package at `from` (a lock path) resolves it: nested first, then up to the top. */
function lockPathOf(lock: Lock, from: string, name: string): string | undefined {
  for (let dir = from; ; dir = dir.slice(0, Math.max(0, dir.lastIndexOf('/node_modules/')))) {
    const candidate = `${dir === '' ? '' : `${dir}/`}node_modules/${name}`;
    if (lock.packages[candidate] !== undefined) return candidate;
    if (dir === '') return undefined;
  }
}

/**
 * The consumer's lockfile: the tarball, then our own lockfile's runtime packages at the same places, and with
 * `extra` (packages of our lockfile, such as the optional peers) the consumer's dependencies on them and what
 * they pull in. `npm ci` filled the cache with exactly these tarballs, but not with the registry metadata a
 * lockless install asks for.
 */
export function consumerLock(
  consumer: { name: string; version: string },
  tarballSpec: string,
  extra: string[] = [],
): object {
  const ours = JSON.parse(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8')) as Lock;
  const { version, dependencies, peerDependencies, peerDependenciesMeta, bin, engines, license } = ours.packages[''];
  const packages: Record<string, unknown> = {
    '': {
      name: consumer.name,
      version: consumer.version,
      dependencies: {
        [own.name]: tarballSpec,
        ...Object.fromEntries(extra.map((name) => [name, ours.packages[`node_modules/${name}`].version as string])),
      },
    },
    [`node_modules/${own.name}`]: {
      version,
      resolved: tarballSpec,
      license,
      dependencies,
      peerDependencies,
      peerDependenciesMeta,
      bin,
      engines,
    },
  };
  for (const [path, entry] of Object.entries(ours.packages)) {
    if (path !== '' && !entry.dev && path.startsWith('node_modules/')) packages[path] = entry;
  }
  const pending = extra.map((name) => `node_modules/${name}`);
  while (pending.length > 0) {
    const path = pending.pop()!;
    if (packages[path] !== undefined && !extra.some((name) => path === `node_modules/${name}`)) continue;
    const { dev: _dev, peer: _peer, optional: _optional, ...entry } = ours.packages[path];
    packages[path] = entry;
    for (const dep of Object.keys(entry.dependencies ?? {})) {
      const at = lockPathOf(ours, path, dep);
      if (at === undefined) throw new Error(`${dep} (of ${path}) is not in package-lock.json`);
      if (packages[at] === undefined) pending.push(at);
    }
  }
  return { name: consumer.name, version: consumer.version, lockfileVersion: 3, requires: true, packages };
}

/** `npm pack` of the repository into `work`; the tarball's path. */
export async function pack(work: string): Promise<string> {
  const packed = await run('npm', ['pack', '--pack-destination', work], repoRoot, 300_000);
  if (packed.code !== 0) throw new Error(`npm pack failed: ${packed.stderr}`);
  const tarball = (await readdir(work)).find((f) => f.endsWith('.tgz'));
  if (tarball === undefined) throw new Error(`npm pack left no tarball in ${work}`);
  return join(work, tarball);
}

export interface Consumer {
  /** The consumer project's directory. */
  project: string;
  /** Its node_modules/.bin/vespa-bulk. */
  bin: string;
}

/**
 * `tarball` installed offline (`npm ci --offline --omit=dev`) into a new project `dir`, with `extra` of our
 * lockfile's packages beside it. The project has a version of its own: `vespa-bulk --version` must not print it.
 */
export async function installConsumer(tarball: string, dir: string, extra: string[] = []): Promise<Consumer> {
  const manifest = { name: 'consumer', version: '7.7.7', private: true, type: 'module' };
  await mkdir(dir, { recursive: true });
  const spec = `file:${resolve(tarball)}`;
  const lock = consumerLock(manifest, spec, extra) as {
    packages: Record<string, { dependencies?: Record<string, string> }>;
  };
  await writeFile(
    join(dir, 'package.json'),
    JSON.stringify({ ...manifest, dependencies: lock.packages[''].dependencies }),
  );
  await writeFile(join(dir, 'package-lock.json'), JSON.stringify(lock));
  // With a lockfile npm needs only the tarballs (in the cache by integrity), not the registry's metadata.
  const installed = await run('npm', ['ci', '--offline', '--omit=dev', '--no-audit', '--no-fund'], dir, 240_000);
  if (installed.code !== 0) throw new Error(`npm ci failed in ${dir}: ${installed.stderr}`);
  return { project: dir, bin: join(dir, 'node_modules/.bin/vespa-bulk') };
}
