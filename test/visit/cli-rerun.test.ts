import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import type { FaultSettings } from '../../src/simulator/faults.js';
import { alternateProtocols, expectSpoke, protocolFlag } from '../support/protocols.js';
import { runCli, tempDir } from '../faults/harness.js';
import { runInProcess } from '../support/in-process-cli.js';

/**
 * An export run again as a user runs it (issue 41): a finished checkpoint, outputs changed by hand, output paths
 * that cannot be written, a stop by a signal with and without a checkpoint, a dead endpoint, a stopped migration.
 * Each says what happened and what to do, with its exit code, and no document is lost or written twice.
 */

const ids = (text: string): string[] =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      const d = JSON.parse(l) as { put?: string; id?: string };
      return (d.put ?? d.id)!;
    });

/** Every document of the store in `lines`, each once. */
function expectEachOnce(lines: string, documents: number): void {
  const all = ids(lines);
  expect(new Set(all).size).toBe(documents);
  expect(all.length).toBe(documents);
}

/** A visit in small pages over two slices, quiet: long enough for a signal to come in its middle. */
function slowVisit(url: string, protocol: Parameters<typeof protocolFlag>[0]): string[] {
  return [
    'visit',
    'ns/music',
    '-t',
    url,
    ...protocolFlag(protocol),
    '--slices',
    '2',
    '--no-stream',
    '--wanted-document-count',
    '10',
    '--quiet',
  ];
}

