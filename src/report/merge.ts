import { VespaBulkError } from '../core/errors.js';
import { mergeQueueReadings, type QueueReading } from '../limit/limit-search.js';
import { decodeHistogram, emptyLatencyHistogram, encodeHistogram, percentileMs } from './histogram.js';
import type { RecordedRun, StatsPoint, SummaryLine } from './stats-format.js';

/**
 * One run from the shards of a load run on several machines: points of the same wall-clock second added (their
 * histograms merged exactly, percentiles taken again from the merge), steps of the same name joined, summaries
 * added with rates recomputed over the span of all shards, and the parameters of every shard kept.
 * @example
 * ```ts
 * import { writeFileSync } from 'node:fs';
 * import { mergeRuns, readStatsFile, renderReport } from 'vespa-bulk/report';
 *
 * // One report of a feed sharded over two machines (`shard: 0/2` and `1/2`), each with its stats file.
 * const run = mergeRuns(['shard-0.stats.jsonl', 'shard-1.stats.jsonl'].map(readStatsFile));
 * writeFileSync('feed.html', renderReport(run));
 * ```
 */
export function mergeRuns(runs: readonly RecordedRun[]): RecordedRun {
  if (runs.length === 0) throw new VespaBulkError('VB_USAGE', 'no stats file to merge');
  if (runs.length === 1) return runs[0];
  const bySecond = new Map<number, StatsPoint[]>();
  for (const run of runs) for (const p of run.points) bySecond.set(p.t, [...(bySecond.get(p.t) ?? []), p]);
  const points = [...bySecond.keys()].sort((a, b) => a - b).map((t) => mergePoints(t, bySecond.get(t)!));
  const steps = new Map<string, RecordedRun['steps'][number]>();
  for (const run of runs) {
    for (const s of run.steps) {
      const seen = steps.get(s.name);
      steps.set(
        s.name,
        seen === undefined
          ? { ...s }
          : {
              ...seen,
              start: Math.min(seen.start, s.start),
              end: Math.max(seen.end, s.end),
              ...(s.targetRate !== undefined && { targetRate: (seen.targetRate ?? 0) + s.targetRate }),
            },
      );
    }
  }
  const summaries = runs.map((r) => r.summary).filter((s): s is SummaryLine => s !== undefined);
  const merged: RecordedRun = {
    params: runs.flatMap((r) => r.params),
    points,
    steps: [...steps.values()].sort((a, b) => a.start - b.start),
  };
  if (summaries.length === runs.length) merged.summary = mergeSummaries(runs, summaries);
  return merged;
}

function mergePoints(t: number, points: StatsPoint[]): StatsPoint {
  const h = emptyLatencyHistogram();
  const status: Record<string, number> = {};
  const sum = (f: (p: StatsPoint) => number) => points.reduce((n, p) => n + f(p), 0);
  for (const p of points) {
    if (p.histogram !== '') h.add(decodeHistogram(p.histogram));
    for (const [code, n] of Object.entries(p.status)) status[code] = (status[code] ?? 0) + n;
  }
  return {
    type: 'point',
    t,
    // The shards' seconds are the same second; a partial one on every shard stays partial.
    dt: Math.max(...points.map((p) => p.dt)),
    ok: sum((p) => p.ok),
    failed: sum((p) => p.failed),
    retries: sum((p) => p.retries),
    status,
    exceptions: sum((p) => p.exceptions),
    inflight: sum((p) => p.inflight),
    inflightLimit: sum((p) => p.inflightLimit),
    ...mergeQueueReadings(points.map(queueReadingOf)),
    sentBytes: sum((p) => p.sentBytes),
    receivedBytes: sum((p) => p.receivedBytes),
    p50Ms: percentileMs(h, 50),
    p90Ms: percentileMs(h, 90),
    p99Ms: percentileMs(h, 99),
    histogram: h.totalCount === 0 ? '' : encodeHistogram(h),
  };
}

