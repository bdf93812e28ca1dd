import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { simulatorForFile } from '../support/simulator-for-file.js';
import { recordFeed, writeDocs } from '../report/helpers.js';

// 20 ms of service, a short queue: the feed meets 429s, which the service sends at once, without its 20 ms.
const fixture = simulatorForFile({ maxOpsPerSecond: 1000, queueLimit: 4, latencyMs: 20 }, 'vb-queue-reading-');

describe("the feed's reading of the queue", () => {
  it('takes its shortest round trip from served answers, not from refusals that come at once', async () => {
    const docs = writeDocs(fixture.tmp.dir, 'docs.jsonl', 3000);
    const { points, summary } = await recordFeed(fixture.sim.url, docs, join(fixture.tmp.dir, 'run.jsonl'));
    expect(summary?.summary['feeder.ok.count']).toBe(3000);
    expect(points.reduce((n, p) => n + (p.status['429'] ?? 0), 0)).toBeGreaterThan(0);
    const read = points.filter((p) => p.minRttMs !== undefined);
    expect(read.length).toBeGreaterThan(0);
    for (const p of read) expect(p.minRttMs).toBeGreaterThanOrEqual(19);
  });
});
