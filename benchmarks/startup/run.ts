/**
 * Start-up of the INSTALLED package, each command's CPU (user + sys) and wall time as a ratio to bare
 * `node -e 0` measured in the same run: `--help`, `feed --help` and a one-document feed against the simulator
 * (in its own process). Also the files `--help` and `feed --help` load, and the consumer's node_modules.
 *
 *   npx tsx benchmarks/startup/run.ts [--runs 15] [--tarball vespa-bulk-x.y.z.tgz] [--extra parquet-wasm,apache-arrow]
 *
 * Without --tarball it runs `npm pack` first (which builds dist/). The commands take turns, run after run, so a
 * burst of load on a shared machine touches them alike; each figure is the median of its runs. Times come from
 * bash's `time` (milliseconds of the rusage of the command and its children).
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startChildServer, median } from '../lib/child.js';
import { modulesLoadedBy, packageOf } from '../lib/loaded-modules.js';
import { installConsumer, pack } from '../lib/packed-install.js';
import { timed, type Timing } from '../lib/timed-command.js';

const { values: flags } = parseArgs({
  options: {
    runs: { type: 'string', default: '15' },
    tarball: { type: 'string' },
    extra: { type: 'string', default: '' },
    keep: { type: 'boolean', default: false },
  },
});
const runs = Number(flags.runs);
const extra = flags.extra === '' ? [] : flags.extra.split(',');

/** Bytes of the files under `dir`, and the packages in it (folders with a package.json at the top or in a scope). */
async function sizeOf(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += await sizeOf(path);
    else if (entry.isFile()) total += (await stat(path)).size;
  }
  return total;
}

async function packagesIn(nodeModules: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name === '.bin' || entry.name === '.cache') continue;
      const path = join(dir, entry.name);
      if (entry.name.startsWith('@')) await walk(path);
      else {
        found.push(path.slice(nodeModules.length + 1));
        const nested = join(path, 'node_modules');
        if ((await stat(nested).catch(() => undefined))?.isDirectory() === true) await walk(nested);
      }
    }
  };
  await walk(nodeModules);
  return found;
}

const work = await mkdtemp(join(tmpdir(), 'vespa-bulk-startup-'));
const sim = await startChildServer('benchmarks/server/sim-server.ts');
try {
  const tarball = flags.tarball ?? (await pack(work));
  const { project, bin } = await installConsumer(tarball, join(work, 'consumer'), extra);
  await writeFile(join(project, 'one.jsonl'), '{"put":"id:mynamespace:music::startup-1","fields":{"title":"One"}}\n');

  const commands: Record<string, string[]> = {
    'node -e 0': [process.execPath, '-e', '0'],
    'vespa-bulk --help': [process.execPath, bin, '--help'],
    'vespa-bulk feed --help': [process.execPath, bin, 'feed', '--help'],
    'vespa-bulk feed one.jsonl (1 document)': [
      process.execPath,
      bin,
      'feed',
      'one.jsonl',
      '--target',
      sim.url,
      '--quiet',
    ],
  };
  const official = spawnSync('bash', ['-c', 'command -v vespa'], { encoding: 'utf8' }).stdout.trim();
  if (official !== '') {
    commands['vespa --help (the official CLI)'] = [official, '--help'];
    commands['vespa feed one.jsonl (the official CLI)'] = [official, 'feed', 'one.jsonl', '--target', sim.url];
  }
  // One warm-up round (page cache, the simulator's first request), then the measured ones, taking turns.
  for (const argv of Object.values(commands)) timed(argv, project);
  const timings = new Map<string, Timing[]>(Object.keys(commands).map((name) => [name, []]));
  for (let i = 0; i < runs; i++)
    for (const [name, argv] of Object.entries(commands)) timings.get(name)!.push(timed(argv, project));

  const base = timings.get('node -e 0')!;
  const baseCpu = median(base.map((t) => t.cpu));
  const baseWall = median(base.map((t) => t.wall));
  const targets: Record<string, number> = { 'vespa-bulk --help': 2, 'vespa-bulk feed one.jsonl (1 document)': 3 };
  process.stdout.write(
    `Start-up of the installed package (${tarball.replace(/.*[\\/]/, '')}${extra.length > 0 ? `, with ${extra.join(', ')}` : ''}), median of ${runs} runs, Node ${process.version}\n\n`,
  );
  process.stdout.write(
    '| command | CPU s | CPU vs node -e 0 | wall s | wall vs node -e 0 | target (CPU) |\n|---|---|---|---|---|---|\n',
  );
  for (const [name, ts] of timings) {
    const cpu = median(ts.map((t) => t.cpu));
    const wall = median(ts.map((t) => t.wall));
    const target = targets[name];
    const verdict = target === undefined ? '' : `${target}x: ${cpu / baseCpu <= target ? 'met' : 'missed'}`;
    process.stdout.write(
      `| ${name} | ${cpu.toFixed(3)} | ${(cpu / baseCpu).toFixed(2)} | ${wall.toFixed(3)} | ${(wall / baseWall).toFixed(2)} | ${verdict} |\n`,
    );
  }
  if (official === '')
    process.stdout.write(
      '\nThe official `vespa` CLI is not on this machine (no `vespa` on PATH, and no Go toolchain here that builds it): not measured.\n',
    );

  process.stdout.write('\n| command | files loaded | of them in node_modules | packages |\n|---|---|---|---|\n');
  for (const args of [['--help'], ['feed', '--help']]) {
    const { files } = await modulesLoadedBy(bin, args, {
      cwd: project,
      root: join(project, 'node_modules/vespa-bulk'),
    });
    const packages = [...new Set(files.flatMap((f) => packageOf(f) ?? []))].filter((p) => p !== 'vespa-bulk').sort();
    const inPackages = files.filter((f) => packageOf(f) !== undefined && packageOf(f) !== 'vespa-bulk').length;
    process.stdout.write(
      `| vespa-bulk ${args.join(' ')} | ${files.length} | ${inPackages} | ${packages.join(', ')} |\n`,
    );
  }

  const nodeModules = join(project, 'node_modules');
  const packages = await packagesIn(nodeModules);
  process.stdout.write(
    `\nThe consumer's node_modules (npm ci --omit=dev of the tarball${extra.length > 0 ? ` and ${extra.join(', ')}` : ''}): ${(await sizeOf(nodeModules)).toLocaleString('en-US')} bytes, ${packages.length} packages (vespa-bulk included)\n`,
  );
} finally {
  await sim.stop();
  if (flags.keep) process.stderr.write(`kept ${work}\n`);
  else await rm(work, { recursive: true, force: true });
}
