import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/simulator.js';
import { deploy } from '../../src/deploy/deploy.js';
import { runInProcess } from '../support/in-process-cli.js';

const sampleApp = resolve('samples/app');

/** The words of a printed command line, as a POSIX shell splits them (single quotes only, as the note writes). */
function words(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]);
}

describe('bench says where its documents stay and how to delete them', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0, configPort: 0 });
    await deploy({ configUrl: sim.configUrl! }, sampleApp, { waitSeconds: 30 });
  });
  afterAll(() => sim.close());

  it('names the documents left and a delete-where per type that removes this run’s, and nothing else', async () => {
    // A document of the user's own in the namespace the bench writes to: the printed command must leave it.
    sim.documents.store.seed([{ id: 'id:bench:music::mine', fields: { title: 'kept' } }]);
    const r = await runInProcess(['bench', '--app', sampleApp, '--count', '300', '-t', sim.url, '--seed', '3']);
    expect(r.code, r.stderr).toBe(0);
    expect(sim.documents.store.size()).toBe(301);
    expect(JSON.parse(r.stdout).written.places.length).toBeGreaterThan(0);
    expect(r.stderr).toMatch(/the documents this bench wrote stay in the cluster \(ids id:bench:\w+::\w+-<n>/);
    const commands = r.stderr
      .split('\n')
      .filter((l) => l.startsWith('  vespa-bulk delete-where '))
      .map((l) => words(l.trim()).slice(1));
    expect(commands.length).toBeGreaterThan(0);
    for (const args of commands) {
      const d = await runInProcess([...args, '--quiet']);
      expect(d.code, d.stderr).toBe(0);
    }
    expect(sim.documents.store.all().map((d) => d.id)).toEqual(['id:bench:music::mine']);
  });

  it('a dry run wrote nothing and says nothing of it', async () => {
    const r = await runInProcess(['bench', '--app', sampleApp, '--count', '50', '--dry-run', '-t', sim.url]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('stay in the cluster');
    expect(JSON.parse(r.stdout).written).toBeUndefined();
  });
});
