import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/simulator.js';
import type { StatsLine, StatsPoint } from '../../src/report/stats-format.js';
import { runCommand } from '../support/run-command.js';
import { tempDir, type TempDir } from '../support/temp-dir.js';
import { writeDocs } from '../report/helpers.js';

// 20 ms of service, a short queue: the feed meets 429s, which the service sends at once, without its 20 ms.
let sim: Simulator;
let tmp: TempDir;
beforeAll(async () => {
  sim = await startSimulator({
    port: 0,
    configPort: false,
    faults: { maxOpsPerSecond: 1000, queueLimit: 4, latencyMs: 20 },
  });
  tmp = tempDir('vb-queue-reading-');
});
afterAll(async () => {
  await sim.close();
  tmp.cleanup();
});

describe("the feed's reading of the queue", () => {
  it('takes its shortest round trip from served answers, not from refusals that come at once', async () => {
    const docs = writeDocs(tmp.dir, 'docs.jsonl', 3000);
    const stats = join(tmp.dir, 'run.jsonl');
    const r = await runCommand(['feed', docs, '-t', sim.url, '--stats', stats, '-q']);
    expect(r.code, r.stderr).toBe(0);
    const lines = readFileSync(stats, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as StatsLine);
    const points = lines.filter((l): l is StatsPoint => l.type === 'point');
    expect(points.reduce((n, p) => n + (p.status['429'] ?? 0), 0)).toBeGreaterThan(0);
    const read = points.filter((p) => p.minRttMs !== undefined);
    expect(read.length).toBeGreaterThan(0);
    for (const p of read) expect(p.minRttMs).toBeGreaterThanOrEqual(19);
  });
});
