import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { simulatorForFile } from '../support/simulator-for-file.js';
import { decodeHistogram, emptyLatencyHistogram } from '../../src/report/histogram.js';
import type { RunParams, StatsLine, StatsPoint, SummaryLine } from '../../src/report/stats-format.js';
import { runCommand } from '../support/run-command.js';
import { writeDocs } from './helpers.js';

// A service slower than the feed, with a short queue, so that its adaptive limit moves; and 2 % of operations
// refused 429 whatever the load, so that the 429s are counted in every run (a client on a loaded machine that cannot
// reach the service's rate, or a limit that stops short of its queue, meets none of the queue's own).
const fixture = simulatorForFile(
  { maxOpsPerSecond: 2500, queueLimit: 24, latencyMs: 2, errorRate: 0.02, errorStatuses: [429] },
  'vb-stats-',
);

describe('feed --stats and --report', () => {
  it('writes a parameters line, one point per second whose histograms add up to every response, and a summary', async () => {
    const docs = writeDocs(fixture.tmp.dir, 'docs.jsonl', 6000);
    const stats = join(fixture.tmp.dir, 'run.jsonl');
    const report = join(fixture.tmp.dir, 'run.html');
    const r = await runCommand([
      'feed',
      docs,
      '-t',
      fixture.sim.url,
      '--stats',
      stats,
      '--report',
      report,
      '--token',
      'sekrit-token-123',
      '--header',
      'X-Api-Key: other-secret-456',
      '-q',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const text = readFileSync(stats, 'utf8');
    // No secret reaches the file, in any line.
    expect(text).not.toContain('sekrit-token-123');
    expect(text).not.toContain('other-secret-456');
    const lines = text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as StatsLine);
    const params = lines[0] as RunParams;
    expect(params).toMatchObject({ type: 'run', format: 1, command: 'feed', target: fixture.sim.url });
    expect(params.flags.token).toBe('***');
    expect(params.flags.header).toEqual(['X-Api-Key: ***']);
    // What was given, not every default.
    expect(params.flags).toMatchObject({ stats, report, quiet: true });
    for (const defaulted of [
      'speedtest-duration',
      'protocol',
      'metrics-host',
      'color',
      'max-failure-seconds',
      'deadline',
    ])
      expect(params.flags, defaulted).not.toHaveProperty(defaulted);
    expect(params.tool).toMatch(/^vespa-bulk \d+\.\d+\.\d+/);
    const summary = lines.at(-1) as SummaryLine;
    expect(summary.type).toBe('summary');
    const points = lines.filter((l): l is StatsPoint => l.type === 'point');
    expect(points.length).toBe(lines.length - 2);
    // One point per wall-clock second, none skipped, none repeated.
    for (let i = 1; i < points.length; i++) expect(points[i].t).toBe(points[i - 1].t + 1);
    for (const p of points.slice(1, -1)) expect(p.dt).toBeGreaterThan(0.5);
    const s = summary.summary;
    const merged = emptyLatencyHistogram();
    let counted = 0;
    for (const p of points) {
      if (p.histogram === '') continue;
      const h = decodeHistogram(p.histogram);
      counted += h.totalCount;
      merged.add(h);
    }
    const sum = (f: (p: StatsPoint) => number) => points.reduce((n, p) => n + f(p), 0);
    expect(merged.totalCount).toBe(counted);
    expect(counted).toBe(s['http.response.count']);
    expect(decodeHistogram(summary.histogram).totalCount).toBe(s['http.response.count']);
    expect(sum((p) => p.ok)).toBe(6000);
    expect(sum((p) => p.ok)).toBe(s['feeder.ok.count']);
    expect(sum((p) => p.status['429'] ?? 0)).toBe(s['feeder.throttled.count']);
    expect(s['feeder.throttled.count']).toBeGreaterThan(0);
    expect(sum((p) => p.sentBytes)).toBe(s['http.request.bytes']);
    // The merge of the per-second histograms is the run's histogram: the same percentiles.
    expect(merged.getValueAtPercentile(99) / 1000).toBeCloseTo(s['http.response.latency.millis.p99'] as number, 2);
    // The adaptive limit's reading of the queue, once answers came: a round trip, and a share of the limit waiting.
    const read = points.filter((p) => p.minRttMs !== undefined);
    expect(read.length).toBeGreaterThan(0);
    for (const p of read) {
      expect(p.minRttMs).toBeGreaterThan(0);
      expect(p.queueEstimate).toBeGreaterThanOrEqual(0);
      expect(p.queueEstimate).toBeLessThanOrEqual(p.inflightLimit);
    }

    const html = readFileSync(report, 'utf8');
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href=|https?:\/\/cdn/i);
    expect(html).toContain('uPlot');
    expect(html).toContain('6,000');
    expect(html).toContain('waiting (estimate)');
    expect(html).toContain('shortest round trip');
    expect(html).not.toContain('sekrit-token-123');
  });

  it('refuses a stats file it cannot create, before feeding, as bad usage', async () => {
    const docs = writeDocs(fixture.tmp.dir, 'few.jsonl', 3, 'few');
    // A missing folder is made (as visit -o does); one that cannot be, because a file stands in its path, is refused.
    writeFileSync(join(fixture.tmp.dir, 'a-file'), '');
    const r = await runCommand([
      'feed',
      docs,
      '-t',
      fixture.sim.url,
      '--stats',
      join(fixture.tmp.dir, 'a-file/dir/run.jsonl'),
      '-q',
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--stats');
  });

  it('visit --stats records documents per second and the visit summary', async () => {
    const stats = join(fixture.tmp.dir, 'visit.jsonl');
    const r = await runCommand([
      'visit',
      'music/music',
      '-t',
      fixture.sim.url,
      '--stats',
      stats,
      '-o',
      join(fixture.tmp.dir, 'out.jsonl'),
      '-q',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const lines = readFileSync(stats, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as StatsLine);
    expect(lines[0]).toMatchObject({ type: 'run', command: 'visit' });
    const summary = lines.at(-1) as SummaryLine;
    const visited = summary.summary['visit.document.count'];
    expect(visited).toBeGreaterThan(0);
    expect(lines.filter((l): l is StatsPoint => l.type === 'point').reduce((n, p) => n + p.ok, 0)).toBe(visited);
  });
});
