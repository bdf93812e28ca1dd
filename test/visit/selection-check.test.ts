import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { checkSelection } from '../../src/visit/selection-check.js';
import { documentTypesOf, type DocumentModel } from '../../src/schema/document-model.js';
import { parseSchema } from '../../src/schema/sd-schema.js';
import { modelFromPackage } from '../../src/deploy/load-model.js';
import { deploy } from '../../src/deploy/deploy.js';
import { startConfigServer } from '../../src/simulator/config-server/config-server.js';
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
      expect(() => checkSelection(s), String(s)).not.toThrow();
    }
  });

  it('refuses a syntax error as bad usage, pointing at the position under the selection', () => {
    let caught: unknown;
    try {
      checkSelection('music.year >> 2000');
    } catch (err) {
      caught = err;
    }
    expect(caught).toMatchObject({ code: 'VB_USAGE' });
    const lines = (caught as Error).message.split('\n');
    expect(lines[0]).toMatch(/position 12: expected an operand after '>'/);
    expect(lines[1]).toBe('  music.year >> 2000');
    expect(lines[2]).toBe(`  ${' '.repeat(12)}^`);
  });

  describe('against the schema, when it is known', () => {
    const types = documentTypesOf(
      ['music', 'product', 'user'].map((t) =>
        parseSchema(readFileSync(`samples/app/schemas/${t}.sd`, 'utf8'), `${t}.sd`),
      ),
    );
    const refusal = (selection: string): string => {
      try {
        checkSelection(selection, types);
      } catch (err) {
        expect(err).toMatchObject({ code: 'VB_USAGE' });
        return (err as Error).message;
      }
      return 'accepted';
    };

    it('accepts the types and fields the schema has', () => {
      for (const s of ['music.year > 2000', 'music and music.title == "x"', 'id.namespace == "ns"', 'product', ''])
        expect(refusal(s), s).toBe('accepted');
    });

    it('refuses a field the type lacks, with the near name and a caret under the field', () => {
      const lines = refusal('music.yeer > 2000').split('\n');
      expect(lines[0]).toBe(
        "selection: document type 'music' has no field 'yeer': did you mean music.year? (a missing field matches nothing)",
      );
      expect(lines[2]).toBe(`  ${' '.repeat('music.'.length)}^`);
      expect(refusal('music.zzzzzz > 1')).toMatch(/^selection: document type 'music' has no field 'zzzzzz' \(/);
    });

    it('refuses a type the schema lacks, with the near one', () => {
      expect(refusal('musik.year > 2000')).toMatch(
        /^selection: the schema has no document type 'musik': did you mean music\?/,
      );
      expect(refusal('true and banana')).toMatch(/no document type 'banana'; it has music, product, user/);
    });

    it('names the field for a bare name the parser took for a type; other syntax errors keep their own message', () => {
      expect(refusal('year > 2000')).toMatch(/^selection: 'year' is not a document type; .*did you mean music\.year\?/);
      expect(refusal('music.year >> 2000')).toMatch(
        /^selection syntax error at position 12: expected an operand after '>'/,
      );
    });
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
      const deleteWhere = (selection: string, model?: DocumentModel) =>
        bulkOperation({
          kind: 'delete-where',
          endpoint: server.url,
          namespace: 'ns',
          documentType: 'music',
          cluster: 'content',
          selection,
          ...(model !== undefined && { model }),
        });
      await expect(deleteWhere('music.year <')).rejects.toMatchObject({ code: 'VB_USAGE' });
      // A selection that parses but names a field the given model lacks: the delete would delete nothing.
      const model = await modelFromPackage('samples/app');
      await expect(deleteWhere('music.yeer < 2000', model)).rejects.toThrow(/did you mean music\.year\?/);
      await expect(
        exportDocuments({ endpoint: server.url, selection: 'musik.year > 1', model, output: `${dir}/out2.jsonl` }),
      ).rejects.toThrow(/did you mean music\?/);
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

    it('the CLI checks the selection against --app or the application on --config-url: exit 2, the near name, no request', async () => {
      const { dir, cleanup } = tempDir('vb-selection-schema-');
      const config = await startConfigServer({ port: 0, convergeDelayMs: 0 });
      try {
        await deploy({ configUrl: config.url }, resolve('samples/app'));
        for (const schema of [
          ['--app', resolve('samples/app')],
          ['--config-url', config.url],
        ])
          for (const command of [
            ['visit', 'ns/music', '-o', `${dir}/out.jsonl`],
            ['delete-where', 'ns/music', '--cluster', 'content'],
            ['update-where', 'ns/music', '--cluster', 'content', '--assign', 'year=1'],
          ]) {
            const run = await runCli(
              [...command, ...schema, '--target', server.url, '--selection', 'music.yeer > 2000'],
              {
                cwd: dir,
              },
            );
            expect(run.code, `${command[0]} ${schema[0]}: ${run.stderr}`).toBe(2);
            expect(run.stderr).toContain("document type 'music' has no field 'yeer': did you mean music.year?");
          }
        expect(server.requests).toHaveLength(0);
        expect(existsSync(`${dir}/out.jsonl`)).toBe(false);
      } finally {
        await config.close();
        cleanup();
      }
    });
  });
});
