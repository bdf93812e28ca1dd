import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resumeHint, shellWord } from '../../src/cli/resume-hint.js';
import { runCli, storeMap, writeJsonl, type Op } from '../faults/harness.js';
import { useFeedFixtures } from './helpers.js';

describe('vespa-bulk feed --resume: the target of the checkpoint', () => {
  const { server, dir } = useFeedFixtures();

  it('after Ctrl-C the printed command feeds the rest to the same target; another target is refused unless --resume-to-other-target', async () => {
    const a = await server({ maxOpsPerSecond: 3000 });
    const b = await server();
    const d = dir();
    // The official CLI's home, empty: no target of the user's own applies.
    const env = { VESPA_CLI_HOME: join(d, 'vespa-home') };
    const n = 6_000;
    const ops: Op[] = Array.from({ length: n }, (_, i) => ({ put: `id:ns:music::t${i}`, fields: { i } }));
    writeJsonl(join(d, 'in.jsonl'), ops);
    const first = await runCli(['feed', '-t', a.url, '--progress', '0.2', '--checkpoint', 'cp.json', 'in.jsonl'], {
      cwd: d,
      env,
      stopWith: 'SIGINT',
      stopWhen: (stderr) => /ok [1-9],\d{3}/.test(stderr),
    });
    expect(first.code).toBe(130);
    const hint = /continue with: (.+)$/m.exec(first.stderr)?.[1];
    expect(hint).toBe('vespa-bulk feed --resume cp.json');
    expect(JSON.parse(readFileSync(join(d, 'cp.json'), 'utf8')).endpoint).toBe(a.url);
    const onA = a.store.size();
    expect(onA).toBeLessThan(n);
    copyFileSync(join(d, 'cp.json'), join(d, 'elsewhere.json'));

    const refused = await runCli(['feed', '-t', b.url, '--resume', 'cp.json'], { cwd: d, env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`checkpoint 'cp.json' was written by a feed to ${a.url}, not ${b.url} (--target)`);
    expect(refused.stderr).toContain('--resume-to-other-target');
    // A target from the official CLI's config file is a target given, too.
    mkdirSync(join(d, '.vespa'));
    writeFileSync(join(d, '.vespa', 'config.yaml'), `target: ${b.url}\n`);
    const fromConfig = await runCli(['feed', '--resume', 'cp.json'], { cwd: d, env });
    expect(fromConfig.code).toBe(2);
    expect(fromConfig.stderr).toMatch(new RegExp(`${b.url} is from .*config\\.yaml`));
    expect(b.store.size()).toBe(0);
    expect(a.store.size()).toBe(onA);

    const moved = await runCli(['feed', '-q', '--resume', 'elsewhere.json', '--resume-to-other-target'], {
      cwd: d,
      env,
    });
    expect(moved.code).toBe(0);
    expect(b.store.size()).toBeGreaterThan(0);
    expect(b.store.size()).toBeLessThanOrEqual(n);
    expect(a.store.size()).toBe(onA);

    // The printed command, as printed, with no target anywhere: the checkpoint's.
    writeFileSync(join(d, '.vespa', 'config.yaml'), '');
    const resumed = await runCli(hint!.split(' ').slice(1), { cwd: d, env });
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toContain(`target ${a.url} (from checkpoint 'cp.json')`);
    // It says it continues, and its progress counts the whole feed, not only this run's part.
    expect(resumed.stderr).toMatch(/resumed from cp\.json at in\.jsonl line \d+: [\d,]+ operations done before/);
    expect(resumed.stderr).toMatch(/^feed done \S+ .*\b6,000 ops\b/m);
    expect(storeMap(a).size).toBe(n);
  }, 180_000);

  it('takes the settings that change what is sent from the checkpoint, and refuses one given otherwise (exit 2)', async () => {
    const a = await server({ maxOpsPerSecond: 3000 });
    const d = dir();
    const env = { VESPA_CLI_HOME: join(d, 'vespa-home') };
    const n = 6_000;
    writeFileSync(join(d, 'in.csv'), `sku,i\n${Array.from({ length: n }, (_, i) => `p${i},${i}`).join('\n')}\n`);
    const table = ['--id', 'id:shop:product::{sku}', '--operation', 'update', '--create'];
    const first = await runCli(
      ['feed', '-t', a.url, '--progress', '0.2', '--checkpoint', 'cp.json', ...table, 'in.csv'],
      {
        cwd: d,
        env,
        stopWith: 'SIGINT',
        stopWhen: (stderr) => /ok [1-9],\d{3}/.test(stderr),
      },
    );
    expect(first.code).toBe(130);
    expect(JSON.parse(readFileSync(join(d, 'cp.json'), 'utf8')).options).toEqual({
      rows: { id: 'id:shop:product::{sku}', operation: 'update', create: true },
    });

    const other = await runCli(['feed', '--resume', 'cp.json', '--operation', 'put'], { cwd: d, env });
    expect(other.code).toBe(2);
    expect(other.stderr).toContain(
      "checkpoint 'cp.json' was written with --operation update, not with --operation put",
    );
    const dry = await runCli(['feed', '--resume', 'cp.json', '--dry-run'], { cwd: d, env });
    expect(dry.code).toBe(2);
    expect(dry.stderr).toContain('written without --dry-run, not with --dry-run');

    // The last row is fed after the stop: as an update it keeps this field, as a put it would not.
    a.store.put(`id:shop:product::p${n - 1}`, { kept: 1 });
    const resumed = await runCli(['feed', '-q', '--resume', 'cp.json'], { cwd: d, env });
    expect(resumed.code).toBe(0);
    const stored = storeMap(a);
    // Updates that create what is missing, as the feed began.
    expect(stored.size).toBe(n);
    expect(stored.get(`id:shop:product::p${n - 1}`)).toEqual({ kept: 1, i: String(n - 1) });
  }, 180_000);
});

describe('vespa-bulk feed without --checkpoint', () => {
  const { server, dir } = useFeedFixtures();

  it('removes what a killed run left beside its default checkpoint, and nothing else', async () => {
    const s = await server();
    const d = dir();
    writeJsonl(join(d, 'in.jsonl'), [{ put: 'id:ns:music::x', fields: {} }]);
    // Above the largest pid_max Linux allows: no process has it.
    const left = 'vespa-bulk-checkpoint-20200101T000000Z.json.4194305.1.tmp';
    const kept = [
      'vespa-bulk-checkpoint-20200101T000000Z.json',
      'mine.json.4194305.1.tmp',
      'vespa-bulk-checkpoint-20200101T000000Z.json.1.1.tmp',
    ];
    for (const name of [left, ...kept]) writeFileSync(join(d, name), 'x');
    const run = await runCli(['feed', '-q', '-t', s.url, 'in.jsonl'], { cwd: d });
    expect(run.code).toBe(0);
    expect(readdirSync(d).sort()).toEqual(['in.jsonl', ...kept].sort());
  });
});

describe('resumeHint', () => {
  it('is the command to run, naming what the checkpoint does not keep', () => {
    expect(resumeHint('cp.json', { flags: [], inputs: ['a.jsonl'] })).toBe('vespa-bulk feed --resume cp.json');
    expect(resumeHint('my cp.json', { flags: ['--token'], inputs: ['-', 'https://h/x.jsonl?sig=1'] })).toBe(
      "vespa-bulk feed --resume 'my cp.json', with --token again (a checkpoint keeps no credentials or headers); the same standard input; the input URLs again (a checkpoint keeps no query)",
    );
    expect(shellWord("it's")).toBe(`'it'\\''s'`);
  });
});
