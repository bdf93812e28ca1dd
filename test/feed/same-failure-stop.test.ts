import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/simulator.js';
import { readFeedCheckpoint } from '../../src/feed/feed-checkpoint.js';
import { deployPackage } from '../deploy/fixtures.js';
import { failureLines, failureReasons, runCli, writeJsonl } from '../faults/harness.js';
import { kindsPackage } from '../schema/fixtures.js';
import { tempDir } from './helpers.js';

const dirs: Array<() => void> = [];
const newDir = (): string => {
  const t = tempDir();
  dirs.push(t.cleanup);
  return t.dir;
};

const N = 2000;
const ops = (type: string) => Array.from({ length: N }, (_, i) => ({ put: `id:ns:${type}::d${i}`, fields: {} }));

describe('a feed that fails every operation alike, through the CLI', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0, configPort: 0 });
    await deployPackage(sim.configUrl!, kindsPackage());
  });
  afterAll(async () => {
    await sim.close();
    for (const c of dirs) c();
  });

  for (const protocol of ['h2', 'http1.1'] as const) {
    it(`stops after 100 identical 400s for an unknown document type, with the reason and a hint, the rest in the checkpoint (${protocol})`, async () => {
      const d = newDir();
      writeJsonl(join(d, 'in.jsonl'), ops('nosuchtype'));
      const run = await runCli(
        ['feed', '-t', sim.url, '--protocol', protocol, '--failures', 'f.jsonl', '--checkpoint', 'ck.json', 'in.jsonl'],
        { cwd: d },
      );
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(
        'the first 100 operations all failed alike, none succeeded: 400 Document type nosuchtype does not exist',
      );
      expect(run.stderr).toContain('Hint: the document type in the ids is not one');
      expect(run.stderr).toContain('continue with:');
      const failed = failureLines(join(d, 'f.jsonl'));
      // The stop takes the ones already on the wire with it: their answers come back, the rest are never sent.
      expect(failed.length).toBeGreaterThanOrEqual(100);
      expect(failed.length).toBeLessThan(N);
      expect(new Set(failureReasons(join(d, 'f.jsonl')).map((r) => r.status))).toEqual(new Set([400]));
      const summary = JSON.parse(run.stdout) as Record<string, number>;
      expect(summary['feeder.ok.count']).toBe(0);
      expect(summary['feeder.error.count']).toBe(failed.length);
      // Every operation is exactly one of: in the failure output with its reason, or in the checkpoint to resume.
      const ck = await readFeedCheckpoint(join(d, 'ck.json'));
      const failedLines = failureReasons(join(d, 'f.jsonl')).map((r) => r.inputLine as number);
      const toResume = [
        ...(ck.unfinished ?? []).map(([, , line]) => line),
        ...Array.from({ length: N - ck.readTo!.line }, (_, k) => ck.readTo!.line + 1 + k),
      ];
      const all = [...failedLines, ...toResume].sort((a, b) => a - b);
      expect(all).toEqual(Array.from({ length: N }, (_, k) => k + 1));
    });
  }

  it('stops the same with --workers 2, every operation failed or in the checkpoint', async () => {
    const d = newDir();
    writeJsonl(join(d, 'in.jsonl'), ops('nosuchtype'));
    const run = await runCli(
      ['feed', '-t', sim.url, '--workers', '2', '--failures', 'f.jsonl', '--checkpoint', 'ck.json', 'in.jsonl'],
      { cwd: d },
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      'operations all failed alike, none succeeded: 400 Document type nosuchtype does not exist',
    );
    const ck = await readFeedCheckpoint(join(d, 'ck.json'));
    const failedLines = failureReasons(join(d, 'f.jsonl')).map((r) => r.inputLine as number);
    expect(failedLines.length).toBeLessThan(N);
    const toResume = [
      ...(ck.unfinished ?? []).map(([, , line]) => line),
      ...Array.from({ length: N - ck.readTo!.line }, (_, k) => ck.readTo!.line + 1 + k),
    ];
    expect([...failedLines, ...toResume].sort((a, b) => a - b)).toEqual(Array.from({ length: N }, (_, k) => k + 1));
  });

  it("says a 404 from the config server's port is the config server's, and stops", async () => {
    const d = newDir();
    writeJsonl(join(d, 'in.jsonl'), ops('kinds'));
    const run = await runCli(['feed', '-t', sim.configUrl!, '--failures', 'f.jsonl', 'in.jsonl'], { cwd: d });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('the first 100 operations all failed alike, none succeeded: 404');
    expect(run.stderr).toContain('this looks like the config server; the document API is on port 8080');
    const failed = failureLines(join(d, 'f.jsonl'));
    expect(failed.length).toBeLessThan(N);
    expect(sim.documents.store.all()).toHaveLength(0);
  });

  it('does not stop when some operations succeed', async () => {
    const d = newDir();
    const mixed = ops('nosuchtype').map((o, i) => (i % 50 === 49 ? { put: `id:ns:kinds::ok${i}`, fields: {} } : o));
    writeJsonl(join(d, 'in.jsonl'), mixed.slice(0, 600));
    const run = await runCli(['feed', '-t', sim.url, '--failures', 'f.jsonl', 'in.jsonl'], { cwd: d });
    expect(run.code).toBe(1);
    expect(run.stderr).not.toContain('feed stopped');
    const summary = JSON.parse(run.stdout) as Record<string, number>;
    expect(summary['feeder.ok.count'] + failureLines(join(d, 'f.jsonl')).length).toBe(600);
    expect(summary['feeder.ok.count']).toBe(12);
  });
});
