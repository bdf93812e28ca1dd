import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/simulator.js';
import { tempDir, type TempDir } from '../support/temp-dir.js';
import { run, singleExecutable } from './single-executable-build.js';

/**
 * The single executable (scripts/build-sea.mjs) as a user runs it: from a folder of its own with nothing else
 * there (no node_modules, no package.json), against the simulator. The feed's and the visit's worker threads run
 * from the code it carries; the Parquet reader is found beside it or said to be missing.
 */

const root = join(import.meta.dirname, '../..');
const own = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
const documents = 60;

let exe: string;
let sim: Simulator;
let tmp: TempDir;
/** An empty folder, as after a download. */
let fresh: string;

beforeAll(async () => {
  exe = await singleExecutable();
  sim = await startSimulator({ port: 0, configPort: false });
  tmp = tempDir('vb-sea-');
  fresh = join(tmp.dir, 'fresh');
  mkdirSync(fresh);
  writeFileSync(
    join(fresh, 'docs.jsonl'),
    Array.from(
      { length: documents },
      (_, i) => `${JSON.stringify({ put: `id:mynamespace:music::sea-${i}`, fields: { title: `Title ${i}` } })}\n`,
    ).join(''),
  );
}, 600_000);
afterAll(async () => {
  await sim?.close();
  tmp?.cleanup();
});

/** The executable run in `cwd` (the fresh folder) with a bare environment: no NODE_PATH, no npm variables. */
const vb = (args: string[], cwd = fresh) =>
  run(exe, args, { cwd, env: { PATH: '/usr/bin:/bin', HOME: tmp.dir, NO_COLOR: '1' } });

const summaryOf = (stdout: string) => JSON.parse(stdout) as Record<string, unknown>;

describe('the single executable', () => {
  it('says its version and the Node it carries, and prints the help without any other file', async () => {
    const version = await vb(['--version']);
    expect(version.code, version.stderr).toBe(0);
    expect(version.stdout.trim()).toBe(
      `${own.version} (single executable: Node ${/v24\.\d+\.\d+/.exec(version.stdout)?.[0]}, linux-${process.arch})`,
    );
    const help = await vb(['--help']);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toContain('vespa-bulk feed [files..]');
    expect(help.stderr).toBe('');
    // Drawn by the CLI's bundle, which the main script runs for all but the top-level help (src/cli/sea-main.ts).
    const feedHelp = await vb(['feed', '--help']);
    expect(feedHelp.code, feedHelp.stderr).toBe(0);
    expect(feedHelp.stdout).toContain('--inflight');
  });

  it.each(['h2', 'http1.1'])('feeds and visits over %s, in one thread and with --workers 2', async (protocol) => {
    for (const workers of ['1', '2']) {
      const fed = await vb([
        'feed',
        'docs.jsonl',
        '--target',
        sim.url,
        '--protocol',
        protocol,
        '--workers',
        workers,
        '--quiet',
      ]);
      expect(fed.code, fed.stderr).toBe(0);
      expect(summaryOf(fed.stdout)['feeder.ok.count']).toBe(documents);
      const visited = await vb(['visit', '--target', sim.url, '--protocol', protocol, '--workers', workers, '--quiet']);
      expect(visited.code, visited.stderr).toBe(0);
      const ids = visited.stdout
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { put: string }).put)
        .sort();
      expect(ids).toEqual(Array.from({ length: documents }, (_, i) => `id:mynamespace:music::sea-${i}`).sort());
    }
  });

  it('says how to add the Parquet reader beside it, and reads Parquet once that is there', async () => {
    const args = [
      'feed',
      join(root, 'samples/products.parquet'),
      '--id',
      'id:shop:product::{sku}',
      '--target',
      sim.url,
    ];
    const missing = await vb([...args, '--quiet']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(
      "reading Parquet needs parquet-wasm and apache-arrow, which vespa-bulk does not install with itself. Add them beside vespa-bulk: 'npm i parquet-wasm@^0.8.0 apache-arrow@^21.2.0' in the folder it runs in",
    );
    // As `npm i parquet-wasm apache-arrow` in the folder it runs in leaves them (linked from our own install).
    const project = join(tmp.dir, 'with-parquet');
    mkdirSync(join(project, 'node_modules'), { recursive: true });
    for (const name of ['parquet-wasm', 'apache-arrow'])
      symlinkSync(join(root, 'node_modules', name), join(project, 'node_modules', name));
    const fed = await vb([...args, '--quiet'], project);
    expect(fed.code, fed.stderr).toBe(0);
    expect(summaryOf(fed.stdout)['feeder.ok.count']).toBe(40);
  });

  it('runs serve, and the report carries its charts inside the page', async () => {
    const serve = spawn(exe, ['serve', '--port', '0', '--no-config'], { cwd: fresh, env: { PATH: '/usr/bin:/bin' } });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        // It says where it listens on stderr (stdout is kept for what a command outputs).
        serve.stderr.on('data', (d: Buffer) => {
          out += d.toString();
          const m = /document interface: (http:\/\/\S+?)\/document\/v1\//.exec(out);
          if (m) resolve(m[1]);
        });
        serve.once('exit', (code) => reject(new Error(`serve exited (${code}): ${out}`)));
      });
      const fed = await vb(['feed', 'docs.jsonl', '--target', url, '--stats', 'stats.json', '--quiet']);
      expect(fed.code, fed.stderr).toBe(0);
      expect(summaryOf(fed.stdout)['feeder.ok.count']).toBe(documents);
    } finally {
      serve.kill();
    }
    const report = await vb(['report', 'stats.json', '-o', 'report.html']);
    expect(report.code, report.stderr).toBe(0);
    const html = readFileSync(join(fresh, 'report.html'), 'utf8');
    expect(html).toContain('uPlot');
    expect(html).not.toMatch(/<script[^>]+src=/);
  });
});

