import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatCount } from '../../src/cli/progress-format.js';
import { failureLines, runCli, storeMap } from '../faults/harness.js';
import { alternateProtocols, expectSpoke, protocolFlag } from '../support/protocols.js';
import { useFeedFixtures } from './helpers.js';

/**
 * A resumed feed counts the whole feed in its summary and progress (the runs before, then this one), with this run's
 * figures beside; every input operation is once in the count: succeeded before, succeeded now, or failed (and in
 * the failure output). A finished checkpoint run again shows the whole feed done and nothing this run.
 */

const n = 6_000;
/** Lines that are not JSON: parse failures, in the failure output. */
const bad = (i: number): boolean => i % 500 === 7;
const badCount = Array.from({ length: n }, (_, i) => i).filter(bad).length;

function input(dir: string): void {
  const lines = Array.from({ length: n }, (_, i) =>
    bad(i) ? `{"put": "id:ns:music::r${i}", "fields": {` : JSON.stringify({ put: `id:ns:music::r${i}`, fields: { i } }),
  );
  writeFileSync(join(dir, 'in.jsonl'), `${lines.join('\n')}\n`);
}

/** The last progress line (the final draw of a run that ended). */
function lastProgress(stderr: string): string {
  return (
    stderr
      .split('\n')
      .filter((l) => l.startsWith('feed '))
      .at(-1) ?? ''
  );
}

const figure = (text: string): number => Number(text.replace(/,/g, ''));

/** The feed run with Ctrl-C once its progress line shows a thousand or more ok. */
function interrupted(command: string[], cwd: string, env: NodeJS.ProcessEnv): ReturnType<typeof runCli> {
  return runCli(command, { cwd, env, stopWith: 'SIGINT', stopWhen: (stderr) => /ok [1-9],\d{3}/.test(stderr) });
}

