import { afterEach, describe, expect, it, vi } from 'vitest';
import { runInProcess } from '../support/in-process-cli.js';

/**
 * `feed --help` puts what nearly every feed names first (its files, the target, the checkpoint and the failure
 * output), groups the rest, and shows examples; no flag is left out by the grouping.
 */

/** Every flag `feed --help` listed before it was grouped. */
const flags = [
  'app application ca cert checkpoint color compression config-url connections container-cluster create',
  'document-type dry-run failures header help http2 id id-field inflight input-format instance key',
  'max-failure-seconds max-request-bytes max-retries max-streams metrics-host metrics-port namespace operation',
  'pipelining progress protocol proxy proxy-ca quiet report restart resume resume-changed resume-to-other-target',
  'route shard shuffle shuffle-buffer speedtest speedtest-duration stats target timeout timestamp-unit token trace',
  'transform verbose version wait workers zone',
]
  .join(' ')
  .split(' ');

const columns = Object.getOwnPropertyDescriptor(process.stderr, 'columns');
afterEach(() => {
  if (columns === undefined) delete (process.stderr as { columns?: number }).columns;
  else Object.defineProperty(process.stderr, 'columns', columns);
});

describe('vespa-bulk feed --help', () => {
  it('groups the flags, the common ones first, keeps every flag, and shows examples', async () => {
    Object.defineProperty(process.stderr, 'columns', { value: 100, configurable: true, writable: true });
    // yargs prints its help with console.log.
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    const run = await runInProcess(['feed', '--help']);
    const printed = log.mock.calls.map((args) => `${args.join(' ')}\n`).join('');
    log.mockRestore();
    expect(run.code).toBe(0);
    const help = { stdout: printed };
    const lines = help.stdout.split('\n');
    const at = (pattern: RegExp): number => lines.findIndex((l) => pattern.test(l));
    const groups = lines.filter((l) => /^[A-Z][^:]*:$/.test(l) || l.startsWith('Tables ('));
    expect(groups.slice(0, 7)).toEqual([
      'Positionals:',
      'Target:',
      'Failures & resume:',
      'Input:',
      'Throughput:',
      'Connection:',
      'Output:',
    ]);
    expect(groups.at(-2)).toBe('Options:');
    expect(groups.at(-1)).toBe('Examples:');
    // Near the top, not at line 121.
    expect(at(/^\s+--checkpoint\s/)).toBeLessThan(30);
    expect(at(/^\s+--failures\s/)).toBeLessThan(35);
    const listed = new Set([...help.stdout.matchAll(/^\s+(?:-\w, )?--([\w-]+)/gm)].map((m) => m[1]));
    for (const flag of flags) expect(listed, `--${flag}`).toContain(flag);
    // Each flag once: a flag in two groups would be listed twice.
    const all = [...help.stdout.matchAll(/^\s+(?:-\w, )?--([\w-]+)/gm)].map((m) => m[1]);
    expect(all.length).toBe(new Set(all).size);
    const examples = lines.slice(at(/^Examples:$/));
    for (const example of [
      'vespa-bulk feed docs.jsonl -t local',
      'vespa-bulk feed docs.jsonl.gz --checkpoint ck.json',
      'vespa-bulk feed docs.jsonl --failures failed.jsonl',
      'vespa-bulk feed -',
    ])
      expect(examples.join('\n')).toContain(example);
  });
});
