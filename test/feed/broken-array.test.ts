import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { failureLines, failureReasons, runCli, storeMap } from '../faults/harness.js';
import { useFeedFixtures } from './helpers.js';

const N = 1500;
const BROKEN = 700; // index of the element whose closing braces are missing, on line 702 (line 1 is '[')
const element = (i: number): string =>
  JSON.stringify({ put: `id:ns:music::a${i}`, fields: { title: `t${i}`, year: i } });

/** A pretty array, one element a line, one of them cut short: the badarr.json. */
function badArray(path: string): void {
  const rows = Array.from({ length: N }, (_, i) =>
    i === BROKEN ? element(i).slice(0, -2) : `${element(i)}${i < N - 1 ? ',' : ''}`,
  );
  writeFileSync(path, `[\n${rows.join('\n')}\n]\n`);
}

describe('a JSON array with a broken element, through the CLI', () => {
  const { server, dir } = useFeedFixtures();

  it('fails that element alone, with its line and reason, and feeds every operation after it', async () => {
    const s = await server();
    const d = dir();
    badArray(join(d, 'badarr.json'));
    const run = await runCli(['feed', '-t', s.url, '--failures', 'f.jsonl', 'badarr.json'], { cwd: d });
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ 'feeder.ok.count': N - 1, 'feeder.error.count': 1 });
    expect(run.stderr).toContain(`badarr.json:${BROKEN + 2}: put id:ns:music::a${BROKEN}: invalid JSON`);
    expect(run.stderr).not.toContain('unterminated JSON array');
    // Every operation is exactly one of: in the store, or in the failure output with its reason.
    const stored = storeMap(s);
    expect(stored.size).toBe(N - 1);
    for (let i = 0; i < N; i++) expect(stored.has(`id:ns:music::a${i}`)).toBe(i !== BROKEN);
    expect(failureLines(join(d, 'f.jsonl'))).toEqual([element(BROKEN).slice(0, -2)]);
    expect(failureReasons(join(d, 'f.jsonl'))).toEqual([
      expect.objectContaining({
        inputLine: BROKEN + 2,
        code: 'VB_BAD_JSON',
        message: expect.stringContaining('invalid JSON'),
      }),
    ]);
  });

  it('counts the same in validate', async () => {
    const d = dir();
    badArray(join(d, 'badarr.json'));
    const run = await runCli(['validate', '--app', resolve('samples/app'), '--failures', 'v.jsonl', 'badarr.json'], {
      cwd: d,
    });
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/"validator\.ok\.count": 1499\b/);
    expect(failureLines(join(d, 'v.jsonl'))).toEqual([element(BROKEN).slice(0, -2)]);
  });
});
