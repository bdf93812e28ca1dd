import { latencyDistribution, percentileMs, type LatencyHistogram } from './histogram.js';
import { figure } from './format.js';
import type { StatsPoint } from './stats-format.js';

/** One line of a chart. */
export interface SeriesSpec {
  label: string;
  color: string;
  values: (number | null)[];
  /** Line width in CSS pixels (default 1.5). */
  width?: number;
  /** Canvas dash pattern, e.g. `[8, 5]`; solid when absent. */
  dash?: number[];
  /**
   * What the legend says while no point is hovered, as in a screenshot or a printed page: the series over the
   * whole run (its mean and peak, the run's percentile), instead of uPlot's `--`.
   */
  legend: string;
}

/** A chart of the report: one x axis, some series; drawn by the page with uPlot. */
export interface ChartSpec {
  id: string;
  title: string;
  /** Unit of the y axis. */
  unit: string;
  /** `time`: x is epoch seconds; `percentile`: x is 1/(1-p) on a log axis. */
  kind: 'time' | 'percentile';
  x: number[];
  series: SeriesSpec[];
}

export const colors = {
  ok: '#1a7f37',
  throttled: '#d4a72c',
  error: '#cf222e',
  p50: '#0969da',
  p90: '#8250df',
  p99: '#cf222e',
  sent: '#0969da',
  received: '#1a7f37',
  inflight: '#0969da',
  limit: '#bc4c00',
  waiting: '#6639ba',
  minRtt: '#57606a',
};

const rate = (n: number, dt: number) => (dt > 0 ? Number((n / dt).toFixed(3)) : 0);
const errorResponses = (p: StatsPoint) =>
  Object.entries(p.status).reduce((n, [code, c]) => (code === '429' || code.startsWith('2') ? n : n + c), 0) +
  p.exceptions;

/**
 * The points with a gap where seconds are missing (shards of runs at different times, a stalled recorder): a
 * `null` second breaks the lines there, where a straight line across would draw traffic that never was.
 */
function withGaps(points: StatsPoint[]): (StatsPoint | { t: number; gap: true })[] {
  const out: (StatsPoint | { t: number; gap: true })[] = [];
  for (const p of points) {
    const before = out.at(-1);
    if (before !== undefined && p.t - before.t > 1) out.push({ t: before.t + 1, gap: true });
    out.push(p);
  }
  return out;
}

/** Mean over the seconds that have a value, each weighted by its length: a rate's mean is its total over the time. */
function weightedMean(values: (number | null)[], dts: number[]): number {
  let sum = 0;
  let seconds = 0;
  values.forEach((v, i) => {
    if (v === null) return;
    sum += v * dts[i];
    seconds += dts[i];
  });
  return seconds > 0 ? sum / seconds : 0;
}

const peak = (values: (number | null)[]) => values.reduce<number>((m, v) => (v !== null && v > m ? v : m), 0);
const lastValue = (values: (number | null)[]) => values.findLast((v) => v !== null) ?? 0;

