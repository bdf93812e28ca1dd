// Makes a release's files in one folder (default release/): the npm tarball, the single executables (Linux x64
// and arm64), the OCI image for this machine's architecture, and SHA256SUMS of them all.
//
//   npm run release [-- --out DIR]
//
// The image needs buildah (`apt-get install buildah` on Debian). The image is reproducible from its executable
// (scripts/build-image.sh); the x64 executable carries V8's code cache, whose bytes differ from build to build
// (scripts/build-sea.mjs says why), and npm writes the tarball's file times.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { arch } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildSea, nodeBuilds } from './build-sea.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const { values } = parseArgs({ options: { out: { type: 'string', default: join(root, 'release') } } });
const out = resolve(values.out);
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

function run(command, args) {
  const result = spawnSync(command, args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${result.status})`);
  return result.stdout;
}

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

process.stderr.write('release: npm pack\n');
run('npm', ['pack', '--silent', '--pack-destination', out]);

process.stderr.write(`release: the single executables (${Object.keys(nodeBuilds).join(', ')})\n`);
for (const file of await buildSea(Object.keys(nodeBuilds))) {
  const target = join(out, basename(file).replace(/^vespa-bulk-/, `vespa-bulk-${version}-`));
  copyFileSync(file, target);
  chmodSync(target, 0o755);
}

process.stderr.write('release: the image (buildah)\n');
const image = join(out, `vespa-bulk-${version}-image-linux-${arch()}.oci.tar`);
const printed = run('bash', ['scripts/build-image.sh', '--out', image]).trim().split('\n');
writeFileSync(join(out, 'IMAGE'), `${printed[0]} ${printed[1]}\n`);

const files = readdirSync(out)
  .filter((f) => f !== 'SHA256SUMS')
  .sort();
const sums = files.map(
  (f) =>
    `${createHash('sha256')
      .update(readFileSync(join(out, f)))
      .digest('hex')}  ${f}\n`,
);
writeFileSync(join(out, 'SHA256SUMS'), sums.join(''));
for (const f of [...files, 'SHA256SUMS'])
  process.stdout.write(`${join(out, f)} (${statSync(join(out, f)).size.toLocaleString('en-US')} bytes)\n`);
