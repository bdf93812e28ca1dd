import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, storeMap } from '../faults/harness.js';
import { useFeedFixtures } from './helpers.js';

/** A finished checkpoint run again: nothing left, or an input that grew since, which is said (exit 2) and fed on request. */

const line = (id: string): string =>
  JSON.stringify({ update: `id:ns:music::${id}`, create: true, fields: { n: { increment: 1 } } });

describe('vespa-bulk feed: a finished checkpoint whose input grew', () => {
  const { server, dir } = useFeedFixtures();

  it('a finished feed whose input grew says so (exit 2); --resume-changed feeds exactly what was added', async () => {
    const a = await server();
    const d = dir();
    const env = { VESPA_CLI_HOME: join(d, 'vespa-home') };
    const m = 500;
    writeFileSync(join(d, 'in.jsonl'), `${Array.from({ length: m }, (_, i) => line(`k${i}`)).join('\n')}\n`);
    const command = ['feed', '-t', a.url, '--checkpoint', 'm2.ckpt', 'in.jsonl'];
    const done = await runCli(command, { cwd: d, env });
    expect(done.code, done.stderr).toBe(0);
    expect(a.store.size()).toBe(m);
    writeFileSync(join(d, 'in.jsonl'), `${line('late-1')}\n${line('late-2')}\n`, { flag: 'a' });

    const again = await runCli(command, { cwd: d, env });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(
      "checkpoint 'm2.ckpt' is of a finished feed, and its input grew since: input in.jsonl: ",
    );
    expect(again.stderr).toContain('The new operations were never sent');
    expect(again.stderr).toContain('--resume-changed');
    expect(again.stderr).toContain('add --restart, or remove m2.ckpt');
    expect(again.stdout).toBe('');
    expect(a.store.size()).toBe(m);

    // With workers too: the operations before the old end are skipped, the two added ones sent once.
    const added = await runCli([...command, '--resume-changed', '--workers', '2'], { cwd: d, env });
    expect(added.code, added.stderr).toBe(0);
    expect(added.stderr).toContain('feeding what was added since: in.jsonl from byte');
    // This run fed the two; the whole feed, the runs before included, is m + 2.
    expect(JSON.parse(added.stdout)['feeder.run.ok.count']).toBe(2);
    expect(JSON.parse(added.stdout)['feeder.ok.count']).toBe(m + 2);
    expect(a.store.size()).toBe(m + 2);
    for (const fields of storeMap(a).values()) expect(fields.n).toBe(1);

    const nothing = await runCli(command, { cwd: d, env });
    expect(nothing.code, nothing.stderr).toBe(0);
    expect(nothing.stderr).toContain('resumed from m2.ckpt: finished, nothing left to feed');
    expect(a.store.size()).toBe(m + 2);
  }, 40_000);

  it('a resume from standard input says that it cannot be checked', async () => {
    const a = await server();
    const d = dir();
    const env = { VESPA_CLI_HOME: join(d, 'vespa-home') };
    writeFileSync(
      join(d, 'cp.json'),
      JSON.stringify({
        version: 2,
        inputs: ['-'],
        endpoint: a.url,
        position: { input: 0, offset: 0, line: 1 },
        written: new Date().toISOString(),
        reason: 'interrupted',
        ok: 0,
        errors: 0,
        identity: [{ kind: 'none', what: 'stdin' }],
      }),
    );
    const run = await runCli(['feed', '--resume', 'cp.json', '-'], { cwd: d, env });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('note: standard input cannot be checked against the checkpoint');
  }, 20_000);

  it('a feed of what was added, stopped and resumed, sends the old part of a later input no more', async () => {
    const a = await server({ maxOpsPerSecond: 3000 });
    const d = dir();
    const env = { VESPA_CLI_HOME: join(d, 'vespa-home') };
    const block = (prefix: string, count: number): string =>
      Array.from({ length: count }, (_, i) => `${line(`${prefix}${i}`)}\n`).join('');
    writeFileSync(join(d, 'a.jsonl'), block('a', 100));
    writeFileSync(join(d, 'b.jsonl'), block('b', 100));
    const command = ['feed', '-t', a.url, '--progress', '0.2', '--checkpoint', 'ck.json', 'a.jsonl', 'b.jsonl'];
    expect((await runCli(command, { cwd: d, env })).code).toBe(0);
    writeFileSync(join(d, 'a.jsonl'), block('a-late', 6000), { flag: 'a' });
    writeFileSync(join(d, 'b.jsonl'), block('b-late', 10), { flag: 'a' });
    const stopped = await runCli([...command, '--resume-changed'], {
      cwd: d,
      env,
      stopWith: 'SIGINT',
      stopWhen: (stderr) => /ok [1-9],\d{3}/.test(stderr),
    });
    expect(stopped.code, stopped.stderr).toBe(130);
    expect(a.store.size()).toBeLessThan(200 + 6010);
    const rest = await runCli(command, { cwd: d, env });
    expect(rest.code, rest.stderr).toBe(0);
    expect(a.store.size()).toBe(200 + 6010);
    for (const [id, fields] of storeMap(a)) expect(fields.n, id).toBe(1);
  }, 40_000);
});