describe('vespa-bulk feed: a resumed feed counts the whole feed', () => {
  const { server, dir } = useFeedFixtures();

  for (const { workers, protocol } of alternateProtocols([{ workers: 1 }, { workers: 2 }])) {
    it(`over ${protocol} with ${workers} worker(s): stopped, resumed, run again finished: each summary adds up to the input`, async () => {
      const s = await server({ maxOpsPerSecond: 3000 });
      const d = dir();
      const env = { VESPA_CLI_HOME: join(d, 'vespa-home') };
      input(d);
      const command = [
        'feed',
        '-t',
        s.url,
        ...protocolFlag(protocol),
        '--workers',
        String(workers),
        '--progress',
        '0.2',
        '--checkpoint',
        'ck.json',
        '--failures',
        'f.jsonl',
        'in.jsonl',
      ];
      const first = await interrupted(command, d, env);
      expect(first.code, first.stderr).toBe(130);
      const s1 = JSON.parse(first.stdout);
      expectSpoke(s1, protocol);
      expect(s1['feeder.ok.count']).toBeLessThan(n - badCount);
      // A first run has nothing beside its own figures.
      expect(s1['feeder.run.ok.count']).toBeUndefined();
      const saved = JSON.parse(readFileSync(join(d, 'ck.json'), 'utf8'));
      expect(saved.counts).toMatchObject({ ok: s1['feeder.ok.count'], errors: s1['feeder.error.count'] });

      const second = await runCli(command, { cwd: d, env });
      // The unreadable lines failed (in the first run or this one): exit 1.
      expect(second.code, second.stderr).toBe(1);
      expect(second.stderr).toContain(
        `resumed from ck.json at in.jsonl line ${saved.position.line}: ${(s1['feeder.ok.count'] + s1['feeder.error.count']).toLocaleString('en-US')} operations done before: ok ${s1['feeder.ok.count'].toLocaleString('en-US')}, failed ${s1['feeder.error.count']}`,
      );
      const s2 = JSON.parse(second.stdout);
      expectSpoke(s2, protocol);
      // The whole feed: every input operation once, succeeded or failed.
      expect(s2['feeder.operation.count']).toBe(n);
      expect(s2['feeder.ok.count']).toBe(n - badCount);
      expect(s2['feeder.error.count']).toBe(badCount);
      expect(s2['feeder.parse.error.count']).toBe(badCount);
      expect(s2['feeder.skipped.count']).toBe(0);
      // This run's beside: what the first had not finished.
      expect(s2['feeder.ok.count']).toBe(s1['feeder.ok.count'] + s2['feeder.run.ok.count']);
      expect(s2['feeder.error.count']).toBe(s1['feeder.error.count'] + s2['feeder.run.error.count']);
      expect(s2['feeder.run.operation.count']).toBe(n - s1['feeder.ok.count'] - s1['feeder.error.count']);
      expect(s2['feeder.seconds']).toBeGreaterThanOrEqual(s2['feeder.run.seconds']);
      expect(s2['feeder.earlier.counts']).toBeUndefined();
      // The failure output continued: each unreadable line once.
      expect(failureLines(join(d, 'f.jsonl'))).toHaveLength(badCount);
      expect(second.stderr).toContain(`${badCount} operations failed: written to f.jsonl`);
      expect(storeMap(s).size).toBe(n - badCount);
      // The progress counts the whole too, and this run's part.
      const line = lastProgress(second.stderr);
      expect(line).toMatch(/^feed done /);
      expect(line).toMatch(/\b100\.0% of /);
      expect(line).toContain(` ${n.toLocaleString('en-US')} ops `);
      expect(figure(/this run ([\d,]+)/.exec(line)?.[1] ?? 'x')).toBe(s2['feeder.run.operation.count']);
      expect(line).toContain(`ok ${(n - badCount).toLocaleString('en-US')}`);
      expect(line).toContain(`failed ${badCount}`);

      // Finished: run again, the whole feed is done and nothing is sent.
      const stored = s.store.size();
      const third = await runCli(command, { cwd: d, env });
      expect(third.code, third.stderr).toBe(1);
      expect(third.stderr).toContain(
        `resumed from ck.json: finished, nothing left to feed (${n.toLocaleString('en-US')} operations done before: ok ${(n - badCount).toLocaleString('en-US')}, failed ${badCount})`,
      );
      const s3 = JSON.parse(third.stdout);
      expect(s3['feeder.operation.count']).toBe(n);
      expect(s3['feeder.ok.count']).toBe(n - badCount);
      expect(s3['feeder.error.count']).toBe(badCount);
      expect([s3['feeder.run.operation.count'], s3['feeder.run.ok.count'], s3['feeder.run.error.count']]).toEqual([
        0, 0, 0,
      ]);
      expect(s3['http.request.count']).toBe(0);
      const again = lastProgress(third.stderr);
      const kB = formatCount(readFileSync(join(d, 'in.jsonl')).length / 1e3);
      expect(again).toMatch(/^feed done /);
      // Not "0.0% of 0.0/292 kB": the input is read whole, by the runs before.
      expect(again).toContain(`100.0% of ${kB}/${kB} kB`);
      expect(again).toContain(` ${n.toLocaleString('en-US')} ops  this run 0 `);
      expect(s.store.size()).toBe(stored);
      expect(failureLines(join(d, 'f.jsonl'))).toHaveLength(badCount);
    }, 60_000);
  }

  it('a checkpoint without counts (an earlier vespa-bulk) says the earlier counts are unknown, and counts only this run', async () => {
    const s = await server({ maxOpsPerSecond: 3000 });
    const d = dir();
    const env = { VESPA_CLI_HOME: join(d, 'vespa-home') };
    input(d);
    const command = ['feed', '-t', s.url, '--progress', '0.2', '--checkpoint', 'ck.json', 'in.jsonl'];
    const first = await interrupted(command, d, env);
    expect(first.code, first.stderr).toBe(130);
    const saved = JSON.parse(readFileSync(join(d, 'ck.json'), 'utf8'));
    delete saved.counts;
    writeFileSync(join(d, 'ck.json'), JSON.stringify(saved));

    const second = await runCli(command, { cwd: d, env });
    expect(second.code, second.stderr).toBe(1);
    expect(second.stderr).toContain('earlier counts unknown');
    const s2 = JSON.parse(second.stdout);
    expect(s2['feeder.earlier.counts']).toBe('unknown');
    // No invented whole: the figures are this run's.
    expect(s2['feeder.ok.count']).toBe(s2['feeder.run.ok.count']);
    expect(s2['feeder.operation.count']).toBe(s2['feeder.run.operation.count']);
    expect(s2['feeder.ok.count']).toBeLessThan(n - badCount);
    expect(storeMap(s).size).toBe(n - badCount);
    // The checkpoint it leaves does not make them up either.
    expect(JSON.parse(readFileSync(join(d, 'ck.json'), 'utf8')).counts).toBeUndefined();
  }, 60_000);

  it('the operations a transform dropped are on the progress line, and a finished feed run again counts them', async () => {
    const s = await server();
    const d = dir();
    const env = { VESPA_CLI_HOME: join(d, 'vespa-home') };
    const m = 300;
    writeFileSync(
      join(d, 'in.jsonl'),
      `${Array.from({ length: m }, (_, i) => JSON.stringify({ put: `id:ns:music::t${i}`, fields: { i } })).join('\n')}\n`,
    );
    writeFileSync(join(d, 'drop.mjs'), 'export default (op) => (op.fields.i % 10 === 0 ? null : op);\n');
    const command = ['feed', '-t', s.url, '--transform', 'drop.mjs', '--checkpoint', 'ck.json', 'in.jsonl'];
    const first = await runCli(command, { cwd: d, env });
    expect(first.code, first.stderr).toBe(0);
    const s1 = JSON.parse(first.stdout);
    expect([s1['feeder.ok.count'], s1['feeder.transform.dropped.count']]).toEqual([m - m / 10, m / 10]);
    expect(lastProgress(first.stderr)).toMatch(/^feed done .*\bok 270\b.*\bdropped 30\b/);

    const again = await runCli(command, { cwd: d, env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('nothing left to feed (270 operations done before: ok 270, failed 0, dropped 30)');
    const s2 = JSON.parse(again.stdout);
    expect([s2['feeder.ok.count'], s2['feeder.transform.dropped.count'], s2['feeder.run.operation.count']]).toEqual([
      m - m / 10,
      m / 10,
      0,
    ]);
    expect(lastProgress(again.stderr)).toMatch(/^feed done .*\b300 ops {2}this run 0\b.*\bok 270\b.*\bdropped 30\b/);
    expect(s.store.size()).toBe(m - m / 10);
  }, 30_000);
});
