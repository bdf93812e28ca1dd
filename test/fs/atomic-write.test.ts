import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  directorySyncUnsupported,
  removeLeftoverTemporaryFiles,
  writeFileAtomically,
} from '../../src/fs/atomic-write.js';
import { tempDir } from '../support/temp-dir.js';

const { dir, cleanup } = tempDir('vb-atomic-');
afterAll(cleanup);

describe('writeFileAtomically', () => {
  it('creates and then replaces the file, leaving nothing beside it', async () => {
    const sub = join(dir, 'replace');
    mkdirSync(sub);
    const path = join(sub, 'cp.json');
    await writeFileAtomically(path, 'first\n');
    expect(readFileSync(path, 'utf8')).toBe('first\n');
    writeFileSync(join(sub, 'other.txt'), 'x');
    await writeFileAtomically(path, 'second, longer\n');
    expect(readFileSync(path, 'utf8')).toBe('second, longer\n');
    expect(readdirSync(sub).sort()).toEqual(['cp.json', 'other.txt']);
  });

  it('keeps the old contents and removes its temporary file when the rename fails', async () => {
    const sub = join(dir, 'fail');
    // A non-empty directory where the file should be: the write succeeds, the rename over it cannot.
    mkdirSync(join(sub, 'cp.json'), { recursive: true });
    writeFileSync(join(sub, 'cp.json', 'keep'), 'old');
    await expect(writeFileAtomically(join(sub, 'cp.json'), 'new')).rejects.toMatchObject({
      code: expect.stringMatching(/^(EISDIR|ENOTEMPTY|EEXIST)$/),
    });
    expect(readdirSync(sub)).toEqual(['cp.json']);
    expect(readFileSync(join(sub, 'cp.json', 'keep'), 'utf8')).toBe('old');
  });

  it('gives concurrent writers distinct temporary files, so the last rename wins whole', async () => {
    const sub = join(dir, 'concurrent');
    mkdirSync(sub);
    const path = join(sub, 'cp.json');
    const contents = Array.from({ length: 20 }, (_, i) => `${String(i).repeat(1000 + i)}\n`);
    await Promise.all(contents.map((c) => writeFileAtomically(path, c)));
    expect(contents).toContain(readFileSync(path, 'utf8'));
    expect(readdirSync(sub)).toEqual(['cp.json']);
  });
});

describe("writeFileAtomically, durable (temp file fsync'd, renamed, directory fsync'd)", () => {
  it('writes text and bytes whole, replaces longer contents with shorter, and leaves no temporary file', async () => {
    const sub = join(dir, 'durable');
    mkdirSync(sub);
    const path = join(sub, 'cp.json');
    await writeFileAtomically(path, 'a much longer first version\n');
    await writeFileAtomically(path, 'short\n');
    expect(readFileSync(path, 'utf8')).toBe('short\n');
    const bytes = Uint8Array.from([0, 1, 2, 255, 10]);
    await writeFileAtomically(path, bytes);
    expect(new Uint8Array(readFileSync(path))).toEqual(bytes);
    expect(readdirSync(sub)).toEqual(['cp.json']);
  });

  it('rejects when the directory does not exist, creating nothing', async () => {
    await expect(writeFileAtomically(join(dir, 'missing-dir', 'cp.json'), 'x')).rejects.toMatchObject({
      code: 'ENOENT',
    });
    expect(readdirSync(dir)).not.toContain('missing-dir');
  });

  it('skips the directory fsync only where the platform cannot do one', () => {
    for (const code of ['EISDIR', 'EPERM', 'EINVAL'])
      expect(directorySyncUnsupported(Object.assign(new Error(code), { code }))).toBe(true);
    for (const code of ['EIO', 'ENOSPC', undefined])
      expect(directorySyncUnsupported(Object.assign(new Error('x'), { code }))).toBe(false);
  });
});

describe('writeFileAtomically leaves no temporary file behind', () => {
  // Above the largest pid_max Linux allows (2^22): no process has it.
  const deadPid = 4_194_305;

  it("removes on the first write those of processes that died mid-write (and of its own pid that it is not writing), keeps a running process's", async () => {
    const sub = join(dir, 'stale');
    mkdirSync(sub);
    const left = [`cp.json.${deadPid}.3.tmp`, `cp.json.${deadPid}.tmp`, `cp.json.${process.pid}.999.tmp`];
    // pid 1 runs in every pid namespace.
    const kept = [`cp.json.1.2.tmp`, `other.json.${deadPid}.1.tmp`, 'cp.json.bak', `cp.json.${deadPid}.x.tmp`];
    for (const name of [...left, ...kept]) writeFileSync(join(sub, name), 'x');
    await writeFileAtomically(join(sub, 'cp.json'), 'new\n');
    expect(readdirSync(sub).sort()).toEqual(['cp.json', ...kept].sort());
  });

  it('finds the pid of a leftover whatever digits the name of its file has', async () => {
    const sub = join(dir, 'stale-names');
    mkdirSync(sub);
    for (const name of [
      `v.2.json.${deadPid}.1.tmp`,
      `v.2.json.${deadPid}.tmp`,
      'v.2.json.1.tmp',
      `v.json.${deadPid}.1.tmp`,
    ])
      writeFileSync(join(sub, name), 'x');
    await removeLeftoverTemporaryFiles(sub, (name) => name === 'v.2.json');
    expect(readdirSync(sub).sort()).toEqual(['v.2.json.1.tmp', `v.json.${deadPid}.1.tmp`]);
  });

  it('removes the one it is writing when the process exits in the middle (as a second Ctrl-C does)', () => {
    const sub = join(dir, 'exit');
    mkdirSync(sub);
    // The child exits as soon as its temporary file exists: 64 MiB take far longer to write than that look.
    const script = `
      import { readdirSync } from 'node:fs';
      import { writeFileAtomically } from ${JSON.stringify(resolve('src/fs/atomic-write.ts'))};
      const dir = ${JSON.stringify(sub)};
      void writeFileAtomically(dir + '/cp.json', new Uint8Array(64 << 20));
      const look = () => {
        const names = readdirSync(dir);
        if (names.includes('cp.json')) process.exit(3);
        if (names.some((n) => n.endsWith('.tmp'))) process.exit(130);
        setImmediate(look);
      };
      setImmediate(look);
    `;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(child.stderr).toBe('');
    expect(child.status).toBe(130);
    expect(readdirSync(sub)).toEqual([]);
  });
});
