import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import puppeteer from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/simulator.js';
import { renderReport } from '../../src/report/html.js';
import { mergeRuns } from '../../src/report/merge.js';
import { tempDir, type TempDir } from '../support/temp-dir.js';
import { ensureChromium } from './chromium.js';
import { recordFeed, writeDocs } from './helpers.js';

const outputDir = join(import.meta.dirname, '../../test-output');

let sim: Simulator;
let tmp: TempDir;
let chromium: string;
beforeAll(async () => {
  // Installing chromium the first time takes minutes; that is set-up, not the test.
  chromium = ensureChromium();
  sim = await startSimulator({ port: 0, configPort: false, faults: { maxOpsPerSecond: 2500, queueLimit: 24, latencyMs: 2 } });
  tmp = tempDir('vb-browser-');
}, 900_000);
afterAll(async () => {
  await sim?.close();
  tmp?.cleanup();
});

describe('the HTML report in a real browser', () => {
  it('draws every chart with data, without console errors, with the summary and the steps on the page', async () => {
    const runs = await Promise.all([
      recordFeed(sim.url, writeDocs(tmp.dir, 'a.jsonl', 3000, 'a'), join(tmp.dir, 'a.stats.jsonl'), { host: 'machine-a', steps: ['1000/s', '2000/s'], stepMs: 1200 }),
      recordFeed(sim.url, writeDocs(tmp.dir, 'b.jsonl', 3000, 'b'), join(tmp.dir, 'b.stats.jsonl'), { host: 'machine-b', steps: ['1000/s', '2000/s'], stepMs: 1200 }),
    ]);
    const run = mergeRuns(runs);
    const file = join(tmp.dir, 'report.html');
    writeFileSync(file, renderReport(run));

    const browser = await puppeteer.launch({ executablePath: chromium, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
    try {
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
      const started = performance.now();
      await page.goto(`file://${file}`, { waitUntil: 'load' });
      // Run in the page (a string: this project compiles without the DOM library).
      const charts = (await page.evaluate(`(window.vespaBulkReport?.charts ?? []).map((c) => {
        const canvas = c.chart.root.querySelector('canvas');
        const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
        // Drawn: pixels in a chart's line colours, not only the white background and the grey grid.
        let coloured = 0;
        for (let i = 0; i < data.length; i += 4) {
          if (data[i + 3] > 0 && Math.max(data[i], data[i + 1], data[i + 2]) - Math.min(data[i], data[i + 1], data[i + 2]) > 60) coloured++;
        }
        return { id: c.id, points: c.points, series: c.series, coloured };
      })`)) as { id: string; points: number; series: number; coloured: number }[];
      mkdirSync(outputDir, { recursive: true });
      await page.screenshot({ path: join(outputDir, 'report.png'), fullPage: true });
      console.log(`browser: rendered and checked in ${Math.round(performance.now() - started)} ms; screenshot ${join(outputDir, 'report.png')}`);
      expect(problems).toEqual([]);
      expect(charts.map((c) => c.id)).toEqual(['throughput', 'inflight', 'latency', 'bytes', 'distribution']);
      for (const c of charts) {
        expect(c.points, c.id).toBeGreaterThan(0);
        expect(c.coloured, `${c.id} has no drawn line`).toBeGreaterThan(50);
      }
      const text = (await page.evaluate('document.body.innerText')) as string;
      expect(text).toContain('6,000');
      expect(text).toContain('2 shards merged');
      const summary = await page.$eval('#summary', (t) => t.textContent ?? '');
      expect(summary).toContain(`feeder.ok.count${(6000).toLocaleString('en-US')}`);
      const steps = await page.$$eval('#steps tr', (rows) => rows.map((r) => r.textContent ?? ''));
      expect(steps.length).toBe(3);
      expect(steps[1]).toContain('1000/s');
    } finally {
      await browser.close();
    }
  });
});
