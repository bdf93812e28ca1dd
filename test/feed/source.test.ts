import { afterEach, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { readSources, type SourceBatch } from '../../src/feed/source.js';
import { tempDir } from './helpers.js';

async function collect(gen: AsyncGenerator<SourceBatch>) {
  const out: { input: number; name: string; text: string; line: number; skip: boolean }[] = [];
  for await (const b of gen)
    for (const it of b.items)
      out.push({ input: b.input, name: b.name, text: it.bytes.toString(), line: it.line, skip: it.skip === true });
  return out;
}

describe('readSources', () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => cleanups.splice(0).forEach((c) => c()));

  it('reads files in order, .gz decompressed, stdin for -, and resumes from a position', async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const a = join(dir, 'a.jsonl');
    const b = join(dir, 'b.jsonl.gz');
    writeFileSync(a, '{"remove":"id:a:b::1"}\n{"remove":"id:a:b::2"}\n');
    const bText = '{"remove":"id:a:b::3"}\n{"remove":"id:a:b::4"}\n{"remove":"id:a:b::5"}\n';
    writeFileSync(b, gzipSync(bText));
    const stdin = Readable.from([Buffer.from('{"remove":"id:a:b::6"}')]);
    const all = await collect(readSources([a, b, '-'], { stdin }));
    expect(all.map((x) => [x.input, x.name.endsWith('.gz') ? 'gz' : x.name === '-' ? '-' : 'a', x.line])).toEqual([
      [0, 'a', 1],
      [0, 'a', 2],
      [1, 'gz', 1],
      [1, 'gz', 2],
      [1, 'gz', 3],
      [2, '-', 1],
    ]);
    const from = { input: 1, offset: bText.indexOf('{"remove":"id:a:b::5"}'), line: 3 };
    const resumed = await collect(readSources([a, b], { from }));
    expect(resumed.map((x) => [x.text.slice(-3, -2), x.skip])).toEqual([
      ['3', true],
      ['4', true],
      ['5', false],
    ]);
  });

  it('fails with VB_USAGE naming a file that cannot be read', async () => {
    await expect(collect(readSources(['/nonexistent/x.jsonl']))).rejects.toMatchObject({
      code: 'VB_USAGE',
      message: expect.stringContaining('/nonexistent/x.jsonl'),
    });
  });
});
