import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { simulatorForFile } from '../support/simulator-for-file.js';
import { Feeder } from '../../src/feed/feeder.js';
import { decodeHistogram } from '../../src/report/histogram.js';
import { mergeRuns } from '../../src/report/merge.js';
import { startMetricsServer } from '../../src/report/metrics-server.js';
import { feedSampler } from '../../src/report/sample.js';
import { readStatsFile } from '../../src/report/stats-file.js';
import { runCommand } from '../support/run-command.js';
import { recordFeed, writeDocs } from './helpers.js';

const fixture = simulatorForFile({ maxOpsPerSecond: 2000, queueLimit: 24, latencyMs: 2 }, 'vb-merge-');

describe('report of several shards', () => {
  it('adds the shards second by second, merges their histograms exactly and adds their summaries', async () => {
    const a = join(fixture.tmp.dir, 'a.jsonl');
    const b = join(fixture.tmp.dir, 'b.jsonl');
    // Two machines' shards of one run, side by side against one cluster.
    await Promise.all([
      recordFeed(fixture.sim.url, writeDocs(fixture.tmp.dir, 'a-docs.jsonl', 2500, 'a'), a, { host: 'machine-a' }),
      recordFeed(fixture.sim.url, writeDocs(fixture.tmp.dir, 'b-docs.jsonl', 1500, 'b'), b, { host: 'machine-b' }),
    ]);
    const shards = [readStatsFile(a), readStatsFile(b)];
    const merged = mergeRuns(shards);
    const s = merged.summary!.summary;
    const sumOf = (key: string) => shards.reduce((n, r) => n + (r.summary!.summary[key] as number), 0);
    expect(s['feeder.ok.count']).toBe(4000);
    expect(s['http.response.count']).toBe(sumOf('http.response.count'));
    expect((s['http.response.code.counts'] as Record<string, number>)['200']).toBe(4000);
    expect(s['feeder.ok.rate']).toBeCloseTo(4000 / merged.summary!.seconds, 0);
    // The answers' latency per status: counts added, min and max kept, no percentile made up without its histogram.
    const byCode = (r: { summary?: { summary: Record<string, unknown> } }) =>
      (r.summary!.summary['http.response.latency.millis.by.code'] as Record<string, Record<string, number>>)['200'];
    expect(byCode(merged)).toEqual({
      count: 4000,
      min: Math.min(...shards.map((r) => byCode(r).min)),
      avg: expect.any(Number),
      max: Math.max(...shards.map((r) => byCode(r).max)),
    });
    // Points: every shard's second appears once, and the counts of the merged points are the shards' counts.
    const seconds = new Set(shards.flatMap((r) => r.points.map((p) => p.t)));
    expect(merged.points.map((p) => p.t)).toEqual([...seconds].sort((x, y) => x - y));
    expect(merged.points.reduce((n, p) => n + p.ok, 0)).toBe(4000);
    const histogramTotal = merged.points.reduce(
      (n, p) => n + (p.histogram === '' ? 0 : decodeHistogram(p.histogram).totalCount),
      0,
    );
    expect(histogramTotal).toBe(s['http.response.count']);
    expect(decodeHistogram(merged.summary!.histogram).totalCount).toBe(s['http.response.count']);
    expect(merged.params.map((p) => p.host)).toEqual(['machine-a', 'machine-b']);

    const out = join(fixture.tmp.dir, 'r.html');
    const r = await runCommand(['report', a, b, '-o', out]);
    expect(r.code, r.stderr).toBe(0);
    const html = readFileSync(out, 'utf8');
    expect(html).toContain('2 shards merged');
    expect(html).toContain('4,000');
    expect(html).toContain('machine-a');
    expect(html).toContain('machine-b');
  });

  it('names the line of a stats file that is not one', async () => {
    const bad = join(fixture.tmp.dir, 'bad.jsonl');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(bad, '{"type":"run","format":1}\n{"type":"nonsense"}\n{}\n');
    const r = await runCommand(['report', bad, '-o', join(fixture.tmp.dir, 'bad.html')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${bad}:2`);
  });
});

describe('metrics endpoint', () => {
  it('answers with the running counters and the latency histogram while a feed runs', async () => {
    const docs = writeDocs(fixture.tmp.dir, 'm-docs.jsonl', 5000, 'm');
    const feeder = new Feeder({ endpoint: fixture.sim.url });
    const metrics = await startMetricsServer({ port: 0, sample: feedSampler(feeder) });
    try {
      const running = feeder.run(docs);
      // Scrape until operations are counted, as Prometheus would every few seconds.
      let text = '';
      for (let i = 0; i < 100 && !/vespa_bulk_operations_total\{result="ok"\} [1-9]/.test(text); i++) {
        await new Promise((r) => setTimeout(r, 50));
        text = await (await fetch(metrics.url)).text();
      }
      const value = (line: string) =>
        Number(new RegExp(`^${line.replace(/[{}"+.]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1]);
      expect(value('vespa_bulk_operations_total{result="ok"}')).toBeGreaterThan(0);
      expect(value('vespa_bulk_inflight_limit')).toBeGreaterThan(0);
      expect(text).toMatch(/^# TYPE vespa_bulk_operation_latency_seconds histogram$/m);
      const count = value('vespa_bulk_operation_latency_seconds_count');
      expect(count).toBeGreaterThan(0);
      expect(value('vespa_bulk_operation_latency_seconds_bucket{le="+Inf"}')).toBe(count);
      expect(value('vespa_bulk_responses_total{status="200"}')).toBeGreaterThan(0);
      const outcome = await running;
      const final = await (await fetch(metrics.url)).text();
      expect(final).toContain(`vespa_bulk_operations_total{result="ok"} ${outcome.summary.ok}`);
      expect(final).toContain(`vespa_bulk_operation_latency_seconds_count ${outcome.summary.responses}`);
      expect((await fetch(metrics.url.replace('/metrics', '/other'))).status).toBe(404);
    } finally {
      await metrics.close();
    }
  });
});
