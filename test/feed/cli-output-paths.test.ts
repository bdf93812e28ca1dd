import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { failureLines, failureReasons, runCli, storeMap } from '../faults/harness.js';
import { useFeedFixtures } from './helpers.js';

/**
 * Every output of a feed (failure output, checkpoint, stats, report) is made ready before the first operation is
 * sent: its folder made, or the run refused with exit 2 naming it. One that cannot be written mid-run ends the
 * run with its summary and exit 1, never exit 13 with nothing said.
 */
describe('vespa-bulk feed: its output paths', () => {
  const { server, dir, later } = useFeedFixtures();

  it('makes the missing folders of --failures, --checkpoint, --stats and --report, and records every operation there', async () => {
    const a = await server();
    const d = dir();
    const ops = Array.from({ length: 40 }, (_, i) => JSON.stringify({ put: `id:ns:music::p${i}`, fields: { i } }));
    ops.splice(7, 0, '{"put": "id:ns:music::broken", "fields": ');
    writeFileSync(join(d, 'in.jsonl'), `${ops.join('\n')}\n`);
    const run = await runCli(
      [
        'feed',
        '-q',
        '-t',
        a.url,
        '--failures',
        'nodir/f.jsonl',
        '--checkpoint',
        'nodir2/deeper/ck.json',
        '--stats',
        'nodir3/s.jsonl',
        '--report',
        'nodir4/r.html',
        'in.jsonl',
      ],
      { cwd: d },
    );
    expect(run.code, run.stderr).toBe(1);
    const summary = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(summary['feeder.ok.count']).toBe(40);
    expect(summary['feeder.error.count']).toBe(1);
    expect(storeMap(a).size).toBe(40);
    expect(failureLines(join(d, 'nodir/f.jsonl'))).toEqual(['{"put": "id:ns:music::broken", "fields":']);
    expect(failureReasons(join(d, 'nodir/f.jsonl'))).toEqual([expect.objectContaining({ inputLine: 8 })]);
    expect(JSON.parse(readFileSync(join(d, 'nodir2/deeper/ck.json'), 'utf8'))).toMatchObject({
      position: null,
      reason: 'finished',
      ok: 40,
      errors: 1,
    });
    expect(statSync(join(d, 'nodir3/s.jsonl')).size).toBeGreaterThan(0);
    expect(statSync(join(d, 'nodir4/r.html')).size).toBeGreaterThan(0);
  }, 30_000);

  it('refuses (exit 2) an output that cannot be written, before anything is sent', async () => {
    const a = await server();
    const d = dir();
    writeFileSync(join(d, 'in.jsonl'), `${JSON.stringify({ put: 'id:ns:music::one', fields: {} })}\n`);
    writeFileSync(join(d, 'plain.txt'), 'a file, not a folder\n');
    mkdirSync(join(d, 'a-folder'));
    const cases: [string[], RegExp][] = [
      [
        ['--failures', 'plain.txt/sub/f.jsonl'],
        /cannot write the --failures file 'plain\.txt\/sub\/f\.jsonl': its folder 'plain\.txt\/sub' cannot be made: a file stands in its path/,
      ],
      [
        ['--checkpoint', 'plain.txt/ck.json'],
        /cannot write the --checkpoint file 'plain\.txt\/ck\.json': its folder 'plain\.txt' cannot be made/,
      ],
      [['--stats', 'a-folder'], /cannot write the --stats file 'a-folder': it is a folder/],
      [['--report', 'plain.txt/r.html'], /cannot write the --report file 'plain\.txt\/r\.html'/],
      // Given with no value: refused here, not after the whole feed when the report is written.
      [['--report', ''], /^vespa-bulk: cannot write the --report file '': no file is named/],
      [['--stats', ''], /^vespa-bulk: cannot write the --stats file '': no file is named/],
    ];
    for (const [flags, message] of cases) {
      const run = await runCli(['feed', '-q', '-t', a.url, ...flags, 'in.jsonl'], { cwd: d });
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toMatch(message);
      expect(run.stdout).toBe('');
    }
    expect(a.store.size()).toBe(0);
  }, 30_000);

  it('refuses (exit 2) a --resume given no file, with the message alone (no empty place before it)', async () => {
    const a = await server();
    const d = dir();
    writeFileSync(join(d, 'in.jsonl'), `${JSON.stringify({ put: 'id:ns:music::one', fields: {} })}\n`);
    const run = await runCli(['feed', '-q', '-t', a.url, 'in.jsonl', '--resume', ''], { cwd: d });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toMatch(/^vespa-bulk: cannot read checkpoint '': no such file, or it is empty/);
    expect(a.store.size()).toBe(0);
  }, 30_000);

  /**
   * A document API that answers every put at once but that of `held`, whose answer (`status`) it holds until
   * `release()`: the test changes the outputs' paths while the feed is sure to be running.
   */
  async function holdingServer(status: number): Promise<{
    url: string;
    stored: Set<string>;
    heldArrived: Promise<void>;
    release: () => void;
  }> {
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => (release = r));
    let arrived: () => void = () => undefined;
    const heldArrived = new Promise<void>((r) => (arrived = r));
    const stored = new Set<string>();
    const api = createServer((req: IncomingMessage, res: ServerResponse) => {
      req.resume();
      req.on('end', () => {
        const path = req.url ?? '';
        const id = decodeURIComponent(path.split('?')[0].split('/').pop() ?? '');
        const answer = (status: number, body: object): void => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ pathId: path.split('?')[0], ...body }));
        };
        if (id !== 'bad') {
          stored.add(id);
          answer(200, { id: `id:ns:music::${id}` });
          return;
        }
        arrived();
        void held.then(() => {
          if (status === 200) stored.add(id);
          answer(status, status === 200 ? { id: `id:ns:music::${id}` } : { message: 'refused for the test' });
        });
      });
    });
    await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
    later(() => new Promise<void>((r) => api.close(() => r())));
    return { url: `http://127.0.0.1:${(api.address() as AddressInfo).port}`, stored, heldArrived, release };
  }

  it('a failure output that cannot be written mid-run ends the run with its summary and exit 1', async () => {
    const { url, stored, heldArrived, release } = await holdingServer(400);
    const d = dir();
    const ops = Array.from({ length: 30 }, (_, i) => JSON.stringify({ put: `id:ns:music::p${i}`, fields: { i } }));
    ops.push(JSON.stringify({ put: 'id:ns:music::bad', fields: {} }));
    writeFileSync(join(d, 'in.jsonl'), `${ops.join('\n')}\n`);
    const running = runCli(
      ['feed', '-q', '-t', url, '--failures', 'out/f.jsonl', '--checkpoint', 'ck.json', 'in.jsonl'],
      { cwd: d },
    );
    await heldArrived;
    // A checkpoint is saved every second: one while the held operation is unfinished stands before it.
    while (!existsSync(join(d, 'ck.json'))) await new Promise((r) => setTimeout(r, 20));
    // The folder is made before the run; now a file stands where it was.
    rmSync(join(d, 'out'), { recursive: true, force: true });
    writeFileSync(join(d, 'out'), 'in the way\n');
    release();
    const run = await running;
    expect(run.code, run.stderr).toBe(1);
    const summary = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(summary['feeder.ok.count']).toBe(30);
    expect(run.stderr).toContain("feed stopped: the failure output 'out/f.jsonl' cannot be written");
    // The failed operation is not lost: the checkpoint stands before it, and the printed command sends it again.
    expect(run.stderr).toContain('continue with: vespa-bulk feed --resume ck.json');
    const checkpoint = JSON.parse(readFileSync(join(d, 'ck.json'), 'utf8')) as { position: unknown };
    expect(checkpoint.position).not.toBeNull();
    expect(stored.size).toBe(30);
    rmSync(join(d, 'out'));
    const resumed = await runCli(['feed', '-q', '--resume', 'ck.json', '--failures', 'out/f.jsonl'], { cwd: d });
    expect(resumed.code, resumed.stderr).toBe(1);
    expect(failureLines(join(d, 'out/f.jsonl'))).toEqual([JSON.stringify({ put: 'id:ns:music::bad', fields: {} })]);
    expect(failureReasons(join(d, 'out/f.jsonl'))).toEqual([expect.objectContaining({ status: 400 })]);
    expect(existsSync(join(d, 'ck.json'))).toBe(true);
  }, 40_000);

  it('a checkpoint that cannot be written at the end is saved elsewhere: the summary, where, and exit 1', async () => {
    const { url, stored, heldArrived, release } = await holdingServer(200);
    const d = dir();
    const ops = Array.from({ length: 30 }, (_, i) => JSON.stringify({ put: `id:ns:music::p${i}`, fields: { i } }));
    ops.push(JSON.stringify({ put: 'id:ns:music::bad', fields: {} }));
    writeFileSync(join(d, 'in.jsonl'), `${ops.join('\n')}\n`);
    const running = runCli(['feed', '-q', '-t', url, '--checkpoint', 'ckdir/ck.json', 'in.jsonl'], { cwd: d });
    await heldArrived;
    rmSync(join(d, 'ckdir'), { recursive: true, force: true });
    writeFileSync(join(d, 'ckdir'), 'in the way\n');
    release();
    const run = await running;
    expect(run.code, run.stderr).toBe(1);
    expect(JSON.parse(run.stdout)['feeder.ok.count']).toBe(31);
    expect(stored.size).toBe(31);
    const savedTo = /it was saved to (\S+) instead/.exec(run.stderr)?.[1];
    expect(run.stderr).toContain("the checkpoint 'ckdir/ck.json' cannot be written");
    expect(savedTo).toBeDefined();
    later(() => rmSync(savedTo!, { force: true }));
    expect(JSON.parse(readFileSync(savedTo!, 'utf8'))).toMatchObject({ position: null, reason: 'finished', ok: 31 });
    expect(run.stderr).toContain(`Continue with: vespa-bulk feed --resume ${savedTo}`);
    const again = await runCli(['feed', '--resume', savedTo!], { cwd: d });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('finished, nothing left to feed');
    expect(stored.size).toBe(31);
  }, 40_000);
});
