import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { distributionChart, timeCharts } from './charts.js';
import { escapeHtml, valueText } from './format.js';
import { decodeHistogram, emptyLatencyHistogram } from './histogram.js';
import { pageScript } from './page-script.js';
import type { RecordedRun } from './stats-format.js';
import { stepsTable } from './steps.js';
import { recordTables, summaryHtml } from './summary-table.js';

function uplotAssets(): { js: string; css: string } {
  const dir = dirname(createRequire(import.meta.url).resolve('uplot/package.json'));
  return {
    js: readFileSync(join(dir, 'dist/uPlot.iife.min.js'), 'utf8'),
    css: readFileSync(join(dir, 'dist/uPlot.min.css'), 'utf8'),
  };
}

// Inside <script>, '</script' or '<!--' in a string would end or confuse the element.
const scriptSafe = (s: string) => s.replace(/</g, '\\u003c');

function flagsText(flags: Record<string, unknown>): string {
  return Object.entries(flags)
    .map(([k, v]) => flagText(k, v))
    .join(' ');
}

/** One recorded flag as given: the positionals as they are, a switch bare, a repeated flag once per value. */
function flagText(k: string, v: unknown): string {
  if (k === '_') return (v as unknown[]).join(' ');
  if (v === true) return `--${k}`;
  return `--${k} ${Array.isArray(v) ? v.join(` --${k} `) : String(v)}`;
}

/** The headline figures: what a reader looks for first. */
function headline(run: RecordedRun): [string, string][] {
  const s = run.summary?.summary ?? {};
  const pick = (...keys: string[]) => keys.map((k) => s[k]).find((v) => v !== undefined);
  const out: [string, string][] = [];
  const add = (label: string, v: unknown, unit = '') => {
    if (v !== undefined) out.push([label, `${valueText(v)}${unit}`]);
  };
  add('succeeded', pick('feeder.ok.count'));
  add('documents', pick('visit.document.count'));
  add(
    'per second',
    ((v) => (typeof v === 'number' ? Math.round(v) : v))(pick('feeder.ok.rate', 'visit.document.rate')),
  );
  add('failed', pick('feeder.error.count'));
  add('p99', pick('http.response.latency.millis.p99'), ' ms');
  add('seconds', run.summary?.seconds);
  add('protocol', pick('http.protocol', 'visit.protocol'));
  add('proxy', pick('http.proxy'));
  return out;
}

/**
 * The report: one self-contained HTML page (uPlot and its stylesheet inlined, the data embedded), which opens
 * offline: charts over time, the latency distribution, the steps, the summary and the parameters of each shard.
 * @example
 * ```ts
 * import { writeFileSync } from 'node:fs';
 * import { readStatsFile, renderReport } from 'vespa-bulk/report';
 *
 * writeFileSync('report.html', renderReport(readStatsFile('feed.stats.jsonl'))); // one self-contained page
 * ```
 */
export function renderReport(run: RecordedRun): string {
  const whole = emptyLatencyHistogram();
  if (run.summary !== undefined && run.summary.histogram !== '') whole.add(decodeHistogram(run.summary.histogram));
  else for (const p of run.points) if (p.histogram !== '') whole.add(decodeHistogram(p.histogram));
  const distribution = distributionChart(whole);
  const charts = [...timeCharts(run.points, whole), ...(distribution === undefined ? [] : [distribution])];
  const { js, css } = uplotAssets();
  const title = `vespa-bulk ${run.params[0]?.command ?? ''} report`;
  const rows = (pairs: [string, string][]) =>
    pairs.map(([k, v]) => `<tr><th>${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`).join('');
  const summary = run.summary?.summary ?? {};
  // Several shards: side by side, each under its machine's name, where one after the other they ran together.
  const paramsHtml = run.params
    .map(
      (p, i) =>
        `<section class="group">${run.params.length > 1 ? `<h3>shard ${i + 1}: ${escapeHtml(p.host)}</h3>` : ''}<table class="kv">${rows(
          [
            ['command', p.command],
            ['target', p.target],
            ['flags', flagsText(p.flags)],
            ['tool', p.tool],
            ['host', p.host],
            ['start', p.startTime],
          ],
        )}</table></section>`,
    )
    .join('');
  const start = run.params.map((p) => p.startTime).sort()[0] ?? '';
  const targets = [...new Set(run.params.map((p) => p.target))].join(', ');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${css}
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;background:#fff;margin:0 auto;padding:16px 24px;max-width:1280px;box-sizing:border-box}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:24px 0 8px}.sub{color:#59636e;margin:0 0 12px}
.headline{display:flex;gap:28px;margin:8px 0 16px}.headline div{display:flex;flex-direction:column}.headline b{font-size:22px}.headline span{color:#59636e;font-size:12px}
.charts{display:grid;grid-template-columns:1fr 1fr;gap:16px}.chart{border:1px solid #d1d9e0;border-radius:6px;padding:8px;break-inside:avoid;min-width:0}.chart h3{font-size:13px;margin:0 0 4px;font-weight:600}
.u-legend{font-size:12px}.u-legend .u-value{font-variant-numeric:tabular-nums}.u-inline tr.u-series:first-child{display:block}
table{border-collapse:collapse;font-size:13px}.kv th{text-align:left;font-weight:500;color:#59636e;padding:2px 16px 2px 0;vertical-align:top}.kv td{padding:2px 0;font-variant-numeric:tabular-nums;overflow-wrap:anywhere}
.grid th,.grid td{border:1px solid #d1d9e0;padding:3px 8px;text-align:right}.grid th:first-child,.grid td:first-child{text-align:left}
#summary,#params{display:grid;grid-template-columns:repeat(auto-fill,minmax(460px,1fr));gap:8px 32px;align-items:start}
.group h3{font-size:13px;margin:0 0 4px;font-weight:600}.group.wide{grid-column:1/-1}.group .kv th{font-weight:400}
.note{color:#59636e;font-size:12px;margin:4px 0 0}details{margin:8px 0}summary{cursor:pointer;color:#59636e}
@media print{body{padding:0}h2,h3{break-after:avoid}table,.group{break-inside:avoid}#summary,#params{grid-template-columns:1fr 1fr}}
</style></head><body>
<h1>${escapeHtml(title)}</h1>
<p class="sub">${escapeHtml(targets)} · started ${escapeHtml(start)}${run.params.length > 1 ? ` · ${run.params.length} shards merged` : ''}${run.summary === undefined ? ' · <b>unfinished</b> (no summary line)' : ''}</p>
<div class="headline" id="headline">${headline(run)
    .map(([k, v]) => `<div><b>${escapeHtml(v)}</b><span>${escapeHtml(k)}</span></div>`)
    .join('')}</div>
<div class="charts">${charts.map((c) => `<div class="chart"><h3>${escapeHtml(c.title)}</h3><div id="chart-${c.id}"></div></div>`).join('')}</div>
${stepsTable(run)}
<h2>Summary</h2>${summaryHtml(summary)}
${recordTables(summary)}
<h2>Parameters</h2><div id="params">${paramsHtml}</div>
<script>${js}</script>
<script type="application/json" id="report-data">${scriptSafe(JSON.stringify(charts))}</script>
<script>${pageScript}</script>
</body></html>
`;
}
