import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { decodeHistogram, emptyLatencyHistogram, latencyDistribution, percentileMs } from './histogram.js';
import type { RecordedRun, StatsPoint, StepRecord, StepVerdict } from './stats-format.js';

/** A chart of the report: one x axis, some series; drawn by the page with uPlot. */
interface ChartSpec {
  id: string;
  title: string;
  /** Unit of the y axis. */
  unit: string;
  /** `time`: x is epoch seconds; `percentile`: x is 1/(1-p) on a log axis. */
  kind: 'time' | 'percentile';
  x: number[];
  series: { label: string; color: string; values: (number | null)[] }[];
}

/** Figures of one step of a stepped run. */
interface StepFigures {
  name: string;
  targetRate?: number;
  seconds: number;
  okRate: number;
  p99Ms: number;
  throttledShare: number;
  verdict?: StepVerdict;
}

const colors = { ok: '#1a7f37', throttled: '#d4a72c', error: '#cf222e', p50: '#0969da', p90: '#8250df', p99: '#cf222e', sent: '#0969da', received: '#1a7f37', inflight: '#0969da', limit: '#6e7781' };

const rate = (n: number, dt: number) => (dt > 0 ? Number((n / dt).toFixed(3)) : 0);
const errorResponses = (p: StatsPoint) => Object.entries(p.status).reduce((n, [code, c]) => (code === '429' || code.startsWith('2') ? n : n + c), 0) + p.exceptions;

function timeCharts(points: StatsPoint[]): ChartSpec[] {
  const x = points.map((p) => p.t);
  const hasResponses = points.some((p) => p.histogram !== '');
  const charts: ChartSpec[] = [
    {
      id: 'throughput',
      title: 'Operations per second',
      unit: '/s',
      kind: 'time',
      x,
      series: [
        { label: 'ok/s', color: colors.ok, values: points.map((p) => rate(p.ok, p.dt)) },
        { label: '429/s', color: colors.throttled, values: points.map((p) => rate(p.status['429'] ?? 0, p.dt)) },
        { label: 'errors/s', color: colors.error, values: points.map((p) => rate(errorResponses(p), p.dt)) },
      ],
    },
    {
      id: 'inflight',
      title: 'In flight and the in-flight limit',
      unit: '',
      kind: 'time',
      x,
      series: [
        { label: 'in flight', color: colors.inflight, values: points.map((p) => p.inflight) },
        { label: 'limit', color: colors.limit, values: points.map((p) => p.inflightLimit) },
      ],
    },
  ];
  if (hasResponses) {
    // A second without a response has no latency: a gap, not a zero that would read as fast.
    const ms = (f: (p: StatsPoint) => number) => points.map((p) => (p.histogram === '' ? null : f(p)));
    charts.push({
      id: 'latency',
      title: 'Latency per second (ms)',
      unit: 'ms',
      kind: 'time',
      x,
      series: [
        { label: 'p50', color: colors.p50, values: ms((p) => p.p50Ms) },
        { label: 'p90', color: colors.p90, values: ms((p) => p.p90Ms) },
        { label: 'p99', color: colors.p99, values: ms((p) => p.p99Ms) },
      ],
    });
  }
  const series: ChartSpec['series'] = [];
  if (points.some((p) => p.sentBytes > 0)) series.push({ label: 'sent MB/s', color: colors.sent, values: points.map((p) => rate(p.sentBytes / 1e6, p.dt)) });
  series.push({ label: 'received MB/s', color: colors.received, values: points.map((p) => rate(p.receivedBytes / 1e6, p.dt)) });
  charts.push({ id: 'bytes', title: 'Megabytes per second', unit: 'MB/s', kind: 'time', x, series });
  return charts;
}

