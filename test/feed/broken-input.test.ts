import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { constants, gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { Feeder } from '../../src/feed/feeder.js';
import { readFeedCheckpoint } from '../../src/feed/feed-checkpoint.js';
import { readSources } from '../../src/feed/source.js';
import type { RawItem } from '../../src/core/operation-splitter.js';
import { failureLines, failureReasons, runCli, storeMap } from '../faults/harness.js';
import { ensureZstd } from '../support/zstd-tool.js';
import { useFeedFixtures } from './helpers.js';

const lines = (n: number, prefix = 'b'): string =>
  Array.from(
    { length: n },
    (_, i) => `${JSON.stringify({ put: `id:ns:music::${prefix}${i}`, fields: { i, pad: 'x'.repeat(i % 50) } })}\n`,
  ).join('');

/** A gzip file of `text` cut to `share` of its length, and what gunzip can still read of it: whole lines and the cut one. */
function truncatedGzip(path: string, text: string, share: number): { whole: number; cut: string } {
  const gz = gzipSync(text);
  const cut = gz.subarray(0, Math.floor(gz.length * share));
  writeFileSync(path, cut);
  // The reference: everything zlib can decode, without the check of the end.
  const readable = gunzipSync(cut, { finishFlush: constants.Z_SYNC_FLUSH }).toString();
  const parts = readable.split('\n');
  return { whole: parts.length - 1, cut: parts.at(-1)! };
}

async function items(path: string | string[], chunkBytes?: number): Promise<Array<RawItem & { name: string }>> {
  const out: Array<RawItem & { name: string }> = [];
  for await (const b of readSources(path, { chunkBytes })) for (const it of b.items) out.push({ ...it, name: b.name });
  return out;
}

describe('a compressed input that breaks off', () => {
  const { server, dir } = useFeedFixtures();

  it('is read up to the break, whatever the chunk size, and the break is one failed item at its line with the cut bytes', async () => {
    const path = join(dir(), 'cut.jsonl.gz');
    const { whole, cut } = truncatedGzip(path, lines(20_000), 0.4);
    expect(cut).not.toBe('');
    for (const chunkBytes of [64, 1000, 65536]) {
      const read = await items(path, chunkBytes);
      expect(read).toHaveLength(whole + 1);
      expect(read.slice(0, -1).every((i) => i.error === undefined)).toBe(true);
      const last = read.at(-1)!;
      expect(last.error).toMatchObject({
        code: 'VB_BROKEN_INPUT',
        message: 'unexpected end of gzip data (the input is cut short or corrupt)',
      });
      expect(last.line).toBe(whole + 1);
      expect(last.bytes.toString()).toBe(cut);
    }
  });

  it('is a failed item for .zst too, and for corrupt gzip data, with the reason', async () => {
    const d = dir();
    const text = lines(20_000);
    writeFileSync(join(d, 'all.jsonl'), text);
    execFileSync(ensureZstd(), ['-q', '-f', join(d, 'all.jsonl')]);
    const zst = readFileSync(join(d, 'all.jsonl.zst'));
    writeFileSync(join(d, 'cut.jsonl.zst'), zst.subarray(0, Math.floor(zst.length / 2)));
    const z = await items(join(d, 'cut.jsonl.zst'));
    const zCut = execFileSync('sh', ['-c', `zstd -dc '${join(d, 'cut.jsonl.zst')}' 2>/dev/null || true`]).toString();
    expect(z.filter((i) => i.error === undefined)).toHaveLength(zCut.split('\n').length - 1);
    expect(z.at(-1)!.error).toMatchObject({ code: 'VB_BROKEN_INPUT', message: expect.stringMatching(/zstd data/) });

    const gz = gzipSync(text);
    // A checksum that does not match: found only at the end, after every line was read.
    gz[gz.length - 8] ^= 0xff;
    writeFileSync(join(d, 'corrupt.jsonl.gz'), gz);
    const c = await items(join(d, 'corrupt.jsonl.gz'));
    const before = c.slice(0, -1);
    // zlib gives nothing of the step that found the mismatch (up to a chunk of output): the lines before it, as written.
    expect(before.length).toBeGreaterThan(10_000);
    expect(before.map((i) => `${i.bytes.toString()}\n`).join('')).toBe(text.slice(0, c.at(-1)!.offset));
    expect(c.at(-1)).toMatchObject({
      line: before.length + 1,
      error: { code: 'VB_BROKEN_INPUT', message: 'corrupt gzip data: incorrect data check' },
    });
  });

  for (const workers of [1, 2]) {
    it(`feeds what came before, records the break as a failure naming file and line, goes on with the next input, saves the checkpoint (workers ${workers})`, async () => {
      const s = await server();
      const d = dir();
      const broken = join(d, 'cut.jsonl.gz');
      const { whole, cut } = truncatedGzip(broken, lines(5_000), 0.5);
      const next = join(d, 'next.jsonl');
      writeFileSync(next, lines(10, 'n'));
      const failures = join(d, 'failures.jsonl');
      const checkpoint = join(d, 'cp.json');
      const outcome = await new Feeder({ endpoint: s.url, workers, failures, checkpoint }).run([broken, next]);
      expect(outcome.stopped).toBeUndefined();
      expect(outcome.summary).toMatchObject({ ok: whole + 10, errors: 1, operations: whole + 11 });
      expect(storeMap(s).size).toBe(whole + 10);
      expect(failureLines(failures)).toEqual([cut]);
      expect(failureReasons(failures)).toEqual([
        {
          line: 1,
          input: broken,
          inputLine: whole + 1,
          // The bytes read before the break name the operation they began, when they got as far as its id.
          ...(/"put":"[^"]+"/.test(cut) && { id: /"put":"([^"]+)"/.exec(cut)![1], operation: 'put' }),
          message: 'unexpected end of gzip data (the input is cut short or corrupt)',
          attempts: 0,
          code: 'VB_BROKEN_INPUT',
        },
      ]);
      const saved = await readFeedCheckpoint(checkpoint);
      expect(saved).toMatchObject({
        position: null,
        reason: 'finished',
        ok: whole + 10,
        errors: 1,
        failureMark: { lines: 1 },
      });
    });
  }

  it('breaks off a URL input and a compressed table the same way', async () => {
    const s = await server();
    const d = dir();
    const { whole } = truncatedGzip(join(d, 'cut.jsonl.gz'), lines(3_000, 'u'), 0.5);
    const rows = Array.from({ length: 20_000 }, (_, i) => `c${i},${i}`).join('\n');
    const csv = gzipSync(`sku,i\n${rows}\n`);
    writeFileSync(join(d, 'cut.csv.gz'), csv.subarray(0, Math.floor(csv.length / 2)));
    const web = createServer((req, res) => res.end(readFileSync(join(d, req.url!.slice(1))))).listen(0, '127.0.0.1');
    await new Promise((r) => web.once('listening', r));
    try {
      const url = `http://127.0.0.1:${(web.address() as AddressInfo).port}/cut.jsonl.gz`;
      const failures = join(d, 'failures.jsonl');
      const outcome = await new Feeder({ endpoint: s.url, failures, rows: { id: 'id:shop:product::{sku}' } }).run([
        url,
        join(d, 'cut.csv.gz'),
      ]);
      expect(outcome.summary.errors).toBe(2);
      const reasons = failureReasons(failures);
      expect(reasons.map((r) => [r.input, r.code])).toEqual([
        [url, 'VB_BROKEN_INPUT'],
        [join(d, 'cut.csv.gz'), 'VB_BROKEN_INPUT'],
      ]);
      expect(reasons[0].inputLine).toBe(whole + 1);
      const csvRows = [...storeMap(s).keys()].filter((k) => k.startsWith('id:shop:product::')).length;
      expect(csvRows).toBeGreaterThan(0);
      expect(outcome.summary.ok).toBe(whole + csvRows);
      // The row after the last one fed: the CSV's header is line 1, row r is line r + 2.
      expect(reasons[1].inputLine).toBe(csvRows + 2);
    } finally {
      web.close();
    }
  });

  it('exits 1 from the CLI with the summary on stdout and the file and line on stderr', async () => {
    const s = await server();
    const d = dir();
    const { whole } = truncatedGzip(join(d, 'cut.jsonl.gz'), lines(3_000), 0.5);
    const run = await runCli(['feed', '-t', s.url, '--failures', 'f.jsonl', 'cut.jsonl.gz'], { cwd: d });
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ 'feeder.ok.count': whole, 'feeder.error.count': 1 });
    expect(run.stderr).toContain(`cut.jsonl.gz:${whole + 1}: unexpected end of gzip data`);
    expect(run.stderr).toContain('1 operation failed: written to f.jsonl');
  });
});
