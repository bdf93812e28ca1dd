import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, inflateRawSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { startDocumentServer } from '../../src/simulator/document-api/document-server.js';
import { exportDocuments } from '../../src/visit/export/index.js';
import { runCli, tempDir } from '../faults/harness.js';

/** `workers`: the slices visited in worker threads, the bytes written by the main thread. */
describe('visit with workers', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  const documents = 6000;
  async function seeded(faults?: NonNullable<Parameters<typeof startDocumentServer>[0]>['faults']) {
    const server = await startDocumentServer({ port: 0, ...(faults !== undefined && { faults }) });
    cleanups.push(() => server.close());
    server.store.seed(
      Array.from({ length: documents }, (_, i) => ({
        id: `id:ns:music::w${i}`,
        fields: { n: i, text: `document ${i}` },
      })),
    );
    const dir = mkdtempSync(join(tmpdir(), 'vb-workers-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    return { server, dir };
  }
  const sortedLines = (text: string): string[] =>
    text
      .split('\n')
      .filter((l) => l !== '')
      .sort();
  /** The gzip members of a file (node writes headers without optional fields): one per batch a worker compressed. */
  const gzipMembers = (buf: Buffer): number => {
    let n = 0;
    for (let at = 0; at < buf.length; n++) {
      expect([buf[at], buf[at + 1], buf[at + 3]]).toEqual([0x1f, 0x8b, 0]);
      // With `info`, node returns the engine too (its typings do not say so): bytesWritten is the input it consumed.
      const { engine } = inflateRawSync(buf.subarray(at + 10), { info: true }) as unknown as {
        engine: { bytesWritten: number };
      };
      at += 10 + engine.bytesWritten + 8;
    }
    return n;
  };

  it('-o file.jsonl and -o file.jsonl.gz: the same documents with 2 workers as with 1', async () => {
    const { server, dir } = await seeded();
    const base = { endpoint: server.url, namespace: 'ns', documentType: 'music', slices: 4 };
    const one = await exportDocuments({ ...base, output: join(dir, 'one.jsonl') });
    const two = await exportDocuments({ ...base, workers: 2, output: join(dir, 'two.jsonl') });
    const gz = await exportDocuments({ ...base, workers: 2, output: join(dir, 'two.jsonl.gz') });
    const expected = sortedLines(readFileSync(join(dir, 'one.jsonl'), 'utf8'));
    expect(expected).toHaveLength(documents);
    expect(sortedLines(readFileSync(join(dir, 'two.jsonl'), 'utf8'))).toEqual(expected);
    // Gzip members, one per batch, compressed by the workers: gunzip reads them as one file.
    expect(sortedLines(gunzipSync(readFileSync(join(dir, 'two.jsonl.gz'))).toString('utf8'))).toEqual(expected);
    for (const s of [two, gz]) {
      expect(s.ok).toBe(true);
      expect(s.documents).toBe(documents);
      expect(s.slices.map((x) => x.slice)).toEqual([0, 1, 2, 3]);
      expect(s.outputBytes).toBe(one.outputBytes);
    }
  });

  it('--output-dir: each slice file the same with 2 workers as with 1', async () => {
    const { server, dir } = await seeded();
    const base = { endpoint: server.url, namespace: 'ns', documentType: 'music', slices: 3, format: 'feed' as const };
    await exportDocuments({ ...base, outputDir: join(dir, 'one') });
    const two = await exportDocuments({ ...base, workers: 2, outputDir: join(dir, 'two') });
    expect(two.ok).toBe(true);
    const files = readdirSync(join(dir, 'one')).sort();
    expect(files).toEqual(['slice-0000.jsonl', 'slice-0001.jsonl', 'slice-0002.jsonl']);
    expect(readdirSync(join(dir, 'two')).sort()).toEqual(files);
    for (const f of files)
      expect(sortedLines(readFileSync(join(dir, 'two', f), 'utf8'))).toEqual(
        sortedLines(readFileSync(join(dir, 'one', f), 'utf8')),
      );
  });

  it('--output-dir with gzip: each slice file valid gzip (members from the workers), all together the documents of 1 worker', async () => {
    const { server, dir } = await seeded();
    // Pages of 200 documents: each token sends the batch before it, so a slice file gets several members.
    const base = {
      endpoint: server.url,
      namespace: 'ns',
      documentType: 'music',
      slices: 3,
      stream: false,
      wantedDocumentCount: 200,
    };
    const one = await exportDocuments({ ...base, output: join(dir, 'one.jsonl') });
    const two = await exportDocuments({ ...base, workers: 2, outputDir: join(dir, 'two'), gzip: true });
    expect(two.ok).toBe(true);
    expect(two.outputBytes).toBe(one.outputBytes);
    const files = readdirSync(join(dir, 'two')).sort();
    expect(files).toEqual(['slice-0000.jsonl.gz', 'slice-0001.jsonl.gz', 'slice-0002.jsonl.gz']);
    const perSlice = files.map((f) => sortedLines(gunzipSync(readFileSync(join(dir, 'two', f))).toString('utf8')));
    // Every slice has documents of its own (so each worker wrote some), and together they are the whole export.
    for (const lines of perSlice) expect(lines.length).toBeGreaterThan(0);
    expect(perSlice.flat().sort()).toEqual(sortedLines(readFileSync(join(dir, 'one.jsonl'), 'utf8')));
    // The same files as the main thread compresses (gzip members of about 1 MiB: one here) with 1 worker, once decompressed.
    await exportDocuments({ ...base, outputDir: join(dir, 'one-gz'), gzip: true });
    for (const [i, f] of files.entries()) {
      expect(sortedLines(gunzipSync(readFileSync(join(dir, 'one-gz', f))).toString('utf8'))).toEqual(perSlice[i]);
      expect(gzipMembers(readFileSync(join(dir, 'one-gz', f)))).toBe(1);
      expect(gzipMembers(readFileSync(join(dir, 'two', f)))).toBeGreaterThan(1);
    }
  });

  it('gzip without an output directory is refused before anything is written', async () => {
    const { server, dir } = await seeded();
    await expect(
      exportDocuments({
        endpoint: server.url,
        namespace: 'ns',
        documentType: 'music',
        gzip: true,
        output: join(dir, 'x.jsonl'),
      }),
    ).rejects.toMatchObject({ code: 'VB_USAGE', option: 'gzip' });
    expect(existsSync(join(dir, 'x.jsonl'))).toBe(false);
  });

  it('refuses --format json with workers (one array has one writer)', async () => {
    const { server, dir } = await seeded();
    await expect(
      exportDocuments({
        endpoint: server.url,
        namespace: 'ns',
        documentType: 'music',
        workers: 2,
        format: 'json',
        output: join(dir, 'x.json'),
      }),
    ).rejects.toMatchObject({ code: 'VB_USAGE' });
  });

  it('a checkpointed visit with 2 workers stopped by SIGINT and run again: every document once, .gz output', async () => {
    const { server } = await seeded({ latencyMs: 8, errorRate: 0.03, errorStatuses: [503] });
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const out = join(dir, 'out.jsonl.gz');
    // The output is written in 1 MiB blocks, so its size says little: stop a random moment after the first checkpoint.
    const delayMs = Math.floor(300 * Math.random());
    const why = `SIGINT ${delayMs} ms after the first checkpoint`;
    const args = [
      'visit',
      'ns/music',
      '-t',
      server.url,
      '--slices',
      '4',
      '--workers',
      '2',
      '--no-stream',
      '--wanted-document-count',
      '10',
      '--checkpoint',
      'cp.json',
      '-o',
      'out.jsonl.gz',
      '--quiet',
    ];
    let checkpointSeen: number | undefined;
    const stopWhen = (): boolean => {
      if (checkpointSeen === undefined && existsSync(join(dir, 'cp.json'))) checkpointSeen = Date.now();
      return checkpointSeen !== undefined && Date.now() >= checkpointSeen + delayMs;
    };
    const first = await runCli(args, { cwd: dir, stopWith: 'SIGINT', stopWhen });
    expect(first.signalled, why).toBe(true);
    expect(first.code, `${why}: ${first.stderr}`).toBe(130);
    const partial = sortedLines(gunzipSync(readFileSync(out)).toString('utf8')).length;
    expect(partial, why).toBeLessThan(documents);
    const second = await runCli(args, { cwd: dir });
    expect(second.code, `${why}: ${second.stderr}`).toBe(0);
    const ids = sortedLines(gunzipSync(readFileSync(out)).toString('utf8')).map(
      (l) => (JSON.parse(l) as { put?: string; id?: string }).put ?? (JSON.parse(l) as { id?: string }).id,
    );
    expect(new Set(ids).size, `${why}: ${partial} documents before the stop`).toBe(documents);
    expect(ids.length, `${why}: ${partial} documents before the stop`).toBe(documents);
    expect(JSON.parse(second.stdout)['checkpoint.resumed']).toBe(true);
  });

  it('a checkpointed --output-dir --gzip visit with 2 workers stopped by SIGINT and run again: every document once', async () => {
    const { server } = await seeded({ latencyMs: 8, errorRate: 0.03, errorStatuses: [503] });
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const delayMs = Math.floor(300 * Math.random());
    const why = `SIGINT ${delayMs} ms after the first checkpoint`;
    const args = [
      'visit',
      'ns/music',
      '-t',
      server.url,
      '--slices',
      '4',
      '--workers',
      '2',
      '--no-stream',
      '--wanted-document-count',
      '10',
      '--checkpoint',
      'cp.json',
      '--output-dir',
      'out',
      '--gzip',
      '--quiet',
    ];
    let checkpointSeen: number | undefined;
    const stopWhen = (): boolean => {
      if (checkpointSeen === undefined && existsSync(join(dir, 'cp.json'))) checkpointSeen = Date.now();
      return checkpointSeen !== undefined && Date.now() >= checkpointSeen + delayMs;
    };
    const linesIn = (): string[] =>
      readdirSync(join(dir, 'out')).flatMap((f) =>
        sortedLines(gunzipSync(readFileSync(join(dir, 'out', f))).toString('utf8')),
      );
    const first = await runCli(args, { cwd: dir, stopWith: 'SIGINT', stopWhen });
    expect(first.signalled, why).toBe(true);
    expect(first.code, `${why}: ${first.stderr}`).toBe(130);
    const partial = linesIn().length;
    expect(partial, why).toBeLessThan(documents);
    const second = await runCli(args, { cwd: dir });
    expect(second.code, `${why}: ${second.stderr}`).toBe(0);
    expect(readdirSync(join(dir, 'out')).sort()).toEqual([
      'slice-0000.jsonl.gz',
      'slice-0001.jsonl.gz',
      'slice-0002.jsonl.gz',
      'slice-0003.jsonl.gz',
    ]);
    const ids = linesIn().map((l) => (JSON.parse(l) as { id: string }).id);
    expect(new Set(ids).size, `${why}: ${partial} documents before the stop`).toBe(documents);
    expect(ids.length, `${why}: ${partial} documents before the stop`).toBe(documents);
    expect(JSON.parse(second.stdout)['checkpoint.resumed']).toBe(true);
  });
});
