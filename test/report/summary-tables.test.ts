import { describe, expect, it } from 'vitest';
import { renderReport } from '../../src/report/html.js';
import type { RecordedRun } from '../../src/report/stats-format.js';

const visitRun = (summary: Record<string, unknown>): RecordedRun => ({
  params: [{ type: 'run', format: 1, command: 'visit', target: 'http://127.0.0.1:8080', flags: {}, tool: 'vespa-bulk 0.1.0', host: 'h', startTime: '2026-11-25T00:00:00Z' }],
  points: [],
  steps: [],
  summary: { type: 'summary', end: 0, seconds: 1, summary, histogram: '' },
});

describe("the report's summary", () => {
  it("shows a visit's slices as a table, a row per slice and a column per field, not as run-on text", () => {
    const html = renderReport(
      visitRun({
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
});
