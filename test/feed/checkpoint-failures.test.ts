import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { FailureWriter } from '../../src/feed/failures.js';
import { defaultFailuresPath } from '../../src/cli/default-paths.js';
import { OperationSplitter, type RawItem } from '../../src/core/operation-splitter.js';
import { tempDir } from './helpers.js';
import { warningsDuring } from '../support/warnings.js';

// The checkpoint round-trip test moved to test/fs/checkpoint-file.test.ts, with the store it now goes through.
describe('FailureWriter', () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => cleanups.splice(0).forEach((c) => c()));

  it('waits for room again and again without leaving a listener behind each time', async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const w = new FailureWriter(join(dir, 'f.jsonl'));
    const warnings = await warningsDuring(async () => {
      for (let i = 0; i < 15; i++) {
        // More than the file stream's 16 KiB: it asks for a wait for 'drain'.
        w.write(Buffer.alloc(20_000, 'x'), { input: 'in.jsonl', inputLine: i + 1, message: 'bad', attempts: 1 }, true);
        await w.drained();
      }
      await w.close();
    });
    expect(warnings).not.toContain('MaxListenersExceededWarning');
    expect(readFileSync(join(dir, 'f.jsonl'), 'utf8').split('\n').length - 1).toBe(15);
  });

  it('writes one line per failure that reads back as the same operations, with reasons alongside', async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const w = new FailureWriter(join(dir, 'f.jsonl'));
    const pretty = Buffer.from('{\n  "put": "id:a:b::1",\n  "fields": {"t": "x"}\n}');
    w.write(
      pretty,
      { input: 'in.json', inputLine: 2, id: 'id:a:b::1', operation: 'put', status: 400, message: 'bad', attempts: 1 },
      false,
    );
    w.write(
      Buffer.from('not json\nat all'),
      { input: 'in.json', inputLine: 9, message: 'not a JSON object', attempts: 0, code: 'VB_BAD_JSON' },
      true,
    );
    await w.close();
    const text = readFileSync(join(dir, 'f.jsonl'), 'utf8');
    const items: RawItem[] = [];
    const s = new OperationSplitter();
    s.push(Buffer.from(text), items);
    s.end(items);
    expect(JSON.parse(items[0].bytes.toString())).toEqual(JSON.parse(pretty.toString()));
    expect(text).toContain('not json\nat all\n');
    const reasons = readFileSync(join(dir, 'f.jsonl.reasons.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(reasons).toEqual([
      {
        line: 1,
        input: 'in.json',
        inputLine: 2,
        id: 'id:a:b::1',
        operation: 'put',
        status: 400,
        message: 'bad',
        attempts: 1,
      },
      { line: 2, input: 'in.json', inputLine: 9, message: 'not a JSON object', attempts: 0, code: 'VB_BAD_JSON' },
    ]);
  });

  it('creates no file when nothing failed', async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const w = new FailureWriter(join(dir, 'f.jsonl'));
    await w.close();
    expect(existsSync(join(dir, 'f.jsonl'))).toBe(false);
    expect(defaultFailuresPath(new Date('2026-01-02T03:04:05.678Z'))).toBe(
      'vespa-bulk-failures-20260102T030405Z.jsonl',
    );
  });
});
