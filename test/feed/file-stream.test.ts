import { readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { once } from 'node:events';
import { afterAll, describe, expect, it } from 'vitest';
import { fileStream } from '../../src/feed/file-stream.js';
import { tempDir } from '../support/temp-dir.js';

const tmp = tempDir('vb-file-stream-');
afterAll(() => tmp.cleanup());

/** How many of this process's open files are `path` (Linux): other tests' files in the same worker do not count. */
const opened = (path: string) =>
  readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === path;
    } catch {
      return false;
    }
  }).length;

async function chunksOf(path: string, chunkBytes: number): Promise<Buffer[]> {
  const chunks: Buffer[] = [];
  for await (const chunk of fileStream(path, chunkBytes)) chunks.push(chunk as Buffer);
  return chunks;
}

describe('fileStream', () => {
  it('reads a file in chunks of the size asked, the last one short, none sharing memory', async () => {
    const path = join(tmp.dir, 'two-and-a-half.bin');
    const bytes = Buffer.from(Array.from({ length: 2500 }, (_, i) => i % 251));
    writeFileSync(path, bytes);
    const chunks = await chunksOf(path, 1000);
    expect(chunks.map((c) => c.length)).toEqual([1000, 1000, 500]);
    expect(Buffer.concat(chunks).equals(bytes)).toBe(true);
    expect(new Set(chunks.map((c) => c.buffer)).size).toBe(3);
  });

  it('gives nothing for an empty file, and closes it', async () => {
    const path = join(tmp.dir, 'empty.jsonl');
    writeFileSync(path, '');
    expect(await chunksOf(path, 64)).toEqual([]);
    expect(opened(path)).toBe(0);
  });

  it("fails with fs's own error for a file missing or a folder", async () => {
    await expect(chunksOf(join(tmp.dir, 'missing.jsonl'), 64)).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(chunksOf(tmp.dir, 64)).rejects.toMatchObject({ code: 'EISDIR' });
  });

  it('closes the file when destroyed part way', async () => {
    const path = join(tmp.dir, 'long.bin');
    writeFileSync(path, Buffer.alloc(10_000, 1));
    const stream = fileStream(path, 100);
    const [first] = (await once(stream, 'data')) as [Buffer];
    expect(first.length).toBe(100);
    expect(opened(path)).toBe(1);
    stream.destroy();
    await once(stream, 'close');
    expect(opened(path)).toBe(0);
  });
});
