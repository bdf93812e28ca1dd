import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { distributionChart, timeCharts } from './charts.js';
import { escapeHtml } from './format.js';
import { decodeHistogram, emptyLatencyHistogram } from './histogram.js';
import { pageScript } from './page-script.js';
import type { RecordedRun } from './stats-format.js';
import { stepsTable } from './steps.js';

function uplotAssets(): { js: string; css: string } {
  const dir = dirname(createRequire(import.meta.url).resolve('uplot/package.json'));
  return { js: readFileSync(join(dir, 'dist/uPlot.iife.min.js'), 'utf8'), css: readFileSync(join(dir, 'dist/uPlot.min.css'), 'utf8') };
}

// Inside <script>, '</script' or '<!--' in a string would end or confuse the element.
const scriptSafe = (s: string) => s.replace(/</g, '\\u003c');

function format(v: unknown): string {
  if (typeof v === 'number') return Number.isInteger(v) ? v.toLocaleString('en-US') : v.toLocaleString('en-US', { maximumFractionDigits: 3 });
  if (typeof v === 'object' && v !== null) return Object.entries(v).map(([k, n]) => `${k}: ${format(n)}`).join(', ');
  return String(v);
}

function isRecordList(v: unknown): v is Record<string, unknown>[] {
  return Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'object' && x !== null && !Array.isArray(x));
}

function flagsText(flags: Record<string, unknown>): string {
  return Object.entries(flags)
    .map(([k, v]) => (k === '_' ? (v as unknown[]).join(' ') : v === true ? `--${k}` : `--${k} ${Array.isArray(v) ? v.join(` --${k} `) : String(v)}`))
    .join(' ');
}

/** The headline figures: what a reader looks for first. */
function headline(run: RecordedRun): [string, string][] {
  const s = run.summary?.summary ?? {};
  const pick = (...keys: string[]) => keys.map((k) => s[k]).find((v) => v !== undefined);
  const out: [string, string][] = [];
  const add = (label: string, v: unknown, unit = '') => {
    if (v !== undefined) out.push([label, `${format(v)}${unit}`]);
  };
  add('succeeded', pick('feeder.ok.count', 'visit.document.count'));
  add('per second', ((v) => (typeof v === 'number' ? Math.round(v) : v))(pick('feeder.ok.rate', 'visit.document.rate')));
  add('failed', pick('feeder.error.count'));
  add('p99', pick('http.response.latency.millis.p99'), ' ms');
  add('seconds', run.summary?.seconds);
  add('protocol', pick('http.protocol', 'visit.protocol'));
  return out;
}

/**
 * The report: one self-contained HTML page (uPlot and its stylesheet inlined, the data embedded), which opens
 * offline: charts over time, the latency distribution, the steps, the summary and the parameters of each shard.
 */
export function renderReport(run: RecordedRun): string {
  const whole = emptyLatencyHistogram();
  if (run.summary !== undefined && run.summary.histogram !== '') whole.add(decodeHistogram(run.summary.histogram));
  else for (const p of run.points) if (p.histogram !== '') whole.add(decodeHistogram(p.histogram));
  const distribution = distributionChart(whole);
  const charts = [...timeCharts(run.points, whole), ...(distribution === undefined ? [] : [distribution])];
  const { js, css } = uplotAssets();
  const title = `vespa-bulk ${run.params[0]?.command ?? ''} report`;
  const rows = (pairs: [string, string][]) => pairs.map(([k, v]) => `<tr><th>${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`).join('');
  const summary = run.summary?.summary ?? {};
  const tables = Object.entries(summary).filter((e): e is [string, Record<string, unknown>[]] => isRecordList(e[1]));
  const summaryRows = Object.entries(summary)
    .filter(([, v]) => !isRecordList(v))
    .map(([k, v]): [string, string] => [k, format(v)]);
  // A list of records (a visit's slices) is a table of its own: as text in one cell it ran on unreadably.
  const tablesHtml = tables
    .map(([key, list]) => {
      const columns = [...new Set(list.flatMap((r) => Object.keys(r)))];
      const head = columns.map((c) => `<th>${escapeHtml(c)}</th>`).join('');
      const body = list.map((r) => `<tr>${columns.map((c) => `<td>${r[c] === undefined ? '' : escapeHtml(format(r[c]))}</td>`).join('')}</tr>`).join('');
      return `<h2>${escapeHtml(key)}</h2><table class="grid" id="summary-${escapeHtml(key)}"><tr>${head}</tr>${body}</table>`;
    })
    .join('');
  const paramsHtml = run.params
    .map((p) => `<table class="kv">${rows([['command', p.command], ['target', p.target], ['flags', flagsText(p.flags)], ['tool', p.tool], ['host', p.host], ['start', p.startTime]])}</table>`)
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
.u-legend{font-size:12px}.u-legend .u-value{font-variant-numeric:tabular-nums}
table{border-collapse:collapse;font-size:13px}.kv th{text-align:left;font-weight:500;color:#59636e;padding:2px 16px 2px 0;vertical-align:top}.kv td{padding:2px 0;font-variant-numeric:tabular-nums;word-break:break-all}
.grid th,.grid td{border:1px solid #d1d9e0;padding:3px 8px;text-align:right}.grid th:first-child,.grid td:first-child{text-align:left}
.cols{display:grid;grid-template-columns:1fr 1fr;gap:24px}
@media print{body{padding:0}h2,h3{break-after:avoid}table{break-inside:avoid}}
</style></head><body>
<h1>${escapeHtml(title)}</h1>
<p class="sub">${escapeHtml(targets)} · started ${escapeHtml(start)}${run.params.length > 1 ? ` · ${run.params.length} shards merged` : ''}${run.summary === undefined ? ' · <b>unfinished</b> (no summary line)' : ''}</p>
<div class="headline" id="headline">${headline(run).map(([k, v]) => `<div><b>${escapeHtml(v)}</b><span>${escapeHtml(k)}</span></div>`).join('')}</div>
<div class="charts">${charts.map((c) => `<div class="chart"><h3>${escapeHtml(c.title)}</h3><div id="chart-${c.id}"></div></div>`).join('')}</div>
${stepsTable(run)}
<div class="cols"><div><h2>Summary</h2><table class="kv" id="summary">${rows(summaryRows)}</table></div>
<div><h2>Parameters</h2><div id="params">${paramsHtml}</div></div></div>
${tablesHtml}
<script>${js}</script>
<script type="application/json" id="report-data">${scriptSafe(JSON.stringify(charts))}</script>
<script>${pageScript}</script>
</body></html>
`;
}
