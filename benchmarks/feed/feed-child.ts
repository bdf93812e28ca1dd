/**
 * Runs one feed in its own process so its CPU profile and peak RSS are its own. Argument: JSON of
 * `{source, options}`; prints `{summary, maxRssMB, series}` as JSON on stdout, where `series` is successful
 * operations per 100 ms.
 */
import { Feeder } from '../../src/feed/feeder.js';
import type { FeedOptions } from '../../src/feed/options.js';
import { feedSummaryJson } from '../../src/cli/summary-names.js';

const { source, options } = JSON.parse(process.argv[2] ?? '{}') as { source: string | string[]; options: FeedOptions };
const bucketMs = 100;
const series: number[] = [];
let t0 = 0;
let peakRss = 0;
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage.rss());
}, 50);
const feeder = new Feeder({
  ...options,
  failures: false,
  checkpoint: false,
  onResult: (r) => {
    if (!r.ok) return;
    const b = Math.floor((performance.now() - t0) / bucketMs);
    while (series.length <= b) series.push(0);
    series[b]++;
  },
});
t0 = performance.now();
const outcome = await feeder.run(source);
clearInterval(sampler);
peakRss = Math.max(peakRss, process.resourceUsage().maxRSS * 1024);
// The CLI's printed names: run.ts reads this summary as it reads the CLI's.
process.stdout.write(
  `${JSON.stringify({ summary: feedSummaryJson(outcome.summary), maxRssMB: peakRss / 1e6, series })}\n`,
);
