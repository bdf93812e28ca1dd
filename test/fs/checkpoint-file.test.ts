import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CheckpointStore, readCheckpointFile } from '../../src/fs/checkpoint-file.js';
import {
  feedCheckpointText,
  readFeedCheckpoint,
  readFeedCheckpointSync,
  type FeedCheckpoint,
} from '../../src/feed/feed-checkpoint.js';
import { emptyCheckpoint, readVisitCheckpoint, visitCheckpointStore } from '../../src/visit/visit-checkpoint.js';
import { tempDir } from '../support/temp-dir.js';

const { dir: root, cleanup } = tempDir('vb-checkpoint-');
afterAll(cleanup);
let n = 0;
function freshDir(): string {
  const dir = join(root, `case-${++n}`);
  mkdirSync(dir);
  return dir;
}

describe('feed checkpoint files', () => {
  // Moved here from test/feed/checkpoint-failures.test.ts with the synchronous writer only that test used.
  it('round-trips and refuses files that are not checkpoints', async () => {
    const dir = freshDir();
    const c: FeedCheckpoint = {
      version: 1,
      inputs: ['a.jsonl', '-'],
      position: { input: 1, offset: 77, line: 3 },
      written: 'now',
      reason: 'interrupted',
      ok: 5,
      errors: 1,
    };
    await new CheckpointStore<FeedCheckpoint>({ path: join(dir, 'cp.json'), text: feedCheckpointText }).save(c);
    expect(await readFeedCheckpoint(join(dir, 'cp.json'))).toEqual(c);
    expect(existsSync(join(dir, 'cp.json.tmp'))).toBe(false);
    writeFileSync(join(dir, 'other.json'), '{"version":2}');
    await expect(readFeedCheckpoint(join(dir, 'other.json'))).rejects.toThrow(/not a vespa-bulk feed checkpoint/);
    await expect(readFeedCheckpoint(join(dir, 'missing.json'))).rejects.toThrow(
      expect.objectContaining({ code: 'VB_USAGE' }),
    );
  });

  it('reads version 1 (no endpoint) and version 2 (an endpoint, or none), also synchronously; refuses a malformed endpoint and later versions', async () => {
    const dir = freshDir();
    const v2: FeedCheckpoint = {
      version: 2,
      inputs: ['a.jsonl'],
      endpoint: 'http://h:8080',
      options: { route: 'r' },
      position: null,
      written: 'now',
      reason: 'finished',
      ok: 5,
      errors: 0,
    };
    writeFileSync(join(dir, 'v2.json'), feedCheckpointText(v2));
    expect(await readFeedCheckpoint(join(dir, 'v2.json'))).toEqual(v2);
    expect(readFeedCheckpointSync(join(dir, 'v2.json'))).toEqual(v2);
    // Without one: nothing answered where it fed.
    const { endpoint: _e, ...unbound } = v2;
    writeFileSync(join(dir, 'unbound.json'), feedCheckpointText(unbound));
    expect(readFeedCheckpointSync(join(dir, 'unbound.json'))).toEqual(unbound);
    writeFileSync(join(dir, 'bad.json'), feedCheckpointText({ ...v2, endpoint: 42 as unknown as string }));
    expect(() => readFeedCheckpointSync(join(dir, 'bad.json'))).toThrow(/not a vespa-bulk feed checkpoint/);
    writeFileSync(join(dir, 'v3.json'), feedCheckpointText({ ...v2, version: 3 as 2 }));
    await expect(readFeedCheckpoint(join(dir, 'v3.json'))).rejects.toThrow(/not a vespa-bulk feed checkpoint/);
    expect(() => readFeedCheckpointSync(join(dir, 'missing.json'))).toThrow(
      expect.objectContaining({ code: 'VB_USAGE' }),
    );
  });

  it('keeps the file format: indented, the unfinished list one entry per line', () => {
    const c: FeedCheckpoint = {
      version: 1,
      inputs: ['a'],
      position: { input: 0, offset: 1, line: 1 },
      written: 'w',
      reason: 'running',
      readTo: { input: 0, offset: 9, line: 4 },
      unfinished: [
        [0, 1, 1],
        [0, 5, 3],
      ],
      ok: 1,
      errors: 0,
    };
    const text = feedCheckpointText(c);
    expect(text).toContain('\n  "unfinished": [\n    [0,1,1],\n    [0,5,3]\n  ]\n}\n');
    expect(JSON.parse(text)).toEqual(c);
  });
});