function mergeSummaries(runs: readonly RecordedRun[], summaries: SummaryLine[]): SummaryLine {
  const h = emptyLatencyHistogram();
  for (const s of summaries) if (s.histogram !== '') h.add(decodeHistogram(s.histogram));
  const starts = runs.map((r) => Date.parse(r.params[0].startTime));
  const end = Math.max(...summaries.map((s) => s.end));
  // The shards ran side by side: the merged run lasts from the first start to the last end.
  const seconds = Math.max(1e-6, (end - Math.min(...starts)) / 1000);
  return {
    type: 'summary',
    end,
    seconds: Number(seconds.toFixed(3)),
    summary: addSummaries(
      summaries.map((s) => s.summary),
      seconds,
      h,
    ),
    histogram: encodeHistogram(h),
  };
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Maps of latency figures by a key (the answers' latency per status: `{"200": {count, min, avg, p50, p99, max}}`)
 * added key by key: counts summed, min and max as such, the mean weighted by the counts. Percentiles are left out
 * where several shards have them: without each status's histogram they cannot be added, and a figure made up
 * would read as measured.
 */
function addFigures(maps: Record<string, unknown>[]): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const key of new Set(maps.flatMap((m) => Object.keys(m)))) {
    const parts = maps.map((m) => m[key]).filter(isRecord);
    if (parts.length === 1) {
      out[key] = parts[0] as Record<string, number>;
      continue;
    }
    const of = (name: string) => parts.map((p) => p[name]).filter((n): n is number => typeof n === 'number');
    const counts = parts.map((p) => (typeof p.count === 'number' ? p.count : 0));
    const count = counts.reduce((a, b) => a + b, 0);
    const figures: Record<string, number> = { count };
    if (of('min').length === parts.length) figures.min = Math.min(...of('min'));
    if (of('avg').length === parts.length && count > 0)
      figures.avg = Number((parts.reduce((n, p, i) => n + (p.avg as number) * counts[i], 0) / count).toFixed(3));
    if (of('max').length === parts.length) figures.max = Math.max(...of('max'));
    out[key] = figures;
  }
  return out;
}

/**
 * The shards' summaries added key by key: counts and bytes summed, maps of counts summed per key, rates
 * (`.rate`, `MBps`) recomputed from the summed counts over `seconds`, latency figures taken from the merged
 * histogram, min and max as such, flags true only when true for all.
 */
export function addSummaries(
  summaries: readonly Record<string, unknown>[],
  seconds: number,
  latencyUs = emptyLatencyHistogram(),
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const round = (n: number) => Number(n.toFixed(3));
  const keys = [...new Set(summaries.flatMap((s) => Object.keys(s)))];
  for (const key of keys) {
    const values = summaries.map((s) => s[key]).filter((v) => v !== undefined);
    if (values.every((v) => typeof v === 'number')) {
      const nums = values;
      if (/latency/.test(key) && latencyUs.totalCount > 0) {
        const m = /\.(min|avg|max|p(\d+))$/.exec(key);
        const which = m?.[1];
        if (which === 'min') out[key] = round(latencyUs.minNonZeroValue / 1000);
        else if (which === 'max') out[key] = round(latencyUs.maxValue / 1000);
        else if (which === 'avg') out[key] = round(latencyUs.mean / 1000);
        else if (m?.[2] !== undefined)
          out[key] = round(percentileMs(latencyUs, Number(`${m[2].slice(0, 2)}.${m[2].slice(2)}`)));
        else out[key] = Math.max(...nums);
      } else if (/seconds$/.test(key)) out[key] = round(seconds);
      else if (/\.min$/.test(key)) out[key] = Math.min(...nums);
      else if (/\.max$/.test(key)) out[key] = Math.max(...nums);
      else out[key] = nums.reduce((a, b) => a + b, 0);
    } else if (values.every((v) => typeof v === 'boolean')) {
      out[key] = values.every((v) => v === true);
    } else if (values.every(isRecord)) {
      if (values.some((v) => Object.values(v).some(isRecord))) {
        out[key] = addFigures(values);
        continue;
      }
      const sum: Record<string, number> = {};
      for (const v of values)
        for (const [k, n] of Object.entries(v)) if (typeof n === 'number') sum[k] = (sum[k] ?? 0) + n;
      out[key] = sum;
    } else {
      out[key] = values.length === 1 ? values[0] : values;
    }
  }
  // Rates: recomputed from the summed count or bytes beside them, over the whole span.
  for (const key of Object.keys(out)) {
    const rate = /^(.*)\.rate$/.exec(key);
    if (rate !== null) {
      const count = out[`${rate[1]}.count`];
      if (typeof count === 'number') out[key] = round(count / seconds);
    }
    const mbps = /^(.*)\.MBps$/.exec(key);
    if (mbps !== null) {
      const bytes = out[`${mbps[1]}.bytes`];
      if (typeof bytes === 'number') out[key] = round(bytes / 1e6 / seconds);
    }
  }
  return out;
}

/** A shard's queue reading, where its point has one (the recorder writes both levels or neither). */
function queueReadingOf(p: StatsPoint): QueueReading | undefined {
  return p.minRttMs === undefined || p.queueEstimate === undefined
    ? undefined
    : { minRttMs: p.minRttMs, queueEstimate: p.queueEstimate };
}