/** Throughput, p99 and share of 429s of each step, from the points inside it. */
function stepFigures(run: RecordedRun): StepFigures[] {
  return run.steps.map((s: StepRecord) => {
    const inside = run.points.filter((p) => p.t * 1000 > s.start && (p.t - p.dt) * 1000 < s.end);
    const h = emptyLatencyHistogram();
    for (const p of inside) if (p.histogram !== '') h.add(decodeHistogram(p.histogram));
    const seconds = inside.reduce((n, p) => n + p.dt, 0);
    const ok = inside.reduce((n, p) => n + p.ok, 0);
    const responses = inside.reduce((n, p) => n + Object.values(p.status).reduce((a, b) => a + b, 0), 0);
    const throttled = inside.reduce((n, p) => n + (p.status['429'] ?? 0), 0);
    return {
      name: s.name,
      ...(s.targetRate !== undefined && { targetRate: s.targetRate }),
      seconds: Number(seconds.toFixed(1)),
      okRate: rate(ok, seconds),
      p99Ms: percentileMs(h, 99),
      throttledShare: responses === 0 ? 0 : throttled / responses,
      ...(s.verdict !== undefined && { verdict: s.verdict }),
    };
  });
}

function uplotAssets(): { js: string; css: string } {
  const dir = dirname(createRequire(import.meta.url).resolve('uplot/package.json'));
  return { js: readFileSync(join(dir, 'dist/uPlot.iife.min.js'), 'utf8'), css: readFileSync(join(dir, 'dist/uPlot.min.css'), 'utf8') };
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
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
  const charts = timeCharts(run.points);
  const whole = emptyLatencyHistogram();
  if (run.summary !== undefined && run.summary.histogram !== '') whole.add(decodeHistogram(run.summary.histogram));
  else for (const p of run.points) if (p.histogram !== '') whole.add(decodeHistogram(p.histogram));
  const dist = latencyDistribution(whole);
  if (dist.x.length > 0) {
    charts.push({ id: 'distribution', title: 'Latency by percentile (ms), whole run', unit: 'ms', kind: 'percentile', x: dist.x, series: [{ label: 'latency', color: colors.p99, values: dist.ms }] });
  }
  const steps = stepFigures(run);
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
  // A bench's own verdict counts operation latency from when each was due; the answers' p99 beside it does not.
  const judged = steps.some((s) => s.verdict !== undefined);
  const verdictHead = judged ? '<th>achieved /s</th><th>operation p99 ms (from due)</th><th>held</th>' : '';
  const verdictCells = (v: StepVerdict | undefined): string =>
    judged ? `<td>${v === undefined ? '' : format(v.achievedRate)}</td><td>${v === undefined ? '' : format(v.p99Ms)}</td><td>${v?.held === undefined ? '' : v.held ? 'yes' : '<b>no</b>'}</td>` : '';
  const stepsHtml =
    steps.length === 0
      ? ''
      : `<h2>Steps</h2><table class="grid" id="steps"><tr><th>step</th><th>asked /s</th>${verdictHead}<th>seconds</th><th>ok/s</th><th>answer p99 ms</th><th>429 share</th></tr>${steps
          .map((s) => `<tr><td>${escapeHtml(s.name)}</td><td>${s.targetRate === undefined ? '' : format(s.targetRate)}</td>${verdictCells(s.verdict)}<td>${format(s.seconds)}</td><td>${format(s.okRate)}</td><td>${format(s.p99Ms)}</td><td>${(s.throttledShare * 100).toFixed(1)}%</td></tr>`)
          .join('')}</table>`;
  const start = run.params.map((p) => p.startTime).sort()[0] ?? '';
  const targets = [...new Set(run.params.map((p) => p.target))].join(', ');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${css}
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;background:#fff;margin:0 auto;padding:16px 24px;max-width:1280px;box-sizing:border-box}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:24px 0 8px}.sub{color:#59636e;margin:0 0 12px}
.headline{display:flex;gap:28px;margin:8px 0 16px}.headline div{display:flex;flex-direction:column}.headline b{font-size:22px}.headline span{color:#59636e;font-size:12px}
.charts{display:grid;grid-template-columns:1fr 1fr;gap:16px}.chart{border:1px solid #d1d9e0;border-radius:6px;padding:8px}.chart h3{font-size:13px;margin:0 0 4px;font-weight:600}
table{border-collapse:collapse;font-size:13px}.kv th{text-align:left;font-weight:500;color:#59636e;padding:2px 16px 2px 0;vertical-align:top}.kv td{padding:2px 0;font-variant-numeric:tabular-nums;word-break:break-all}
.grid th,.grid td{border:1px solid #d1d9e0;padding:3px 8px;text-align:right}.grid th:first-child,.grid td:first-child{text-align:left}
.cols{display:grid;grid-template-columns:1fr 1fr;gap:24px}
</style></head><body>
<h1>${escapeHtml(title)}</h1>
<p class="sub">${escapeHtml(targets)} · started ${escapeHtml(start)}${run.params.length > 1 ? ` · ${run.params.length} shards merged` : ''}${run.summary === undefined ? ' · <b>unfinished</b> (no summary line)' : ''}</p>
<div class="headline" id="headline">${headline(run).map(([k, v]) => `<div><b>${escapeHtml(v)}</b><span>${escapeHtml(k)}</span></div>`).join('')}</div>
<div class="charts">${charts.map((c) => `<div class="chart"><h3>${escapeHtml(c.title)}</h3><div id="chart-${c.id}"></div></div>`).join('')}</div>
${stepsHtml}
<div class="cols"><div><h2>Summary</h2><table class="kv" id="summary">${rows(summaryRows)}</table></div>
<div><h2>Parameters</h2><div id="params">${paramsHtml}</div></div></div>
${tablesHtml}
<script>${js}</script>
<script type="application/json" id="report-data">${scriptSafe(JSON.stringify(charts))}</script>
<script>${pageScript}</script>
</body></html>
`;
}

// The page's own script: draws each chart spec with uPlot. Kept to plain ES2017 for any browser.
const pageScript = `
(function () {
  var charts = JSON.parse(document.getElementById('report-data').textContent);
  var drawn = [];
  // x = 1/(1-p): 2 is the median, 10 p90, 100 p99; labelled only at those. uPlot's own filter on a log axis
  // would keep only powers of ten and drop the median's label.
  var pctLabel = function (x) {
    if (!(x >= 1.999)) return '';
    var p = 100 * (1 - 1 / x);
    return (Math.round(p * 1000) / 1000) + '%';
  };
  var pad = function (n) { return (n < 10 ? '0' : '') + n; };
  var clock = function (v) { var d = new Date(v * 1000); return pad(d.getHours()) + ':' + pad(d.getMinutes()) + ':' + pad(d.getSeconds()); };
  var fromZero = function (u, min, max) { return [0, max > 0 ? max * 1.05 : 1]; };
  charts.forEach(function (c) {
    var el = document.getElementById('chart-' + c.id);
    var width = el.clientWidth || 600;
    var percentile = c.kind === 'percentile';
    var xMax = c.x[c.x.length - 1];
    var opts = {
      width: width,
      height: 240,
      padding: [8, 28, 0, 4],
      scales: percentile
        ? { x: { time: false, distr: 3, log: 10, range: function () { return [1, xMax]; } }, y: { range: fromZero } }
        : { x: { time: false }, y: { range: fromZero } },
      series: [{ label: percentile ? 'percentile' : 'time', value: function (u, v) { return v == null ? '' : percentile ? pctLabel(v) : clock(v); } }].concat(c.series.map(function (s) {
        return { label: s.label, stroke: s.color, width: 1.5, spanGaps: false, points: { show: c.x.length < 3 } };
      })),
      axes: [
        percentile
          ? { filter: function (u, splits) { return splits; }, splits: function () { var out = []; for (var x = 2; x <= xMax; x = x === 2 ? 10 : x * 10) out.push(x); return out; }, values: function (u, vals) { return vals.map(pctLabel); } }
          // Whole seconds only: the points are seconds, a tick between them would mean nothing.
          : { incrs: [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400], values: function (u, vals) { return vals.map(clock); } },
        { size: 76, values: function (u, vals) { return vals.map(function (v) { return v + (c.unit && c.unit !== '/s' ? ' ' + c.unit : ''); }); } },
      ],
      legend: { live: true },
    };
    var u = new uPlot(opts, [c.x].concat(c.series.map(function (s) { return s.values; })), el);
    drawn.push({ id: c.id, points: c.x.length, series: c.series.length, chart: u });
  });
  window.vespaBulkReport = { charts: drawn };
})();
`;
