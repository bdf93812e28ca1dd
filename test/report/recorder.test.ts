import { describe, expect, it } from 'vitest';
import { RunRecorder } from '../../src/report/recorder.js';
import { emptyLatencyHistogram } from '../../src/report/histogram.js';
import type { RunSample } from '../../src/report/sample.js';
import type { StatsPoint } from '../../src/report/stats-format.js';

function sample(ok: number): RunSample {
  return {
    ok,
    failed: 0,
    retries: 0,
    status: {},
    exceptions: 0,
    inflight: 0,
    inflightLimit: 1,
    sentBytes: 0,
    receivedBytes: 0,
    latencyUs: emptyLatencyHistogram(),
  };
}

/** Blocks the event loop, as a long GC or a starved machine does. */
function stall(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until);
}

describe('RunRecorder', () => {
  it('after a stall longer than a second, skips no second and makes no near-empty point', async () => {
    let ok = 0;
    const points: StatsPoint[] = [];
    let seen: (() => void) | undefined;
    const recorder = new RunRecorder({
      params: {
        command: 'feed',
        target: 'http://127.0.0.1:1',
        flags: {},
        tool: 'test',
        host: 'test',
        startTime: new Date().toISOString(),
      },
      sample: () => sample(ok),
      onLine: (line) => {
        if (line.type !== 'point') return;
        points.push(line);
        seen?.();
      },
    });
    const pointsSeen = (n: number) =>
      new Promise<void>((resolve) => {
        seen = () => {
          if (points.length >= n) resolve();
        };
      });
    await pointsSeen(1);
    ok += 10;
    stall(2300);
    await pointsSeen(6);
    ok += 5;
    const run = recorder.finish({});
    for (let i = 1; i < run.points.length; i++) expect(run.points[i].t).toBe(run.points[i - 1].t + 1);
    for (const p of run.points.slice(1, -1)) expect(p.dt).toBeGreaterThan(0.5);
    expect(run.points.reduce((n, p) => n + p.ok, 0)).toBe(15);
  });
});
