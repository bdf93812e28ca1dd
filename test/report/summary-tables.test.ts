import { describe, expect, it } from 'vitest';
import { renderReport } from '../../src/report/html.js';
import type { RecordedRun } from '../../src/report/stats-format.js';

const runOf = (command: string, summary: Record<string, unknown>, steps: RecordedRun['steps'] = []): RecordedRun => ({
  params: [{ type: 'run', format: 1, command, target: 'http://127.0.0.1:8080', flags: {}, tool: 'vespa-bulk 0.1.0', host: 'h', startTime: '2026-11-25T00:00:00Z' }],
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
    expect(table).toContain('<tr><th>slice</th><th>bucketSpace</th><th>status</th><th>documents</th><th>continuation</th></tr>');
    expect(table).toContain('<tr><td>0</td><td>default</td><td>finished</td><td>4</td><td></td></tr>');
    // Escaped like every other value on the page.
    expect(table).toContain('<td>failed</td><td>3</td><td>AAA&#60;</td></tr>');
    const summary = /<table class="kv" id="summary">(.*?)<\/table>/.exec(html)?.[1] ?? '';
    expect(summary).toContain('visit.document.count');
    expect(summary).not.toContain('slice: 0');
  });

  it('keeps a step column when some step has a figure for it, and marks the step without one', () => {
    const html = renderReport(
      runOf('bench', {}, [
        { type: 'step', name: 'adaptive', start: 0, end: 1000, verdict: { achievedRate: 2000, p99Ms: 30 } },
        { type: 'step', name: '2000/s', targetRate: 2000, start: 1000, end: 2000, verdict: { achievedRate: 1100, p99Ms: 3500, held: false } },
      ]),
    );
    const table = /<table class="grid" id="steps">(.*?)<\/table>/.exec(html)?.[1] ?? '';
    expect(table).toContain('<th>asked /s</th><th>achieved /s</th><th>operation p99 ms (from due)</th><th>held</th>');
    expect(table).toContain('<tr><td>adaptive</td><td title="no asked rate: as fast as the cluster takes">–</td><td>2,000</td><td>30</td><td title="not judged: no asked rate">–</td>');
    expect(table).toContain('<tr><td>2000/s</td><td>2,000</td><td>1,100</td><td>3,500</td><td><b>no</b></td>');
  });
  it("leaves out the step columns an adaptive bench has nothing for (no asked rate, no held)", () => {
    const html = renderReport(runOf('bench', {}, [{ type: 'step', name: 'adaptive', start: 0, end: 1000, verdict: { achievedRate: 2000, p99Ms: 30 } }]));
    const head = /<table class="grid" id="steps"><tr>(.*?)<\/tr>/.exec(html)?.[1] ?? '';
    expect(head).toBe('<th>step</th><th>achieved /s</th><th>operation p99 ms (from due)</th><th>seconds</th><th>ok/s</th><th>answer p99 ms</th><th>429 share</th>');
  });
});
