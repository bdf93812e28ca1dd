import { appendFileSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startDocumentServer } from '../../src/simulator/document-api/document-server.js';
import { exportDocuments } from '../../src/visit/export/index.js';
import { tempDir } from '../support/temp-dir.js';

/** A resumed export cuts its output back to the length the checkpoint recorded, or refuses a file shorter than that. */
describe('visit checkpoint: output lengths', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function exported(output: string) {
    const server = await startDocumentServer({ port: 0 });
    cleanups.push(() => server.close());
    server.store.seed(Array.from({ length: 300 }, (_, i) => ({ id: `id:ns:music::o${i}`, fields: { n: i } })));
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const options = {
      endpoint: server.url,
      namespace: 'ns',
      documentType: 'music',
      slices: 2,
      output: join(dir, output),
      checkpoint: join(dir, 'cp.json'),
    };
    await exportDocuments(options);
    return { options, file: options.output, checkpoint: options.checkpoint, original: readFileSync(options.output) };
  }

  /**
   * What a run killed after its last chain's save and before its final one leaves: every chain finished, but not
   * the save that marks the export complete (written only once every byte is out), so it is continued as any other.
   */
  function killedBeforeTheEnd(checkpoint: string, also: (c: Record<string, unknown>) => void = () => {}): void {
    const c = JSON.parse(readFileSync(checkpoint, 'utf8')) as Record<string, unknown>;
    delete c.completed;
    also(c);
    writeFileSync(checkpoint, JSON.stringify(c));
  }

  it.each(['out.jsonl', 'out.jsonl.gz'])('%s: a longer file is cut back to the recorded length', async (name) => {
    const { options, file, checkpoint, original } = await exported(name);
    const recorded = (JSON.parse(readFileSync(checkpoint, 'utf8')) as { outputs: Record<string, number> }).outputs;
    expect(Object.values(recorded)).toEqual([original.length]);
    killedBeforeTheEnd(checkpoint);
    // What a killed run leaves: bytes past the checkpoint, here a cut line.
    appendFileSync(file, '{"id":"id:ns:music::half');
    const again = await exportDocuments(options);
    expect(again.resumed).toBe(true);
    expect(readFileSync(file).equals(original)).toBe(true);
  });

  it('a shorter file is refused, naming it', async () => {
    const { options, file, checkpoint, original } = await exported('out.jsonl');
    killedBeforeTheEnd(checkpoint);
    truncateSync(file, original.length - 10);
    await expect(exportDocuments(options)).rejects.toMatchObject({
      code: 'VB_USAGE',
      place: { file },
      message: expect.stringContaining('fewer than') as unknown,
    });
  });

  it('a checkpoint without output lengths (an older one) leaves the file as it is', async () => {
    const { options, file, checkpoint, original } = await exported('out.jsonl');
    killedBeforeTheEnd(checkpoint, (old) => delete old.outputs);
    appendFileSync(file, 'extra\n');
    await exportDocuments(options);
    expect(readFileSync(file, 'utf8')).toBe(`${original.toString('utf8')}extra\n`);
    expect((JSON.parse(readFileSync(checkpoint, 'utf8')) as { outputs: Record<string, number> }).outputs).toEqual({
      [file]: original.length + 6,
    });
  });

  it('a finished export run again writes nothing and keeps its checkpoint; a longer file is refused, not cut back', async () => {
    const { options, file, checkpoint, original } = await exported('out.jsonl');
    const saved = readFileSync(checkpoint, 'utf8');
    const again = await exportDocuments(options);
    expect(again).toMatchObject({ resumed: true, finishedBefore: true, documents: 0, documentsBefore: 300 });
    expect(readFileSync(file).equals(original)).toBe(true);
    expect(readFileSync(checkpoint, 'utf8')).toBe(saved);

    appendFileSync(file, 'mine\n');
    await expect(exportDocuments(options)).rejects.toMatchObject({
      code: 'VB_USAGE',
      place: { file },
      message: expect.stringContaining('more than the') as unknown,
    });
    expect(readFileSync(file, 'utf8')).toBe(`${original.toString('utf8')}mine\n`);

    const restarted = await exportDocuments({ ...options, restart: true });
    expect(restarted).toMatchObject({ resumed: false, documents: 300 });
    expect(readFileSync(file).length).toBe(original.length);
  });

  it.each(['out.jsonl', 'out.jsonl.gz'])(
    '%s: a file rewritten since (as long or longer, other bytes) is refused, not cut back',
    async (name) => {
      const { options, file, checkpoint, original } = await exported(name);
      killedBeforeTheEnd(checkpoint);
      const saved = JSON.parse(readFileSync(checkpoint, 'utf8')) as { outputTails: Record<string, string> };
      expect(Object.keys(saved.outputTails)).toEqual([file]);
      // Another export to the same name: other bytes, a little longer.
      const other = Buffer.from(original);
      other[other.length - 2] ^= 1;
      writeFileSync(file, Buffer.concat([other, Buffer.from('more\n')]));
      await expect(exportDocuments(options)).rejects.toMatchObject({
        code: 'VB_USAGE',
        place: { file },
        message: expect.stringContaining(
          `does not hold what the checkpoint recorded: its bytes before byte ${original.length} differ`,
        ) as unknown,
      });
      expect(readFileSync(file).length).toBe(original.length + 5);
    },
  );
});