/** The charts over time, one point a second, each series with its whole-run legend. `whole` is the run's latency histogram. */
export function timeCharts(recorded: StatsPoint[], whole: LatencyHistogram): ChartSpec[] {
  const points = withGaps(recorded);
  const x = points.map((p) => p.t);
  const dts = points.map((p) => ('gap' in p ? 0 : p.dt));
  const of = (f: (p: StatsPoint) => number | null) => points.map((p) => ('gap' in p ? null : f(p)));
  const meanPeak = (values: (number | null)[], unit = '') =>
    `mean ${figure(weightedMean(values, dts))}${unit} · max ${figure(peak(values))}${unit}`;
  const rateSeries = (label: string, color: string, values: (number | null)[]) => ({
    label,
    color,
    values,
    legend: meanPeak(values),
  });
  const inflight = of((p) => p.inflight);
  const limit = of((p) => p.inflightLimit);
  const charts: ChartSpec[] = [
    {
      id: 'throughput',
      title: 'Operations per second',
      unit: '/s',
      kind: 'time',
      x,
      series: [
        rateSeries(
          'ok/s',
          colors.ok,
          of((p) => rate(p.ok, p.dt)),
        ),
        rateSeries(
          '429/s',
          colors.throttled,
          of((p) => rate(p.status['429'] ?? 0, p.dt)),
        ),
        rateSeries(
          'errors/s',
          colors.error,
          of((p) => rate(errorResponses(p), p.dt)),
        ),
      ],
    },
    {
      id: 'inflight',
      title: 'In flight and the in-flight limit',
      unit: '',
      kind: 'time',
      x,
      // An adaptive feed runs at its limit: the two lines lie on each other. The limit is drawn last, wider and
      // dashed, so the count shows between its dashes and neither hides the other.
      series: [
        { label: 'in flight', color: colors.inflight, values: inflight, legend: meanPeak(inflight) },
        {
          label: 'limit',
          color: colors.limit,
          values: limit,
          width: 2.5,
          dash: [8, 6],
          legend: `last ${figure(lastValue(limit))} · max ${figure(peak(limit))}`,
        },
        // Where the knee was: a limit at it keeps few waiting beyond the shortest round trip; one past it, most.
        ...(recorded.some((p) => p.queueEstimate !== undefined)
          ? [waitingSeries(of((p) => (p.queueEstimate === undefined ? null : Number(p.queueEstimate.toFixed(1)))))]
          : []),
      ],
    },
  ];
  if (recorded.some((p) => p.histogram !== '')) {
    // A second without a response has no latency: a gap, not a zero that would read as fast.
    const ms = (f: (p: StatsPoint) => number) => of((p) => (p.histogram === '' ? null : f(p)));
    const latency = (label: string, color: string, p: number, values: (number | null)[]) => ({
      label,
      color,
      values,
      legend: `run ${figure(percentileMs(whole, p))} ms · worst second ${figure(peak(values))} ms`,
    });
    charts.push({
      id: 'latency',
      title: 'Latency per second (ms)',
      unit: 'ms',
      kind: 'time',
      x,
      series: [
        latency(
          'p50',
          colors.p50,
          50,
          ms((p) => p.p50Ms),
        ),
        latency(
          'p90',
          colors.p90,
          90,
          ms((p) => p.p90Ms),
        ),
        latency(
          'p99',
          colors.p99,
          99,
          ms((p) => p.p99Ms),
        ),
        ...(recorded.some((p) => p.minRttMs !== undefined)
          ? [minRttSeries(of((p) => (p.minRttMs === undefined ? null : Number(p.minRttMs.toFixed(2)))))]
          : []),
      ],
    });
  }
  const series: SeriesSpec[] = [];
  if (recorded.some((p) => p.sentBytes > 0))
    series.push(
      rateSeries(
        'sent MB/s',
        colors.sent,
        of((p) => rate(p.sentBytes / 1e6, p.dt)),
      ),
    );
  series.push(
    rateSeries(
      'received MB/s',
      colors.received,
      of((p) => rate(p.receivedBytes / 1e6, p.dt)),
    ),
  );
  charts.push({ id: 'bytes', title: 'Megabytes per second', unit: 'MB/s', kind: 'time', x, series });
  return charts;
}

/** The adaptive limit's estimate of how many in flight wait beyond the shortest round trip. */
function waitingSeries(values: (number | null)[]): SeriesSpec {
  const known = values.filter((v): v is number => v !== null);
  const mean = known.length > 0 ? known.reduce((a, b) => a + b, 0) / known.length : 0;
  return {
    label: 'waiting (estimate)',
    color: colors.waiting,
    values,
    dash: [3, 3],
    legend: `mean ${figure(mean)} · max ${figure(peak(values))}`,
  };
}

/** The shortest round trip the adaptive limit saw of late: the latency with nothing queued. */
function minRttSeries(values: (number | null)[]): SeriesSpec {
  return {
    label: 'shortest round trip',
    color: colors.minRtt,
    values,
    dash: [3, 3],
    legend: `last ${figure(lastValue(values))} ms`,
  };
}

/** The latency of the whole run by percentile, HdrHistogram style; none when no response was timed. */
export function distributionChart(whole: LatencyHistogram): ChartSpec | undefined {
  const dist = latencyDistribution(whole);
  if (dist.x.length === 0) return undefined;
  const at = (p: number) => figure(percentileMs(whole, p));
  return {
    id: 'distribution',
    title: 'Latency by percentile (ms), whole run',
    unit: 'ms',
    kind: 'percentile',
    x: dist.x,
    series: [
      {
        label: 'latency',
        color: colors.p99,
        values: dist.ms,
        legend: `p50 ${at(50)} · p99 ${at(99)} · p99.9 ${at(99.9)} · max ${figure(whole.maxValue / 1000)} ms`,
      },
    ],
  };
}
