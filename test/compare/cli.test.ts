import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { runCommand } from '../support/run-command.js';
import { runInProcess } from '../support/in-process-cli.js';
import { tempDir, type TempDir } from '../support/temp-dir.js';
import { plantedDiff, seed, sideA, sideB, writeExportDir } from './corpus.js';

/** The CLI in this process (a spawned one costs seconds): its exit code and both outputs. */
const cli = (...args: string[]) => runInProcess(args);

describe('vespa-bulk compare and migrate --verify', () => {
  let a: DocumentServer;
  let b: DocumentServer;
  let tmp: TempDir;
  beforeAll(async () => {
    [a, b] = await Promise.all([startDocumentServer({ port: 0 }), startDocumentServer({ port: 0 })]);
    seed(a, sideA());
    seed(b, sideB());
    tmp = tempDir('vb-compare-cli-');
  });
  afterAll(async () => {
    await Promise.all([a.close(), b.close()]);
    tmp.cleanup();
  });

  it('exits 0 when equal, 1 with the summary and the diff when not, 2 on bad usage', async () => {
    const dir = writeExportDir(join(tmp.dir, 'export'), sideA());
    const same = await cli('compare', a.url, dir, '--slices', '2', '--quiet');
    expect(same.code).toBe(0);
    expect(JSON.parse(same.stdout)).toMatchObject({ 'compare.equal': true, 'compare.same.count': 35 });

    const diff = join(tmp.dir, 'diff.jsonl');
    // Spawned once: the exit code is the process's own.
    const differ = await runCommand(['compare', a.url, b.url, 'ns/music', '--slices', '2', '--diff', diff, '--quiet']);
    expect(differ.code).toBe(1);
    // Dotted names, as feed's and visit's summaries.
    const printed = JSON.parse(differ.stdout);
    expect(printed).toMatchObject({
      'compare.equal': false,
      'compare.a.source': a.url,
      'compare.a.document.count': 30,
      'compare.b.document.count': 30,
      'compare.only.in.a.count': 1,
      'compare.only.in.b.count': 1,
      'compare.differing.count': 1,
      'compare.types': { music: { 'a.document.count': 30, 'b.document.count': 30, 'only.in.a.count': 1 } },
      'compare.examples': { 'only.in.a': [expect.any(String)], 'only.in.b': [expect.any(String)] },
      'compare.diff.file': diff,
    });
    expect(Object.keys(printed).filter((k) => !k.includes('.'))).toEqual([]);
    const lines = readFileSync(diff, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string });
    expect(lines.sort((x, y) => (x.id < y.id ? -1 : 1))).toEqual(plantedDiff);

    const bad = await cli('compare', a.url, dir, '--partitions', '0');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--partitions must be an integer from 1/);
  });

  it('names the endpoint arguments, not --target, when nothing answers at one', async () => {
    const gone = await startDocumentServer({ port: 0 });
    await gone.close();
    const r = await cli('compare', a.url, gone.url, 'ns/music', '--quiet');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`nothing answers at ${gone.url}`);
    expect(r.stderr).toContain('Check the endpoint given as <a> or <b>');
    expect(r.stderr).not.toContain('--target');
  });

  it('migrate --verify adds the comparison to the summary, and exits 1 when the destination differs', async () => {
    const [copy, busy] = await Promise.all([startDocumentServer({ port: 0 }), startDocumentServer({ port: 0 })]);
    try {
      busy.store.put('id:ns:music::stray', { title: 'left from before' });
      const ok = await cli(
        'visit',
        'ns/music',
        '-t',
        a.url,
        '--to-endpoint',
        copy.url,
        '--slices',
        '2',
        '--verify',
        '--quiet',
      );
      expect(ok.code).toBe(0);
      expect(JSON.parse(ok.stdout)).toMatchObject({
        'migrate.ok': true,
        verify: {
          'compare.equal': true,
          'compare.same.count': 30,
          'compare.only.in.a.count': 0,
          'compare.only.in.b.count': 0,
        },
      });

      const diff = join(tmp.dir, 'verify.jsonl');
      const not = await cli(
        'visit',
        'ns/music',
        '-t',
        a.url,
        '--to-endpoint',
        busy.url,
        '--slices',
        '2',
        '--verify',
        '--verify-diff',
        diff,
        '--quiet',
      );
      expect(not.code).toBe(1);
      expect(JSON.parse(not.stdout)).toMatchObject({
        'migrate.ok': false,
        verify: { 'compare.equal': false, 'compare.only.in.b.count': 1, 'compare.same.count': 30 },
      });
      expect(not.stderr).toMatch(/the destination differs from the source: 0 missing, 1 extra, 0 differing/);
      expect(readFileSync(diff, 'utf8')).toBe('{"id":"id:ns:music::stray","side":"b"}\n');
    } finally {
      await Promise.all([copy.close(), busy.close()]);
    }
  });
});