describe('visit checkpoint files', () => {
  it('are saved with one space of indent and the time of saving, read back, and refused for another visit', async () => {
    const dir = freshDir();
    const path = join(dir, 'cp.json');
    expect(await readVisitCheckpoint(path)).toBeUndefined();
    const store = visitCheckpointStore(path, async () => ({
      ...emptyCheckpoint('v1'),
      slices: { '0': { finished: true, documents: 3 } },
    }));
    await store.flush();
    const text = readFileSync(path, 'utf8');
    expect(text.startsWith('{\n "format": "vespa-bulk-visit-checkpoint/1",\n "visit": "v1",\n "updated": "')).toBe(
      true,
    );
    const read = await readVisitCheckpoint(path, 'v1');
    expect(read?.slices).toEqual({ '0': { finished: true, documents: 3 } });
    expect(read?.updated).not.toBe(new Date(0).toISOString());
    await expect(readVisitCheckpoint(path, 'v2')).rejects.toMatchObject({ code: 'VB_USAGE' });
    writeFileSync(path, '{"format":"other"}');
    await expect(readVisitCheckpoint(path)).rejects.toMatchObject({ code: 'VB_USAGE' });
  });
});

describe('CheckpointStore', () => {
  it('saves one at a time in the order asked: the last one asked is on disk, and nothing is left beside it', async () => {
    const dir = freshDir();
    const path = join(dir, 'cp.json');
    const store = new CheckpointStore<{ n: number }>({ path });
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.save({ n: i })));
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ n: 19 });
    expect(readFileSync(path, 'utf8')).toBe('{\n  "n": 19\n}\n');
    expect(readdirSync(dir)).toEqual(['cp.json']);
  });

  it('runs beforeWrite before each write, after the payload was taken', async () => {
    const dir = freshDir();
    const path = join(dir, 'cp.json');
    const seen: string[] = [];
    const store = new CheckpointStore<number>({
      path,
      beforeWrite: async () => {
        seen.push(existsSync(path) ? readFileSync(path, 'utf8').trim() : 'none');
      },
    });
    await store.save(1);
    await store.save(2);
    expect(seen).toEqual(['none', '1']);
  });

  it('touch() saves the snapshot as it stands; flush() saves now and reports a failed save', async () => {
    const dir = freshDir();
    const path = join(dir, 'cp.json');
    let state = 0;
    const store = new CheckpointStore<number>({ path, snapshot: () => state, intervalMs: 1 });
    state = 1;
    store.touch();
    state = 2;
    store.touch();
    await store.flush();
    expect(readFileSync(path, 'utf8')).toBe('2\n');
    const failing = new CheckpointStore<number>({ path: join(dir, 'no-such-dir', 'cp.json'), snapshot: () => 1 });
    await expect(failing.flush()).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('start() saves the snapshot periodically until stop()', async () => {
    const dir = freshDir();
    const path = join(dir, 'cp.json');
    let saves = 0;
    const store = new CheckpointStore<number>({ path, snapshot: () => ++saves, intervalMs: 1 });
    store.start();
    while (saves < 3) await new Promise((r) => setTimeout(r, 5));
    await store.stop();
    const after = saves;
    expect(Number(readFileSync(path, 'utf8'))).toBe(after);
    await new Promise((r) => setTimeout(r, 20));
    expect(saves).toBe(after);
  });
});

describe('readCheckpointFile', () => {
  it('gives undefined for no file or an empty one, and typed errors for one that is unreadable or not JSON', async () => {
    const dir = freshDir();
    expect(await readCheckpointFile(join(dir, 'missing.json'))).toBeUndefined();
    writeFileSync(join(dir, 'empty.json'), ' \n');
    expect(await readCheckpointFile(join(dir, 'empty.json'))).toBeUndefined();
    writeFileSync(join(dir, 'cut.json'), '{"version": 1, "inp');
    await expect(readCheckpointFile(join(dir, 'cut.json'))).rejects.toMatchObject({ code: 'VB_BAD_JSON' });
    mkdirSync(join(dir, 'a-directory'));
    await expect(readCheckpointFile(join(dir, 'a-directory'))).rejects.toMatchObject({ code: 'VB_USAGE' });
    writeFileSync(join(dir, 'ok.json'), '{"a": 1}');
    expect(await readCheckpointFile(join(dir, 'ok.json'))).toEqual({ a: 1 });
  });
});
