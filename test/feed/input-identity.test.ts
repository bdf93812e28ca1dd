import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { checkInputs, type FeedCheckpoint } from '../../src/feed/feed-checkpoint.js';
import { InputChangedError, InputIdentities } from '../../src/feed/input-identity.js';
import { tempDir } from './helpers.js';

const lines = (from: number, count: number): string =>
  Array.from({ length: count }, (_, i) => `{"put":"id:ns:music::d${from + i}","fields":{}}\n`).join('');

function checkpointOf(inputs: string[], identity: FeedCheckpoint['identity'], at: number | null): FeedCheckpoint {
  return {
    version: 2,
    inputs,
    position: at === null ? null : { input: 0, offset: at, line: 1 },
    ...(at !== null && { readTo: { input: 0, offset: at, line: 1 }, unfinished: [] }),
    written: '',
    reason: at === null ? 'finished' : 'interrupted',
    ok: 0,
    errors: 0,
    identity,
  };
}

describe('the identity of a feed checkpoint input', () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => cleanups.splice(0).forEach((c) => c()));
  const dir = (): string => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    return t.dir;
  };

  it('hashes a file up to where the checkpoint stands, going on from the last save, as one hash of the whole would', async () => {
    const d = dir();
    const path = join(d, 'in.jsonl');
    writeFileSync(path, lines(0, 2000));
    const going = new InputIdentities([path]);
    await going.of({ input: 0, offset: 1000 });
    const [later] = await going.of({ input: 0, offset: 30_000 });
    const [fresh] = await new InputIdentities([path]).of({ input: 0, offset: 30_000 });
    expect(later).toEqual(fresh);
    expect(later).toMatchObject({ kind: 'prefix', to: 30_000 });
  });

  it('refuses a change before the position, takes bytes added after it, and says where a finished one grew', async () => {
    const d = dir();
    const path = join(d, 'in.jsonl');
    writeFileSync(path, lines(0, 100));
    const at = lines(0, 50).length;
    const [stopped] = await new InputIdentities([path]).of({ input: 0, offset: at, line: 51 });
    appendFileSync(path, lines(100, 3));
    // Grown after the position: goes on.
    const grown = await checkInputs(checkpointOf([path], [stopped], at), [path], { resumeChanged: false });
    expect(grown.added).toBeUndefined();
    // Changed before it: refused, saying where.
    writeFileSync(path, lines(0, 10) + lines(1000, 1) + lines(11, 92));
    const refusal = checkInputs(checkpointOf([path], [stopped], at), [path], { resumeChanged: false, file: 'cp' });
    await expect(refusal).rejects.toBeInstanceOf(InputChangedError);
    await expect(refusal).rejects.toThrow(`its content before byte ${at} (line 51) changed`);
    expect(
      (await checkInputs(checkpointOf([path], [stopped], at), [path], { resumeChanged: true })).notes,
    ).toHaveLength(1);
    // Shorter than the position: refused.
    writeFileSync(path, lines(0, 10));
    await expect(checkInputs(checkpointOf([path], [stopped], at), [path], { resumeChanged: false })).rejects.toThrow(
      'shorter than the checkpoint',
    );

    writeFileSync(path, lines(0, 100));
    const [finished] = await new InputIdentities([path]).of(null);
    appendFileSync(path, lines(100, 2));
    await expect(checkInputs(checkpointOf([path], [finished], null), [path], { resumeChanged: false })).rejects.toThrow(
      'is of a finished feed, and its input grew since',
    );
    const added = await checkInputs(checkpointOf([path], [finished], null), [path], { resumeChanged: true });
    expect(added.added).toEqual([{ input: path, offset: lines(0, 100).length }]);
    expect(added.checkpoint.position).toEqual({ input: 0, offset: lines(0, 100).length, line: 1 });
  });

  it('takes a compressed input whole: any change of it is a change', async () => {
    const d = dir();
    const path = join(d, 'in.jsonl.gz');
    writeFileSync(path, gzipSync(lines(0, 100)));
    const [id] = await new InputIdentities([path]).of({ input: 0, offset: 10 });
    expect(id).toMatchObject({ kind: 'ends' });
    await expect(checkInputs(checkpointOf([path], [id], 10), [path], { resumeChanged: false })).resolves.toBeDefined();
    writeFileSync(path, gzipSync(lines(0, 100) + lines(100, 1)));
    await expect(checkInputs(checkpointOf([path], [id], 10), [path], { resumeChanged: false })).rejects.toThrow(
      'a compressed file or a table is checked whole',
    );
  });
});
