import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { colors } from '../../src/report/charts.js';
import { renderReport } from '../../src/report/html.js';
import { mergeRuns } from '../../src/report/merge.js';
import type { RecordedRun } from '../../src/report/stats-format.js';
import { simulatorForFile } from '../support/simulator-for-file.js';
import { ensureChromium } from './chromium.js';
import { adaptiveBenchRun, recordFeed, writeDocs } from './helpers.js';

const outputDir = join(import.meta.dirname, '../../test-output');

const fixture = simulatorForFile({ maxOpsPerSecond: 2500, queueLimit: 24, latencyMs: 2 }, 'vb-browser-');
let browser: Browser;
beforeAll(async () => {
  // Installing chromium the first time takes minutes; that is set-up, not the test.
  const chromium = ensureChromium();
  browser = await puppeteer.launch({
    executablePath: chromium,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
}, 900_000);
afterAll(async () => {
  await browser?.close();
});

/** The report of `run` opened offline, with what went wrong on the page (console errors, any fetch) in `problems`. */
async function open(run: RecordedRun, name: string): Promise<{ page: Page; problems: string[] }> {
  const file = join(fixture.tmp.dir, name);
  writeFileSync(file, renderReport(run));
  const page = await browser.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warn') problems.push(`${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${(e as Error).message}`));
  // Offline means offline: any request other than the file itself is a failure.
  await page.setRequestInterception(true);
  page.on('request', (req) => {
    if (req.url().startsWith('file:')) void req.continue();
    else {
      problems.push(`fetched ${req.url()}`);
      void req.abort();
    }
  });
  await page.setViewport({ width: 1280, height: 800 });
  await page.goto(`file://${file}`, { waitUntil: 'load' });
  return { page, problems };
}

/** Each chart's legend as `label: value` per series, the x series first. Run in the page (a string: this project compiles without the DOM library). */
const legends = (page: Page) =>
  page.evaluate(`Object.fromEntries(window.vespaBulkReport.charts.map((c) => [c.id,
    [...c.chart.root.querySelectorAll('.u-legend .u-series')].map((row) => row.querySelector('.u-label').textContent + ': ' + row.querySelector('.u-value').textContent)]))`) as Promise<
    Record<string, string[]>
  >;

/** The heads and the cells of a table, as text. */
const tableText = (page: Page, selector: string) =>
  page.$eval(selector, (t) =>
    [...t.querySelectorAll('tr')].map((r) => [...r.querySelectorAll('th,td')].map((c) => c.textContent ?? '')),
  );

describe('the HTML report of a stepped feed on two machines, in a real browser', () => {
  let page: Page;
  let problems: string[];
  beforeAll(async () => {
    // Two machines' shards of one stepped run.
    const runs = await Promise.all(
      ['a', 'b'].map((m) =>
        recordFeed(
          fixture.sim.url,
          writeDocs(fixture.tmp.dir, `${m}.jsonl`, 3000, m),
          join(fixture.tmp.dir, `${m}.stats.jsonl`),
          { host: `machine-${m}`, steps: ['1000/s', '2000/s'], stepMs: 1200 },
        ),
      ),
    );
    ({ page, problems } = await open(mergeRuns(runs), 'report.html'));
  }, 60_000);

  it('draws every chart with data, without console errors or fetches', async () => {
    const charts = (await page.evaluate(`(window.vespaBulkReport?.charts ?? []).map((c) => {
      const canvas = c.chart.root.querySelector('canvas');
      const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
      // Drawn: pixels in a chart's line colours, not only the white background and the grey grid.
      let coloured = 0;
      for (let i = 0; i < data.length; i += 4) {
        if (data[i + 3] > 0 && Math.max(data[i], data[i + 1], data[i + 2]) - Math.min(data[i], data[i + 1], data[i + 2]) > 60) coloured++;
      }
      return { id: c.id, points: c.points, coloured };
    })`)) as { id: string; points: number; coloured: number }[];
    mkdirSync(outputDir, { recursive: true });
    await page.screenshot({ path: join(outputDir, 'report.png'), fullPage: true });
    expect(problems).toEqual([]);
    expect(charts.map((c) => c.id)).toEqual(['throughput', 'inflight', 'latency', 'bytes', 'distribution']);
    for (const c of charts) {
      expect(c.points, c.id).toBeGreaterThan(0);
      expect(c.coloured, `${c.id} has no drawn line`).toBeGreaterThan(50);
    }
    const text = (await page.evaluate('document.body.innerText')) as string;
    expect(text).toContain('6,000');
    expect(text).toContain('2 shards merged');
    expect(await page.$$eval('#params h3', (hs) => hs.map((h) => h.textContent))).toEqual([
      'shard 1: machine-a',
      'shard 2: machine-b',
    ]);
  });

  it('says in every legend what the series did over the run while nothing is hovered, and the second under the pointer when hovered', async () => {
    const still = await legends(page);
    for (const [id, rows] of Object.entries(still)) for (const row of rows) expect(row, id).not.toMatch(/: (--)?$/);
    expect(still.throughput[0]).toMatch(/^time: \d\d:\d\d:\d\d–\d\d:\d\d:\d\d$/);
    expect(still.throughput[1]).toMatch(/^ok\/s: mean [\d,.]+ · max [\d,.]+$/);
    expect(still.inflight[2]).toMatch(/^limit: last \d+ · max \d+$/);
    expect(still.latency[3]).toMatch(/^p99: run [\d,.]+ ms · worst second [\d,.]+ ms$/);
    expect(still.distribution[1]).toMatch(/^latency: p50 [\d,.]+ · p99 [\d,.]+ · p99.9 [\d,.]+ · max [\d,.]+ ms$/);
    const plot = (await (await page.$('#chart-throughput .u-over'))!.boundingBox())!;
    await page.mouse.move(plot.x + plot.width / 2, plot.y + plot.height / 2);
    const hovered = await legends(page);
    expect(hovered.throughput[0]).toMatch(/^time: \d\d:\d\d:\d\d$/);
    expect(hovered.throughput[1]).toMatch(/^ok\/s: [\d,.]+$/);
    await page.mouse.move(1, 1);
    expect((await legends(page)).throughput[1]).toBe(still.throughput[1]);
  });

  it('shows the summary in named groups, each figure under a name in words, the printed keys on hover and in a folded list', async () => {
    const groups = await page.$$eval('#summary h3', (hs) => hs.map((h) => h.textContent));
    expect(groups).toEqual(['Run', 'Throughput', 'Outcomes', 'Transport', 'Latency (ms)']);
    const labels = await page.$$eval('#summary .kv th', (ths) =>
      ths.map((th) => [th.getAttribute('title'), th.textContent]),
    );
    expect(labels).toContainEqual(['feeder.ok.count', 'succeeded']);
    expect(labels).toContainEqual(['http.request.bytes', 'sent']);
    // Every label is words: no printed key stands in for a name.
    for (const [key, label] of labels) expect(label, key ?? '').not.toMatch(/\w\.\w/);
    const ok = await page.$eval('#summary th[title="feeder.ok.count"] + td', (td) => td.textContent);
    expect(ok).toBe('6,000');
    const latency = await tableText(page, '#summary-latency');
    expect(latency[0]).toEqual(['', 'min', 'avg', 'p50', 'p90', 'p99', 'p99.9', 'max']);
    const rows = latency.map((r) => r[0]);
    // A row per status between all answers and the operations; 429s come or not, as the simulator's queue fills.
    expect(rows.slice(0, 3)).toEqual(['', 'answers', expect.stringMatching(/^200 answers \([\d,]+\)$/)]);
    for (const row of rows.slice(3, -1)) expect(row).toMatch(/^\d{3} answers \([\d,]+\)$/);
    expect(rows.at(-1)).toBe('operations');
    const raw = await page.$eval('#summary-raw', (d) => ({
      open: (d as unknown as { open: boolean }).open,
      text: d.textContent ?? '',
    }));
    expect(raw.open).toBe(false);
    expect(raw.text).toContain('feeder.ok.count6000');
    expect(raw.text).toContain('http.response.latency.millis.p99');
  });

  it('lists the steps with their asked rates, without the columns of a verdict no step has', async () => {
    const steps = await tableText(page, '#steps');
    expect(steps[0]).toEqual(['step', 'asked /s', 'seconds', 'ok/s', 'answer p99 ms', '429 share']);
    expect(steps.slice(1).map((r) => r.slice(0, 2))).toEqual([
      ['1000/s', '2,000'],
      ['2000/s', '4,000'],
    ]);
    for (const row of steps) for (const cell of row) expect(cell).not.toBe('');
  });
});

describe('the HTML report of an adaptive bench, in a real browser', () => {
  let page: Page;
  let problems: string[];
  beforeAll(async () => {
    ({ page, problems } = await open(adaptiveBenchRun(), 'adaptive.html'));
  });

  it('draws the in-flight count and its limit so that both show where they are equal', async () => {
    const rgb = (hex: string) => [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16));
    const seen = (await page.evaluate(`(() => {
      const chart = window.vespaBulkReport.charts.find((c) => c.id === 'inflight').chart;
      const canvas = chart.root.querySelector('canvas');
      const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
      const near = (c) => {
        let n = 0;
        for (let i = 0; i < data.length; i += 4) if (data[i + 3] > 100 && Math.abs(data[i] - c[0]) + Math.abs(data[i + 1] - c[1]) + Math.abs(data[i + 2] - c[2]) < 60) n++;
        return n;
      };
      return { inflight: near(${JSON.stringify(rgb(colors.inflight))}), limit: near(${JSON.stringify(rgb(colors.limit))}), waiting: near(${JSON.stringify(rgb(colors.waiting))}), labels: chart.series.slice(1).map((s) => s.label), dashes: chart.series.slice(1).map((s) => s.dash ?? null) };
    })()`)) as { inflight: number; limit: number; waiting: number; labels: string[]; dashes: (number[] | null)[] };
    expect(problems).toEqual([]);
    // The data puts the count on its limit every second: each line still has its own pixels.
    expect(seen.inflight).toBeGreaterThan(100);
    expect(seen.limit).toBeGreaterThan(100);
    expect(seen.dashes[0]).toBeNull();
    expect(seen.dashes[1]).not.toBeNull();
    // Beside the limit, the search's estimate of how many of them wait: where the knee was.
    expect(seen.labels).toEqual(['in flight', 'limit', 'waiting (estimate)']);
    expect(seen.waiting).toBeGreaterThan(50);
  });

  it('draws the shortest round trip beside the latency percentiles', async () => {
    const labels = (await page.evaluate(
      `window.vespaBulkReport.charts.find((c) => c.id === 'latency').chart.series.slice(1).map((s) => s.label)`,
    )) as string[];
    expect(labels).toEqual(['p50', 'p90', 'p99', 'shortest round trip']);
  });

  it("leaves out the steps table's columns an adaptive run has nothing for, and fills the rest", async () => {
    const steps = await tableText(page, '#steps');
    expect(steps[0]).toEqual([
      'step',
      'achieved /s',
      'operation p99 ms (from due)',
      'seconds',
      'ok/s',
      'answer p99 ms',
      '429 share',
    ]);
    expect(steps).toHaveLength(2);
    for (const cell of steps[1]) expect(cell).not.toMatch(/^(|–)$/);
  });
});
