import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Feeder } from '../../src/feed/feeder.js';
import { RunRecorder } from '../../src/report/recorder.js';
import { feedSummaryJson } from '../../src/cli/summary-names.js';
import { feedSampler } from '../../src/report/sample.js';
import { StatsFileWriter } from '../../src/report/stats-file.js';
import { decodeHistogram, emptyLatencyHistogram, encodeHistogram, percentileMs } from '../../src/report/histogram.js';
import type { RecordedRun, StatsPoint } from '../../src/report/stats-format.js';

/** Writes `count` put operations (ids `prefix-N`) to `dir/name` and returns its path. */
export function writeDocs(dir: string, name: string, count: number, prefix = 'd'): string {
  const lines: string[] = [];
  for (let i = 0; i < count; i++)
    lines.push(
      JSON.stringify({
        put: `id:music:music::${prefix}-${i}`,
        fields: { title: `song ${i} ${'x'.repeat(120)}`, n: i },
      }),
    );
  const path = join(dir, name);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

/**
 * Feeds `file` to `endpoint` in this process with a recorder writing `stats`: one shard of a load run. With
 * `steps`, the run is marked in steps of `stepMs` each, as a stepped bench would.
 */
export async function recordFeed(
  endpoint: string,
  file: string,
  stats: string,
  options: { host?: string; steps?: string[]; stepMs?: number } = {},
): Promise<RecordedRun> {
  const feeder = new Feeder({ endpoint });
  const writer = new StatsFileWriter(stats);
  const recorder = new RunRecorder({
    params: {
      command: 'feed',
      target: endpoint,
      flags: { files: [file] },
      tool: 'vespa-bulk test',
      host: options.host ?? 'test',
      startTime: new Date().toISOString(),
    },
    sample: feedSampler(feeder),
    onLine: (line) => writer.write(line),
  });
  const steps = [...(options.steps ?? [])];
  let timer: NodeJS.Timeout | undefined;
  const next = () => {
    const name = steps.shift();
    if (name === undefined) return;
    recorder.step(name, Number.parseInt(name, 10) || undefined);
    timer = setTimeout(next, options.stepMs ?? 1000);
  };
  next();
  try {
    const outcome = await feeder.run(file);
    return recorder.finish(feedSummaryJson(outcome.summary));
  } finally {
    clearTimeout(timer);
    writer.close();
  }
}

/**
 * A recorded adaptive bench made up here, as `vespa-bulk bench` without `--rate` records one: one step with the
 * bench's verdict but no asked rate and no held, and the in-flight count on its limit every second (an adaptive
 * feed runs at its limit), the case where one line could hide the other.
 */
export function adaptiveBenchRun(): RecordedRun {
  const t0 = 1_790_000_000;
  const limits = [64, 256, 128, 100, 32, 16, 32, 32, 32, 32];
  const points: StatsPoint[] = limits.map((limit, i) => {
    const h = emptyLatencyHistogram();
    for (let n = 1; n <= 200; n++) h.recordValue(n * (i + 1) * 50);
    return {
      type: 'point',
      t: t0 + i + 1,
      dt: 1,
      ok: 1000 + 200 * i,
      failed: 0,
      retries: 0,
      status: { '200': 1000 + 200 * i },
      exceptions: 0,
      inflight: limit,
      inflightLimit: limit,
      // Past the knee at first (most of the limit waiting), at it later.
      minRttMs: 2.5,
      queueEstimate: limit * (i < 4 ? 0.6 : 0.1),
      sentBytes: 300_000,
      receivedBytes: 90_000,
      p50Ms: percentileMs(h, 50),
      p90Ms: percentileMs(h, 90),
      p99Ms: percentileMs(h, 99),
      histogram: encodeHistogram(h),
    };
  });
  const whole = emptyLatencyHistogram();
  for (const p of points) whole.add(decodeHistogram(p.histogram));
  const ok = points.reduce((n, p) => n + p.ok, 0);
  return {
    params: [
      {
        type: 'run',
        format: 1,
        command: 'bench',
        target: 'http://127.0.0.1:8080',
        flags: { app: 'samples/app', duration: 10 },
        tool: 'vespa-bulk test',
        host: 'test',
        startTime: new Date(t0 * 1000).toISOString(),
      },
    ],
    points,
    steps: [
      {
        type: 'step',
        name: 'adaptive',
        start: t0 * 1000,
        end: (t0 + 10) * 1000,
        verdict: { achievedRate: ok / 10, p99Ms: percentileMs(whole, 99) },
      },
    ],
    summary: {
      type: 'summary',
      end: (t0 + 10) * 1000,
      seconds: 10,
      summary: {
        profile: 'adaptive',
        'feeder.ok.count': ok,
        'feeder.ok.rate': ok / 10,
        'feeder.inflight.limit': 32,
        'http.response.latency.millis.p99': percentileMs(whole, 99),
        'http.protocol': 'h2',
      },
      histogram: encodeHistogram(whole),
    },
  };
}
