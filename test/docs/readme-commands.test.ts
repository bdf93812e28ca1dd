import { existsSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/simulator.js';
import { runInProcess, type CliRun } from '../support/in-process-cli.js';
import { tempDir, type TempDir } from '../support/temp-dir.js';

/**
 * Each command block of the README, run as a reader of a clone runs it: top to bottom, in a directory that holds
 * the clone's samples/, against the simulator, by the CLI in this process (a spawned one costs seconds a command).
 * Every command must exit 0. What cannot run here as written is rewritten, and only this:
 * - `vespa-bulk serve &` is the simulator this test starts, on free ports (8080 may be taken);
 * - the default target (local) is given as `-t` (`--config-url` for deploy), the simulator's ports;
 * - the hosts the README makes up are simulators of their own (`hosts`);
 * - `bench --duration 60` runs for a second.
 */
const readme = readFileSync(join(import.meta.dirname, '../../README.md'), 'utf8');

/** Blocks not run, by the heading they are under, and why. */
const notRun: Record<string, string> = {
  Install: 'installs from the registry; test/package installs the packed package and runs its bin',
  'Set-up (a clone)': 'npm ci and npm test are this suite; test/package runs the demo',
};

interface Block {
  heading: string;
  lines: string[];
}

function shellBlocks(text: string): Block[] {
  const blocks: Block[] = [];
  for (const m of text.matchAll(/^```sh\n([\s\S]*?)^```/gm)) {
    const heading = [...text.slice(0, m.index).matchAll(/^## (.+)$/gm)].at(-1)?.[1] ?? '';
    blocks.push({ heading, lines: m[1].split('\n') });
  }
  return blocks;
}

/** A shell line's words: quotes kept together (their marks taken off), `>` and `&` words of their own, `#...` dropped. */
function words(line: string): string[] {
  const out: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === "'" || c === '"') {
      const end = line.indexOf(c, i + 1);
      if (end < 0) throw new Error(`unclosed ${c} in: ${line}`);
      word = (word ?? '') + line.slice(i + 1, end);
      i = end;
    } else if (/\s/.test(c)) {
      if (word !== undefined) out.push(word);
      word = undefined;
    } else if (c === '#' && word === undefined) break;
    else if ((c === '>' || c === '&') && word === undefined) out.push(c);
    else word = (word ?? '') + c;
  }
  if (word !== undefined) out.push(word);
  return out;
}

/** A word with `*` as the shell expands it (within one directory); no match is a failure, not the word as is. */
function expand(word: string): string[] {
  if (!word.includes('*')) return [word];
  const dir = dirname(word);
  const pattern = new RegExp(
    `^${basename(word)
      .split('*')
      .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );
  const found = readdirSync(dir)
    .filter((f) => pattern.test(f))
    .sort()
    .map((f) => join(dir, f));
  if (found.length === 0) throw new Error(`${word} matches nothing`);
  return found;
}

/** Commands that take no target: their endpoints, if any, are arguments. */
const untargeted = new Set(['validate', 'compare', 'report']);

describe('the README', () => {
  let tmp: TempDir;
  const cwd = process.cwd();
  /** The README's local cluster and the clusters it makes up, by the host:port it writes. */
  let local: Simulator;
  let other: Simulator;
  let restored: Simulator;
  let hosts: Map<string, Simulator>;
  const runs: Array<{ command: string; run: CliRun }> = [];

  beforeAll(async () => {
    [local, other, restored] = await Promise.all(
      [0, 1, 2].map((i) => startSimulator({ port: 0, configPort: i === 0 ? 0 : false })),
    );
    hosts = new Map([
      ['other-cluster:8080', other],
      ['cluster-a:8080', local],
      ['cluster-b:8080', other],
      ['source:8080', local],
      ['restored:8080', restored],
    ]);
    tmp = tempDir('vb-readme-');
    symlinkSync(join(cwd, 'samples'), join(tmp.dir, 'samples'));
    process.chdir(tmp.dir);
  });
  afterAll(async () => {
    process.chdir(cwd);
    await Promise.all([local, other, restored].map((s) => s.close()));
    tmp.cleanup();
  });

  /** One README line, rewritten as the file's comment says, run in this process. */
  async function run(line: string): Promise<void> {
    let args = words(line);
    if (args.length === 0) return;
    expect(args[0], line).toBe('vespa-bulk');
    args = args.slice(1);
    if (args.at(-1) === '&') {
      // `serve &`: the simulator started above stands for it.
      expect(args, line).toEqual(['serve', '&']);
      return;
    }
    let redirect: string | undefined;
    const arrow = args.indexOf('>');
    if (arrow >= 0) {
      redirect = args[arrow + 1];
      args = args.slice(0, arrow);
    }
    args = args.flatMap(expand).map((a) => {
      const url = /^http:\/\/([^/]+)$/.exec(a);
      if (url === null) return a;
      const sim = hosts.get(url[1]);
      if (sim === undefined)
        throw new Error(`the README names ${a}, which this test has no simulator for: add it to hosts`);
      return sim.url;
    });
    const command = args[0];
    if (command === 'deploy') args.push('--config-url', local.configUrl!);
    else if (!untargeted.has(command) && !args.includes('-t')) args.push('-t', local.url);
    if (command === 'bench') args = args.map((a, i) => (args[i - 1] === '--duration' ? '1' : a));
    const result = await runInProcess(args, { NO_COLOR: '1', VESPA_CLI_HOME: tmp.dir });
    runs.push({ command: line, run: result });
    expect(result.code, `${line}\n${result.stderr.slice(-2000)}`).toBe(0);
    if (redirect !== undefined) writeFileSync(redirect, result.stdout);
  }

  it('has no command block this test does not know', () => {
    const headings = shellBlocks(readme).map((b) => b.heading);
    expect(headings).toEqual(expect.arrayContaining(Object.keys(notRun)));
    expect(headings.filter((h) => !(h in notRun))).toEqual(['One example per job', 'Backups']);
  });

  it('runs every command of "One example per job", each exiting 0', async () => {
    for (const line of shellBlocks(readme).find((b) => b.heading === 'One example per job')!.lines) await run(line);
    // The table feeds: every row but the discontinued, of both files, with the transform's price band.
    const products = local.documents.store.all().filter((d) => d.id.startsWith('id:shop:product::'));
    expect(products.length).toBeGreaterThan(40);
    expect(products.map((d) => d.id)).toEqual(
      expect.arrayContaining(['id:shop:product::P-0001', 'id:shop:product::P-0060']),
    );
    expect(products.every((d) => typeof d.fields.price_band === 'string' && d.fields.status !== 'discontinued')).toBe(
      true,
    );
    // The export: every song after 2000, once.
    const songs = local.documents.store.all().filter((d) => d.id.startsWith('id:mynamespace:music::'));
    const recent = songs.filter((d) => Number(d.fields.year) > 2000).length;
    expect(recent).toBeGreaterThan(0);
    const exported = gunzipSync(readFileSync('music.jsonl.gz')).toString('utf8').trim().split('\n');
    expect(new Set(exported.map((l) => (JSON.parse(l) as { put: string }).put)).size).toBe(recent);
    expect(exported).toHaveLength(recent);
    // Some 3,000 songs as Parquet: one file, not one per slice.
    expect(readdirSync('music-parquet')).toEqual(['part-0000.parquet']);
    // The migration copied the songs; update-where and the dry-run delete-where left them there.
    expect(other.documents.store.all().filter((d) => d.id.startsWith('id:mynamespace:music::'))).toHaveLength(
      songs.length,
    );
    expect(existsSync('bench.html')).toBe(true);
  });

  it('runs the Backups block: full export, two increments, a restore that compares equal', async () => {
    for (const line of shellBlocks(readme).find((b) => b.heading === 'Backups')!.lines) await run(line);
    const songs = (s: Simulator): string[] =>
      s.documents.store
        .all()
        .filter((d) => d.id.startsWith('id:mynamespace:music::'))
        .map((d) => d.id)
        .sort();
    expect(songs(restored).length).toBeGreaterThan(0);
    expect(songs(restored)).toEqual(songs(local));
    expect(runs.at(-1)?.command).toMatch(/^vespa-bulk compare/);
  });
});