describe('visit run again', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  /** A simulator holding `documents` documents, counting the requests it gets. */
  async function server(documents: number, faults?: Partial<FaultSettings>) {
    let requests = 0;
    const requestLog = new Writable({
      write(_chunk, _encoding, done) {
        requests++;
        done();
      },
    });
    const s: DocumentServer = await startDocumentServer({ port: 0, requestLog, ...(faults && { faults }) });
    cleanups.push(() => s.close());
    s.store.seed(Array.from({ length: documents }, (_, i) => ({ id: `id:ns:music::r${i}`, fields: { n: i } })));
    return { url: s.url, requests: () => requests };
  }

  function dir(): string {
    const t = tempDir();
    cleanups.push(t.cleanup);
    return t.dir;
  }

  it('a finished export run again exports nothing, says so (exit 0) and leaves the output and checkpoint as they are; --restart exports again', async () => {
    const s = await server(300);
    const d = dir();
    const command = [
      'visit',
      'ns/music',
      '-t',
      s.url,
      '--slices',
      '4',
      '-o',
      join(d, 'music.jsonl.gz'),
      '--checkpoint',
      join(d, 'visit.ckpt'),
    ];
    const first = await runInProcess(command);
    expect(first.code, first.stderr).toBe(0);
    const output = readFileSync(join(d, 'music.jsonl.gz'));
    const checkpoint = readFileSync(join(d, 'visit.ckpt'), 'utf8');
    const modified = statSync(join(d, 'music.jsonl.gz')).mtimeMs;
    expectEachOnce(gunzipSync(output).toString('utf8'), 300);

    const requestsBefore = s.requests();
    const again = await runInProcess(command);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(
      `${join(d, 'visit.ckpt')} is of a finished export (300 documents, 4 of 4 slices finished): nothing was exported this time, and ${join(d, 'music.jsonl.gz')} was left as it is. To export again, add --restart (or remove ${join(d, 'visit.ckpt')})`,
    );
    expect(again.stderr).not.toContain('visit done');
    expect(JSON.parse(again.stdout)['visit.document.count']).toBe(0);
    expect(s.requests()).toBe(requestsBefore);
    // Not rewritten, not truncated, not even opened for writing; the checkpoint's record (an increment's start) kept.
    expect(readFileSync(join(d, 'music.jsonl.gz')).equals(output)).toBe(true);
    expect(statSync(join(d, 'music.jsonl.gz')).mtimeMs).toBe(modified);
    expect(readFileSync(join(d, 'visit.ckpt'), 'utf8')).toBe(checkpoint);

    const restarted = await runInProcess([...command, '--restart']);
    expect(restarted.code, restarted.stderr).toBe(0);
    expect(JSON.parse(restarted.stdout)['visit.document.count']).toBe(300);
    expectEachOnce(gunzipSync(readFileSync(join(d, 'music.jsonl.gz'))).toString('utf8'), 300);
  }, 30_000);

  it('a finished export whose output grew or is gone is refused (exit 2), naming the file and the choices; nothing is written', async () => {
    const s = await server(200);
    const d = dir();
    const [out, cp] = [join(d, 'out.jsonl'), join(d, 'cp.json')];
    const command = ['visit', 'ns/music', '-t', s.url, '--slices', '2', '-o', out, '--checkpoint', cp];
    expect((await runInProcess(command)).code).toBe(0);
    const size = statSync(join(d, 'out.jsonl')).size;
    appendFileSync(join(d, 'out.jsonl'), '{"put":"id:ns:music::mine","fields":{}}\n');

    const grown = await runInProcess(command);
    expect(grown.code).toBe(2);
    expect(grown.stderr).toContain(
      `output ${out} has ${size + 40} bytes, more than the ${size} the checkpoint recorded when the export finished: it was changed since. The checkpoint ${cp} is of a finished export`,
    );
    expect(grown.stderr).toContain(`start afresh (add --restart, or remove ${cp})`);
    expect(grown.stdout).toBe('');
    // The user's line is still there: a finished checkpoint never cuts its output back.
    expect(statSync(join(d, 'out.jsonl')).size).toBe(size + 40);

    writeFileSync(join(d, 'out.jsonl'), readFileSync(join(d, 'out.jsonl')).subarray(0, size));
    const same = await runInProcess(command);
    expect(same.code, same.stderr).toBe(0);
    expect(same.stderr).toContain(`${cp} is of a finished export`);

    rmSync(join(d, 'out.jsonl'));
    const gone = await runInProcess(command);
    expect(gone.code).toBe(2);
    expect(gone.stderr).toContain(`output ${out} is missing, but the checkpoint recorded ${size} bytes in it`);
    expect(gone.stderr).toContain(`add --restart, or remove ${cp}`);
    expect(existsSync(join(d, 'out.jsonl'))).toBe(false);
  }, 30_000);

  for (const { signal, protocol } of alternateProtocols([
    { signal: 'SIGINT' as const },
    { signal: 'SIGTERM' as const },
  ])) {
    it(`over ${protocol}: stopped by ${signal} with --checkpoint, it says to run the same command again; a shorter output is then refused (exit 2), and the same command after putting it back has every document once`, async () => {
      const documents = 2000;
      const s = await server(documents, { latencyMs: 20 });
      const d = dir();
      const [out, cp] = [join(d, 'out.jsonl'), join(d, 'cp.json')];
      const command = [...slowVisit(s.url, protocol), '-o', out, '--checkpoint', cp];
      const first = await runCli(command, {
        cwd: d,
        stopWith: signal,
        stopWhen: () => existsSync(cp) && existsSync(out) && statSync(out).size > 0,
      });
      expect(first.signalled).toBe(true);
      expect(first.code).toBe(signal === 'SIGINT' ? 130 : 143);
      expect(first.stderr).toContain(
        `vespa-bulk: visit interrupted: continue with: the same command, which goes on from the checkpoint ${cp}; nothing is written twice`,
      );
      const written = readFileSync(out);
      expect(ids(written.toString('utf8')).length).toBeLessThan(documents);

      // A hand that cut the output: documents the checkpoint counts as written would be lost.
      const lines = written.toString('utf8').split('\n');
      writeFileSync(out, `${lines.slice(0, Math.floor(lines.length / 2)).join('\n')}\n`);
      const refused = await runInProcess(command);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/output \S+out\.jsonl has \d+ bytes, fewer than the \d+ the checkpoint recorded/);
      expect(refused.stderr).toContain(
        `Continuing from the checkpoint ${cp} would lose the documents it counts as written there: put the file back as it was, or start afresh (add --restart, or remove ${cp})`,
      );

      // Another export to the same name in between (as a feed file, without the checkpoint) rewrote the file,
      // longer than recorded: cut back to the recorded length it would hold other bytes, so it is refused too.
      const without = command.filter((a, i) => a !== '--checkpoint' && command[i - 1] !== '--checkpoint');
      expect((await runInProcess([...without, '--format', 'feed'])).code).toBe(0);
      expect(statSync(out).size).toBeGreaterThan(written.length);
      const rewritten = await runInProcess(command);
      expect(rewritten.code).toBe(2);
      expect(rewritten.stderr).toMatch(
        /output \S+out\.jsonl does not hold what the checkpoint recorded: its bytes before byte \d+ differ/,
      );
      expect(rewritten.stderr).toContain(`start afresh (add --restart, or remove ${cp})`);

      writeFileSync(out, written);
      const second = await runInProcess(command);
      expect(second.code, second.stderr).toBe(0);
      expectSpoke(JSON.parse(second.stdout), protocol);
      expectEachOnce(readFileSync(out, 'utf8'), documents);
    }, 40_000);
  }

  for (const { protocol } of alternateProtocols([{}, {}])) {
    it(`over ${protocol}: stopped by SIGINT without --checkpoint, it says that nothing was saved to resume from`, async () => {
      const s = await server(2000, { latencyMs: 20 });
      const d = dir();
      const out = join(d, 'out.jsonl');
      const first = await runCli([...slowVisit(s.url, protocol), '-o', 'out.jsonl'], {
        cwd: d,
        stopWith: 'SIGINT',
        stopWhen: () => existsSync(out),
      });
      expect(first.code).toBe(130);
      expect(first.stderr).toContain(
        'vespa-bulk: visit interrupted: nothing was saved to resume from (no --checkpoint): running it again starts from the beginning and writes the output anew; give --checkpoint FILE to be able to continue a stopped export',
      );
      expect(first.stderr).not.toContain('continue with');
    }, 30_000);

    it(`over ${protocol}: a visit to a dead endpoint leaves no -o file behind, and an existing one as it was`, async () => {
      const s = await server(1);
      const d = dir();
      // A port that answered a moment ago and is closed now: connection refused.
      const dead = s.url;
      await cleanups.splice(0, 1)[0]();
      const out = join(d, 'sub/out.jsonl');
      const run = await runInProcess(['visit', 'ns/music', '-t', dead, ...protocolFlag(protocol), '-o', out]);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('nothing answers at');
      expect(existsSync(out)).toBe(false);
      const old = join(d, 'old.jsonl');
      writeFileSync(old, 'an earlier export\n');
      const again = await runInProcess(['visit', 'ns/music', '-t', dead, ...protocolFlag(protocol), '-o', old]);
      expect(again.code).toBe(1);
      expect(readFileSync(old, 'utf8')).toBe('an earlier export\n');
    }, 30_000);
  }

  it('every output path is made ready before the first request: folders made, or exit 2 naming the path', async () => {
    const s = await server(50);
    const d = dir();
    const at = (path: string): string => join(d, path);
    const made = await runInProcess([
      'visit',
      'ns/music',
      '-t',
      s.url,
      '--slices',
      '2',
      '--checkpoint',
      at('a/b/cp.json'),
      '--output-dir',
      at('c/d'),
      '-q',
    ]);
    expect(made.code, made.stderr).toBe(0);
    expect(existsSync(at('a/b/cp.json'))).toBe(true);
    expectEachOnce(
      ['slice-0000.jsonl', 'slice-0001.jsonl'].map((f) => readFileSync(at(`c/d/${f}`), 'utf8')).join(''),
      50,
    );

    writeFileSync(at('file'), '');
    mkdirSync(at('folder'));
    const before = s.requests();
    for (const [flags, said] of [
      [
        ['--checkpoint', at('file/cp.json'), '-o', at('x.jsonl')],
        `cannot write the --checkpoint file '${at('file/cp.json')}': its folder '${at('file')}' cannot be made: a file stands in its path`,
      ],
      [
        ['--output-dir', at('file/out')],
        `cannot write in the --output-dir folder '${at('file/out')}': it cannot be made: a file stands in its path`,
      ],
      [['-o', at('folder')], `cannot write the -o file '${at('folder')}': it is a folder`],
      [['-o', at('file/x.jsonl')], `cannot write the -o file '${at('file/x.jsonl')}'`],
      [
        ['--to-endpoint', s.url, '--failures', at('file/f.jsonl')],
        `cannot write the --failures file '${at('file/f.jsonl')}'`,
      ],
      [['--restart', '-o', at('y.jsonl')], '--restart applies to --checkpoint'],
    ] as const) {
      const run = await runInProcess(['visit', 'ns/music', '-t', s.url, ...flags]);
      expect(run.code, flags.join(' ')).toBe(2);
      expect(run.stderr).toContain(said);
      expect(run.stdout).toBe('');
    }
    expect(s.requests()).toBe(before);
    expect(existsSync(at('x.jsonl'))).toBe(false);
  }, 30_000);

  it('a migration stopped by its destination says stopped on its progress line, not done', async () => {
    const source = await server(300);
    const destination = await server(0);
    const gone = destination.url;
    await cleanups.splice(1, 1)[0]();
    const run = await runInProcess([
      'visit',
      'ns/music',
      '-t',
      source.url,
      '--to-endpoint',
      gone,
      '--failures',
      join(dir(), 'f.jsonl'),
    ]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('migration stopped: nothing answers at the destination');
    expect(run.stderr).toMatch(/visit stopped /);
    expect(run.stderr).not.toMatch(/visit done /);
  }, 30_000);

  it('a migration stopped by SIGINT says stopped, and that nothing was saved to resume from', async () => {
    const source = await server(3000, { latencyMs: 20 });
    const destination = await server(0);
    const run = await runCli(
      [
        'visit',
        'ns/music',
        '-t',
        source.url,
        '--slices',
        '1',
        '--no-stream',
        '--wanted-document-count',
        '10',
        '--to-endpoint',
        destination.url,
      ],
      { cwd: dir(), stopWith: 'SIGINT', stopWhen: (stderr) => stderr.includes('speaking HTTP') },
    );
    expect(run.code).toBe(130);
    expect(run.stderr).toMatch(/visit stopped /);
    expect(run.stderr).not.toMatch(/visit done /);
    expect(run.stderr).toContain(
      'migration interrupted: nothing was saved to resume from (a migration keeps no checkpoint): running it again visits and feeds every document from the beginning',
    );
  }, 30_000);
});