/**
 * The arm64 file, built here on x64, run under qemu's user-mode emulation where this machine has it (Debian's
 * qemu-user-static, with the arm64 C library from `dpkg --add-architecture arm64`): not installed by the tests,
 * whose time it would take, so elsewhere this part is skipped. It carries no code cache (scripts/build-sea.mjs).
 */
const qemu = '/usr/bin/qemu-aarch64-static';
describe.runIf(process.arch === 'x64' && existsSync(qemu) && existsSync('/lib/ld-linux-aarch64.so.1'))(
  'the arm64 single executable, under emulation',
  () => {
    it('says it is arm64, and feeds and visits with --workers 2', async () => {
      const arm = await singleExecutable('arm64');
      const vbArm = (args: string[]) =>
        run(qemu, [arm, ...args], { cwd: fresh, env: { PATH: '/usr/bin:/bin', HOME: tmp.dir, NO_COLOR: '1' } });
      const version = await vbArm(['--version']);
      expect(version.code, version.stderr).toBe(0);
      expect(version.stdout).toMatch(/\(single executable: Node v24\.\d+\.\d+, linux-arm64\)/);
      const fed = await vbArm(['feed', 'docs.jsonl', '--target', sim.url, '--workers', '2', '--quiet']);
      expect(fed.code, fed.stderr).toBe(0);
      expect(summaryOf(fed.stdout)['feeder.ok.count']).toBe(documents);
      const visited = await vbArm(['visit', '--target', sim.url, '--workers', '2', '--quiet']);
      expect(visited.code, visited.stderr).toBe(0);
      // The simulator holds the other tests' documents too: those this file fed are all there.
      const ids = new Set(
        visited.stdout
          .trim()
          .split('\n')
          .map((l) => (JSON.parse(l) as { put: string }).put),
      );
      for (let i = 0; i < documents; i++) expect(ids.has(`id:mynamespace:music::sea-${i}`)).toBe(true);
    }, 300_000);
  },
);
