import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkSelectionSyntax } from '../../src/visit/selection-check.js';
import { bulkOperation } from '../../src/visit/bulk.js';
import { exportDocuments } from '../../src/visit/export/index.js';
import { startRecordingServer } from '../http/recording-server.js';
import { runCli, tempDir } from '../faults/harness.js';

describe('a selection is checked locally before anything is sent', () => {
  it('accepts what parses, and blank selections', () => {
    for (const s of [
      undefined,
      '',
      '  ',
      'true',
      'music.year > 2000 and music.title =~ "a.*"',
      'id.namespace == "x"',
    ]) {
      expect(() => checkSelectionSyntax(s), String(s)).not.toThrow();
    }
  });

  it('refuses a syntax error as bad usage, pointing at the position under the selection', () => {
    let caught: unknown;
    try {
      checkSelectionSyntax('music.year >> 2000');
    } catch (err) {
      caught = err;
    }
    expect(caught).toMatchObject({ code: 'VB_USAGE' });
    const lines = (caught as Error).message.split('\n');
    expect(lines[0]).toMatch(/position 12: expected an operand after '>'/);
    expect(lines[1]).toBe('  music.year >> 2000');
    expect(lines[2]).toBe(`  ${' '.repeat(12)}^`);
  });

  describe('over loopback', () => {
    let server: Awaited<ReturnType<typeof startRecordingServer>>;
    beforeAll(async () => {
      server = await startRecordingServer();
    });
    afterAll(() => server.close());

    it('the library refuses an export and a bulk run with a bad selection, and sends no request', async () => {
      const { dir, cleanup } = tempDir('vb-selection-');
      await expect(
        exportDocuments({
          endpoint: server.url,
          namespace: 'ns',
          documentType: 'music',
          selection: 'music.year >',
          output: `${dir}/out.jsonl`,
        }),
      ).rejects.toMatchObject({ code: 'VB_USAGE' });
      await expect(
        bulkOperation({
          kind: 'delete-where',
          endpoint: server.url,
          namespace: 'ns',
          documentType: 'music',
          cluster: 'content',
          selection: 'music.year <',
        }),
      ).rejects.toMatchObject({ code: 'VB_USAGE' });
      expect(server.requests).toHaveLength(0);
      cleanup();
    });

    it('the CLI exits 2 with the caret, and sends no request', async () => {
      const { dir, cleanup } = tempDir('vb-selection-cli-');
      for (const command of [
        ['visit', 'ns/music', '-o', `${dir}/out.jsonl`],
        ['delete-where', 'ns/music', '--cluster', 'content'],
      ]) {
        const run = await runCli([...command, '--target', server.url, '--selection', 'music.year >> 2000'], {
          cwd: dir,
        });
        expect(run.code, run.stderr).toBe(2);
        expect(run.stderr).toMatch(/position 12/);
        expect(run.stderr).toContain('music.year >> 2000');
        expect(run.stderr).toMatch(/\n\s+\^/);
      }
      expect(server.requests).toHaveLength(0);
      cleanup();
    });
  });
});
