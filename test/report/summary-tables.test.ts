import { describe, expect, it } from 'vitest';
import { exportSummaryJson, feedSummaryJson } from '../../src/cli/summary-names.js';
import { FeedStats } from '../../src/feed/stats.js';
import { renderReport } from '../../src/report/html.js';
import type { RecordedRun } from '../../src/report/stats-format.js';
import { isNamed } from '../../src/report/summary-table.js';
import type { ExportSummary } from '../../src/visit/export/export-options.js';

const runOf = (command: string, summary: Record<string, unknown>, steps: RecordedRun['steps'] = []): RecordedRun => ({
  params: [
    {
      type: 'run',
      format: 1,
      command,
      target: 'http://127.0.0.1:8080',
      flags: {},
      tool: 'vespa-bulk 0.1.0',
      host: 'h',
      startTime: '2026-11-25T00:00:00Z',
    },
  ],
  points: [],
  steps,
  summary: { type: 'summary', end: 0, seconds: 1, summary, histogram: '' },
});

describe("the report's summary", () => {
  it("shows a visit's slices as a table, a row per slice and a column per field, not as run-on text", () => {
    const html = renderReport(
      runOf('visit', {
        'visit.document.count': 7,
        slices: [
          { slice: 0, bucketSpace: 'default', status: 'finished', documents: 4 },
          { slice: 1, bucketSpace: 'default', status: 'failed', documents: 3, continuation: 'AAA<' },
        ],
      }),
    );
    const table = /<table class="grid" id="summary-slices">(.*?)<\/table>/.exec(html)?.[1];
    expect(table).toBeDefined();
    expect(table).toContain(
      '<tr><th>slice</th><th>bucket space</th><th>status</th><th>documents</th><th>continuation</th></tr>',
    );
    expect(table).toContain('<tr><td>0</td><td>default</td><td>finished</td><td>4</td><td></td></tr>');
    // Escaped like every other value on the page.
    expect(table).toContain('<td>failed</td><td>3</td><td>AAA&#60;</td></tr>');
    const summary = /<div id="summary">(.*?)<\/div>/.exec(html)?.[1] ?? '';
    expect(summary).toContain('<th title="visit.document.count">documents</th><td>7</td>');
    expect(summary).not.toContain('slice: 0');
    // A visit's headline counts documents: nothing was "succeeded".
    expect(html).toContain('<div><b>7</b><span>documents</span></div>');
  });

  it('folds a long list of slices, saying how many ended how', () => {
    const slices = Array.from({ length: 40 }, (_, i) => ({
      slice: i,
      status: i < 3 ? 'failed' : 'finished',
      documents: 1,
    }));
    const html = renderReport(runOf('visit', { slices }));
    expect(html).toMatch(
      /<details><summary>40 slices: 3 failed, 37 finished<\/summary><table class="grid" id="summary-slices">/,
    );
  });

  it('names every key a feed and a visit export print, so none is shown as its printed key', () => {
    const stats = new FeedStats();
    stats.dropped = 1;
    stats.proxyPages = 1;
    stats.feedBlockedMs = 1500;
    stats.protocol = 'h2';
    const feed = Object.keys(feedSummaryJson(stats.summary(performance.now(), 0, 1)));
    const visit = Object.keys(
      exportSummaryJson({
        ok: true,
        documents: 1,
        removes: 0,
        seconds: 1,
        bytes: 1,
        protocol: 'h2',
        outputBytes: 1,
        resumed: false,
        startedAt: 'x',
        fromTimestamp: '1',
        slices: [{ cluster: 'c', documents: 1, removes: 0, retries: 0, requests: 1, repeatsSkipped: 0 }],
      } as unknown as ExportSummary),
    );
    expect(feed).toContain('feeder.transform.dropped.count');
    expect(feed).toContain('http.response.proxy.page.count');
    expect(feed).toContain('feeder.feed.blocked.seconds');
    expect(visit).toContain('visit.clusters');
    expect([...feed, ...visit].filter((k) => k !== 'slices' && !isNamed(k))).toEqual([]);
  });

  it('shows latency as a grid: a row for all answers, one per status and one for operations, a column per figure', () => {
    const html = renderReport(
      runOf('feed', {
        'http.response.latency.millis.p50': 1.5,
        'http.response.latency.millis.p99': 12.26,
        'http.response.latency.millis.by.code': {
          '200': { count: 9000, min: 1, avg: 2, p50: 1.5, p99: 10, max: 20 },
          '429': { count: 12, min: 30, avg: 40, p50: 40, p99: 50, max: 51 },
        },
        'operation.latency.millis.p99': 348.647,
      }),
    );
    const grid = /<table class="grid" id="summary-latency">(.*?)<\/table>/.exec(html)?.[1] ?? '';
    const rows = [...grid.matchAll(/<tr>(.*?)<\/tr>/g)].map((m) =>
      [...m[1].matchAll(/<t[hd][^>]*>(.*?)<\/t[hd]>/g)].map((c) => c[1]),
    );
    expect(rows).toEqual([
      ['', 'min', 'avg', 'p50', 'p90', 'p99', 'p99.9', 'max'],
      ['answers', '–', '–', '1.5', '–', '12.3', '–', '–'],
      ['200 answers (9,000)', '1', '2', '1.5', '–', '10', '–', '20'],
      ['429 answers (12)', '30', '40', '40', '–', '50', '–', '51'],
      ['operations', '–', '–', '–', '–', '349', '–', '–'],
    ]);
  });

  it('keeps a step column when some step has a figure for it, and marks the step without one', () => {
    const html = renderReport(
      runOf('bench', {}, [
        { type: 'step', name: 'adaptive', start: 0, end: 1000, verdict: { achievedRate: 2000, p99Ms: 30 } },
        {
          type: 'step',
          name: '2000/s',
          targetRate: 2000,
          start: 1000,
          end: 2000,
          verdict: { achievedRate: 1100, p99Ms: 3500, held: false },
        },
      ]),
    );
    const table = /<table class="grid" id="steps">(.*?)<\/table>/.exec(html)?.[1] ?? '';
    expect(table).toContain('<th>asked /s</th><th>achieved /s</th><th>operation p99 ms (from due)</th><th>held</th>');
    expect(table).toContain(
      '<tr><td>adaptive</td><td title="no asked rate: as fast as the cluster takes">–</td><td>2,000</td><td>30</td><td title="not judged: no asked rate">–</td>',
    );
    expect(table).toContain('<tr><td>2000/s</td><td>2,000</td><td>1,100</td><td>3,500</td><td><b>no</b></td>');
  });
  it('leaves out the step columns an adaptive bench has nothing for (no asked rate, no held)', () => {
    const html = renderReport(
      runOf('bench', {}, [
        { type: 'step', name: 'adaptive', start: 0, end: 1000, verdict: { achievedRate: 2000, p99Ms: 30 } },
      ]),
    );
    const head = /<table class="grid" id="steps"><tr>(.*?)<\/tr>/.exec(html)?.[1] ?? '';
    expect(head).toBe(
      '<th>step</th><th>achieved /s</th><th>operation p99 ms (from due)</th><th>seconds</th><th>ok/s</th><th>answer p99 ms</th><th>429 share</th>',
    );
  });
});
