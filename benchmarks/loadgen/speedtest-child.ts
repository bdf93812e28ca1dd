/**
 * `feed --speedtest` in its own process, as autocannon runs in its own: argument = JSON of
 * `{url, bytes, seconds, connections, pipelining}`; prints the feed summary as JSON on stdout.
 */
import { feed } from '../../src/feed/feeder.js';
import { speedtestSource } from '../../src/bench/speedtest.js';
// The CLI's printed names: bench/loadgen/run.ts reads them as it reads the CLI's.
import { feedSummaryJson } from '../../src/cli/summary-names.js';

const { url, bytes, seconds, connections, pipelining } = JSON.parse(process.argv[2] ?? '{}') as {
  url: string;
  bytes: number;
  seconds: number;
  connections: number;
  pipelining: number;
};
const summary = await feed(speedtestSource(bytes, seconds), { endpoint: url, dryRun: true, connections, pipelining });
process.stdout.write(`${JSON.stringify(feedSummaryJson(summary))}\n`);
