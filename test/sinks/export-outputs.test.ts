import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OptionError } from '../../src/core/options-check.js';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { sliceFileName } from '../../src/sinks/slice-directory.js';
import { exportDocuments } from '../../src/visit/export/index.js';
import { runCommand } from '../support/run-command.js';
import { tempDir } from '../support/temp-dir.js';

const documents = 300;

describe('export outputs and the directIo option', () => {
  let s: DocumentServer;
  const { dir, cleanup } = tempDir('vb-outputs-');
  beforeAll(async () => {
    s = await startDocumentServer({ port: 0, visitChunkDocuments: 40 });
    s.store.seed(
      Array.from({ length: documents }, (_, i) => ({
        id: `id:ns:music::${i}`,
        fields: { title: `t${i}`, pad: 'x'.repeat(i * 7) },
      })),
    );
  });
  afterAll(async () => {
    await s.close();
    cleanup();
  });

  /** The document ids of a JSONL export (lines as received: `{"put": id, ...}`). */
  const idsIn = (text: string): string[] =>
    text
      .trim()
      .split('\n')
      .map((line) => {
        const doc = JSON.parse(line) as { id?: string; put?: string };
        return doc.put ?? doc.id ?? '';
      });

  it('refuses a directIo that is not a boolean, by name, before opening anything', async () => {
    const output = join(dir, 'never.jsonl');
    const err = await exportDocuments({ endpoint: s.url, output, directIo: 'yes' as never }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OptionError);
    expect((err as OptionError).option).toBe('directIo');
    expect(readdirSync(dir)).not.toContain('never.jsonl');
  });

  it.each([true, false])(
    'writes the same documents with directIo: %s, to one file and to a file per slice',
    async (directIo) => {
      const output = join(dir, `all-${directIo}.jsonl`);
      const one = await exportDocuments({
        endpoint: s.url,
        namespace: 'ns',
        documentType: 'music',
        slices: 3,
        output,
        directIo,
      });
      expect(one.ok).toBe(true);
      expect(idsIn(readFileSync(output, 'utf8')).sort()).toEqual(
        Array.from({ length: documents }, (_, i) => `id:ns:music::${i}`).sort(),
      );
      expect(one.outputBytes).toBe(readFileSync(output).length);

      const outputDir = join(dir, `slices-${directIo}`, 'nested');
      await exportDocuments({
        endpoint: s.url,
        namespace: 'ns',
        documentType: 'music',
        slices: 3,
        outputDir,
        directIo,
      });
      expect(readdirSync(outputDir).sort()).toEqual(['slice-0000.jsonl', 'slice-0001.jsonl', 'slice-0002.jsonl']);
      const perSlice = [0, 1, 2].flatMap((slice) =>
        idsIn(readFileSync(sliceFileName(outputDir, slice, 'jsonl'), 'utf8')),
      );
      expect(perSlice.sort()).toEqual(idsIn(readFileSync(output, 'utf8')).sort());
    },
  );

  it('takes --no-direct-io and --direct-io on the command line', async () => {
    for (const flag of ['--no-direct-io', '--direct-io']) {
      const output = join(dir, `cli${flag}.jsonl`);
      const run = await runCommand(['visit', 'ns/music', '-t', s.url, '--slices', '2', '-o', output, flag, '--quiet']);
      expect(run.code, run.stderr).toBe(0);
      expect(idsIn(readFileSync(output, 'utf8'))).toHaveLength(documents);
    }
  });
});
