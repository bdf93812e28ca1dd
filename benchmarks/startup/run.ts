/**
 * Start-up of the INSTALLED package and of the single executable (scripts/build-sea.mjs), each command's CPU
 * (user + sys) and wall time as a ratio to bare `node -e 0` and to the official Go `vespa` CLI
 * (../shared/vespa-cli, or `vespa` on PATH) measured in the same run: `--help`, `feed --help` and a one-document
 * feed against the simulator (in its own process). Also the files `--help` and `feed --help` load, and the
 * consumer's node_modules.
 *
 *   npx tsx benchmarks/startup/run.ts [--runs 15] [--tarball vespa-bulk-x.y.z.tgz] [--extra parquet-wasm,apache-arrow]
 *                                     [--sea-before PATH]
 *
 * --sea-before adds the rows of another single executable (one built from an earlier commit, say), measured in
 * the same turns, to compare a change to it.
 * Without --tarball it runs `npm pack` first (which builds dist/). The commands take turns, run after run, so a
 * burst of load on a shared machine touches them alike; each figure is the median of its runs. Times come from
 * bash's `time` (milliseconds of the rusage of the command and its children).
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { existsSync } from 'node:fs';
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
    'sea-before': { type: 'string' },
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

/** The official CLI: shared/vespa-cli's binary (its own HOME and config folder), else `vespa` on PATH. */
function officialCli(): string[] | undefined {
  const path = join(import.meta.dirname, '../../../shared/vespa-cli/path');
  if (existsSync(path)) {
    const bin = spawnSync(path, { encoding: 'utf8' }).stdout.trim();
    if (bin !== '') {
      const cache = join(bin, '..');
      // env(1) execs the binary in its place: the wrapper script's shell is not timed.
      return ['env', `HOME=${cache}/home`, `VESPA_CLI_HOME=${cache}/config`, bin];
    }
  }
  const onPath = spawnSync('bash', ['-c', 'command -v vespa'], { encoding: 'utf8' }).stdout.trim();
  return onPath === '' ? undefined : [onPath];
}

/** The single executable for this machine, built (or found in its cache) by scripts/build-sea.mjs. */
function singleExecutable(): string {
  const build = spawnSync(process.execPath, ['scripts/build-sea.mjs'], { encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`scripts/build-sea.mjs failed: ${build.stderr}`);
  return join(
    process.cwd(),
    build.stdout
      .trim()
      .split('\n')
      .pop()!
      .replace(/ \(\d+ bytes\)$/, ''),
  );
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
  // The executable's rows, and another's (`--sea-before`) in the same turns.
  const seaRows = (label: string, binary: string): void => {
    commands[`${label} --help`] = [binary, '--help'];
    commands[`${label} feed one.jsonl (1 document)`] = [binary, 'feed', 'one.jsonl', '--target', sim.url, '--quiet'];
  };
  const sea = singleExecutable();
  seaRows('single executable', sea);
  const before = flags['sea-before'];
  if (before !== undefined) seaRows('single executable before', before);
  const official = officialCli();
  if (official !== undefined) {
    commands['vespa --help (the official CLI)'] = [...official, '--help'];
    commands['vespa feed one.jsonl (the official CLI)'] = [...official, 'feed', 'one.jsonl', '--target', sim.url];
  }
  // One warm-up round (page cache, the simulator's first request), then the measured ones, taking turns.
  for (const argv of Object.values(commands)) timed(argv, project);
  const timings = new Map<string, Timing[]>(Object.keys(commands).map((name) => [name, []]));
  for (let i = 0; i < runs; i++)
    for (const [name, argv] of Object.entries(commands)) timings.get(name)!.push(timed(argv, project));

  const base = timings.get('node -e 0')!;
  const baseCpu = median(base.map((t) => t.cpu));
  const baseWall = median(base.map((t) => t.wall));
  const cpuOf = (name: string) => median(timings.get(name)!.map((t) => t.cpu));
  const wallOf = (name: string) => median(timings.get(name)!.map((t) => t.wall));
  /** Each row's goal: a ratio of its CPU to bare Node's, or of its wall time to the official CLI's. */
  const targets: Record<string, { of: 'node CPU' | 'official wall'; at: number }> = {
    'vespa-bulk --help': { of: 'node CPU', at: 2 },
    'vespa-bulk feed one.jsonl (1 document)': { of: 'node CPU', at: 3 },
    'single executable --help': { of: 'official wall', at: 2 },
    'single executable feed one.jsonl (1 document)': { of: 'node CPU', at: 1.5 },
  };
  /** The official CLI's row of the same job, where it was measured. */
  const officialOf = (name: string): string | undefined => {
    if (official === undefined || name.includes('(the official CLI)')) return undefined;
    return name.includes('feed one.jsonl')
      ? 'vespa feed one.jsonl (the official CLI)'
      : name.endsWith(' --help')
        ? 'vespa --help (the official CLI)'
        : undefined;
  };
  process.stdout.write(
    `Start-up of the installed package (${tarball.replace(/.*[\\/]/, '')}${extra.length > 0 ? `, with ${extra.join(', ')}` : ''}) and of the single executable (${sea.replace(/.*[\\/]/, '')}), median of ${runs} runs, Node ${process.version}\n\n`,
  );
  process.stdout.write(
    '| command | CPU s | CPU vs node -e 0 | CPU vs official | wall s | wall vs node -e 0 | wall vs official | target |\n|---|---|---|---|---|---|---|---|\n',
  );
  for (const name of timings.keys()) {
    const cpu = cpuOf(name);
    const wall = wallOf(name);
    const theirs = officialOf(name);
    const ratio = (ours: number, of: number | undefined) => (of === undefined ? '' : (ours / of).toFixed(2));
    const target = targets[name];
    let verdict = '';
    if (target !== undefined) {
      const value = target.of === 'node CPU' ? cpu / baseCpu : theirs === undefined ? undefined : wall / wallOf(theirs);
      verdict = `${target.of} x ${target.at}: ${value === undefined ? 'not measured' : value <= target.at ? 'met' : 'missed'}`;
    }
    process.stdout.write(
      `| ${name} | ${cpu.toFixed(3)} | ${(cpu / baseCpu).toFixed(2)} | ${ratio(cpu, theirs === undefined ? undefined : cpuOf(theirs))} | ${wall.toFixed(3)} | ${(wall / baseWall).toFixed(2)} | ${ratio(wall, theirs === undefined ? undefined : wallOf(theirs))} | ${verdict} |\n`,
    );
  }
  if (official === undefined)
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
