/**
 * The functions with the most self time in a `node --cpu-prof` profile (issue 44's before/after tables in
 * docs/measurements.md): idle, busy, and the top N by self time with their share of the busy time.
 *
 *   node --cpu-prof --cpu-prof-dir=prof dist/cli/main.js feed -q -t http://127.0.0.1:PORT puts.jsonl
 *   npx tsx benchmarks/feed/cpu-profile-top.ts prof/*.cpuprofile [--top 15]
 *
 * The profiler samples wall time on the main thread: a thread preempted inside a system call (the socket's write
 * wakes the server on a shared core) is counted in that call, so on a loaded machine `writeBuffer` and `read` read
 * high; `perf record` counts CPU.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({
  options: { top: { type: 'string', default: '15' } },
  allowPositionals: true,
});
for (const file of positionals) {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let total = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const f = byId.get(p.samples[i])!.callFrame;
    const where =
      f.url === '' ? '' : ` ${f.url.replace(/.*\/dist\//, '').replace(/^file:\/\/.*\//, '')}:${f.lineNumber + 1}`;
    const key = `${f.functionName || '(anonymous)'}${where}`;
    const dt = p.timeDeltas[i] ?? 0;
    self.set(key, (self.get(key) ?? 0) + dt);
    total += dt;
  }
  const idle = self.get('(idle)') ?? 0;
  const busy = total - idle;
  process.stdout.write(
    `${file}: ${(total / 1e6).toFixed(2)} s sampled, ${(idle / 1e6).toFixed(2)} s idle, ${(busy / 1e6).toFixed(2)} s busy\n\n| self ms | of busy | function |\n|---|---|---|\n`,
  );
  const top = [...self].filter(([k]) => k !== '(idle)').sort((a, b) => b[1] - a[1]);
  for (const [k, t] of top.slice(0, Number(values.top)))
    process.stdout.write(`| ${(t / 1e3).toFixed(0)} | ${((100 * t) / busy).toFixed(1)} % | \`${k}\` |\n`);
}
