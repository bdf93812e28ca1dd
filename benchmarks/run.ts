/**
 * `npm run bench [-- server|feed|client|visit|validate|loadgen ...]`: every benchmark, one after the other (they would distort each
 * other if run together on a small machine). Each prints its figures as ratios to a baseline measured in
 * the same run. The soak run (benchmarks/soak/run.ts) is separate: it takes minutes.
 */
import { spawnSync } from 'node:child_process';

const suites: Record<string, string[]> = {
  server: ['benchmarks/server/put-throughput.ts'],
  feed: ['benchmarks/feed/run.ts'],
  client: ['benchmarks/feed/null-endpoint.ts'],
  visit: ['benchmarks/visit/run.ts'],
  validate: ['benchmarks/validate/run.ts'],
  loadgen: ['benchmarks/loadgen/run.ts'],
  jetty: ['benchmarks/jetty/run.ts'],
};
const picked = process.argv.slice(2).filter((a) => a in suites);
let failed = 0;
for (const name of picked.length > 0 ? picked : Object.keys(suites)) {
  for (const script of suites[name]) {
    process.stdout.write(`\n=== ${name}: ${script}\n`);
    const r = spawnSync(process.execPath, ['--import', 'tsx', script], { stdio: 'inherit' });
    if (r.status !== 0) failed++;
  }
}
process.exitCode = failed > 0 ? 1 : 0;
