import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/simulator.js';
import { ensureDebianPackage } from '../support/debian-package.js';
import { tempDir, type TempDir } from '../support/temp-dir.js';
import { run } from './single-executable-build.js';

/**
 * The OCI image (scripts/build-image.sh, image/Containerfile): built twice from the same executable to the same
 * digest, and the executable run inside it by buildah (chroot isolation, the host's network)
 * against the simulator on the host. Buildah is installed by this set-up when missing, as CI runs as root on Debian.
 */

const root = join(import.meta.dirname, '../..');
const own = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
const name = `localhost/vespa-bulk-test-${process.pid}:${own.version}`;
const documents = 30;

let sim: Simulator;
let tmp: TempDir;
let builds: { digest: string; archive?: string }[];
let container: string | undefined;

const buildah = (args: string[]) => run('buildah', args, { timeoutMs: 300_000 });

async function buildImage(out?: string): Promise<{ digest: string; archive?: string }> {
  const args = ['scripts/build-image.sh', '--name', name, ...(out === undefined ? [] : ['--out', out])];
  const built = await run('bash', args, { timeoutMs: 600_000 });
  expect(built.code, built.stderr).toBe(0);
  const [printedName, digest, archive] = built.stdout.trim().split('\n');
  expect(printedName).toBe(name);
  return { digest, ...(archive !== undefined && { archive }) };
}

beforeAll(async () => {
  ensureDebianPackage('buildah', () => existsSync('/usr/bin/buildah'));
  tmp = tempDir('vb-image-');
  // The second build makes no archive: the archive is the image's layout, tarred with fixed times and owners.
  builds = [await buildImage(join(tmp.dir, 'image.tar')), await buildImage()];
  sim = await startSimulator({ port: 0, configPort: false });
  const input = join(tmp.dir, 'input');
  mkdirSync(input);
  writeFileSync(
    join(input, 'docs.jsonl'),
    Array.from(
      { length: documents },
      (_, i) => `${JSON.stringify({ put: `id:mynamespace:music::img-${i}`, fields: { title: `T ${i}` } })}\n`,
    ).join(''),
  );
  const from = await buildah(['from', '--pull=never', name]);
  expect(from.code, from.stderr).toBe(0);
  container = from.stdout.trim();
}, 900_000);
afterAll(async () => {
  if (container !== undefined) await buildah(['rm', container]);
  await buildah(['rmi', name]);
  await sim?.close();
  tmp?.cleanup();
});

/** The image's entry point run in the container with `args`, the input folder mounted read-only at /input. */
const inImage = (args: string[]) =>
  buildah([
    'run',
    '--isolation',
    'chroot',
    '-v',
    `${join(tmp.dir, 'input')}:/input:ro`,
    container!,
    '--',
    '/usr/local/bin/vespa-bulk',
    ...args,
  ]);

describe('the image', () => {
  it('is reproducible: the same executable gives the same digest; the archive holds that image', () => {
    expect(builds[0].digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(builds[1].digest).toBe(builds[0].digest);
    // An OCI layout: its index names the manifest, whose digest is the image's.
    const index = JSON.parse(
      execFileSync('tar', ['-xOf', builds[0].archive!, './index.json'], { encoding: 'utf8' }),
    ) as {
      manifests: { digest: string }[];
    };
    expect(index.manifests.map((m) => m.digest)).toEqual([builds[0].digest]);
  });

  it('is labelled with the version and the source, runs as a user that is not root, and starts the executable', async () => {
    const inspected = await buildah(['inspect', '--type', 'image', name]);
    expect(inspected.code, inspected.stderr).toBe(0);
    const { OCIv1: config } = JSON.parse(inspected.stdout) as {
      OCIv1: { config: { User: string; Entrypoint: string[]; Labels: Record<string, string> } };
    };
    expect(config.config.User).toBe('65532:65532');
    expect(config.config.Entrypoint).toEqual(['/usr/local/bin/vespa-bulk']);
    expect(config.config.Labels['org.opencontainers.image.version']).toBe(own.version);
    expect(config.config.Labels['org.opencontainers.image.source']).toBe('https://github.com/vespa-bulk/vespa-bulk');
  });

  it('holds no shell', async () => {
    const shell = await buildah(['run', '--isolation', 'chroot', container!, '--', '/bin/sh', '-c', 'true']);
    expect(shell.code).not.toBe(0);
  });

  it('feeds and visits the simulator on the host, with --workers 2', async () => {
    const version = await inImage(['--version']);
    expect(version.stdout).toContain(`${own.version} (single executable: Node v24.`);
    const fed = await inImage(['feed', '/input/docs.jsonl', '--target', sim.url, '--workers', '2', '--quiet']);
    expect(fed.code, fed.stderr).toBe(0);
    expect((JSON.parse(fed.stdout) as Record<string, unknown>)['feeder.ok.count']).toBe(documents);
    // Written into /data, the working folder, which is the image's user's.
    const visited = await inImage(['visit', '--target', sim.url, '--quiet', '--output', 'out.jsonl']);
    expect(visited.code, visited.stderr).toBe(0);
    expect((JSON.parse(visited.stdout) as Record<string, unknown>)['visit.document.count']).toBe(documents);
  });
});
