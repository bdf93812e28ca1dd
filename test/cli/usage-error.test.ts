import { describe, expect, it } from 'vitest';
import { unknownFlags } from '../../src/cli/usage-error.js';
import { closestName, editDistance } from '../../src/core/closest-name.js';
import { runInProcess } from '../support/in-process-cli.js';

/** A refused command line says what was wrong once, suggests the word meant, and points at the help of the command at hand. */
describe('usage errors', () => {
  it("a mistyped flag: its suggestion and the command's own help, exit 2", async () => {
    const run = await runInProcess(['feed', 'in.jsonl', '--chekpoint', 'a.json', '-c', 'never']);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      "vespa-bulk: unknown flag --chekpoint: did you mean --checkpoint?\nRun 'vespa-bulk feed --help' for its flags.\n",
    );
  });

  it('a flag of another tool is named once (not as both target-url and targetUrl)', async () => {
    const run = await runInProcess(['visit', 'ns/music', '--target-url', 'http://x', '-c', 'never']);
    expect(run.code).toBe(2);
    expect(run.stderr.match(/target-?url/gi)).toHaveLength(1);
    expect(run.stderr).toContain('did you mean --target?');
    expect(run.stderr).toContain("'vespa-bulk visit --help'");
  });

  it('several unknown flags in one line; a short one without a suggestion', async () => {
    const run = await runInProcess(['visit', 'ns/music', '--chekpoint', 'a', '--maxRetry', '3', '-Q', '-c', 'never']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      'unknown flags --chekpoint (did you mean --checkpoint?), --maxRetry (did you mean --max-retries?), -Q\n',
    );
  });

  it('a mistyped command and subcommand: the one meant, and the help at that level', async () => {
    const top = await runInProcess(['-c', 'never', 'fed', 'in.jsonl']);
    expect(top.code).toBe(2);
    expect(top.stderr).toBe(
      "vespa-bulk: unknown command 'fed': did you mean feed?\nRun 'vespa-bulk --help' for the commands.\n",
    );
    const sub = await runInProcess(['deploy', 'statsu', '-c', 'never']);
    expect(sub.code).toBe(2);
    expect(sub.stderr).toBe(
      "vespa-bulk: unknown command 'deploy statsu': did you mean deploy status?\nRun 'vespa-bulk deploy --help' for its commands.\n",
    );
    const flag = await runInProcess(['deploy', 'status', '--foo', '-c', 'never']);
    expect(flag.stderr).toContain("unknown flag --foo\nRun 'vespa-bulk deploy status --help' for its flags.");
  });

  it('unknownFlags: kebab and camel case alike, --no-x for x, -abc as letters, nothing after --', () => {
    const known = ['checkpoint', 'max-retries', 'maxRetries', 'quiet', 'q', 'stream', 't'];
    expect(unknownFlags(['--maxRetries', '3', '--no-stream', '-q', '--checkpoint=a', '--', '--nope'], known)).toEqual(
      [],
    );
    expect(unknownFlags(['--maxRetry', '--max-retry', '-xz', '-tvalue'], known)).toEqual(['maxRetry', 'x', 'z']);
  });

  it('closestName: a typo or a prefix, nothing for an unrelated word', () => {
    expect(editDistance('chekpoint', 'checkpoint')).toBe(1);
    expect(editDistance('fede', 'feed')).toBe(1);
    expect(closestName('chekpoint', ['checkpoint', 'continuation'])).toBe('checkpoint');
    expect(closestName('target-url', ['target', 'token'])).toBe('target');
    expect(closestName('banana', ['feed', 'visit', 'serve'])).toBeUndefined();
  });
});
