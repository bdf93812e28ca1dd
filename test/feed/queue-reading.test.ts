import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/simulator.js';
import { tempDir, type TempDir } from '../support/temp-dir.js';
import { recordFeed, writeDocs } from '../report/helpers.js';

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
    const { points, summary } = await recordFeed(sim.url, docs, join(tmp.dir, 'run.jsonl'));
    expect(summary?.summary['feeder.ok.count']).toBe(3000);
    expect(points.reduce((n, p) => n + (p.status['429'] ?? 0), 0)).toBeGreaterThan(0);
    const read = points.filter((p) => p.minRttMs !== undefined);
    expect(read.length).toBeGreaterThan(0);
    for (const p of read) expect(p.minRttMs).toBeGreaterThanOrEqual(19);
  });
});
