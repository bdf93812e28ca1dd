/**
 * A visit against `vespa-bulk serve` as a user meets it in the first minutes, the simulator of this tree against the
 * simulator of `--base` (a commit built in a temporary worktree), in the same run. Both are started as `serve` from
 * their built CLI and fed the same N documents of ~1 KB by this tree's `feed`; this tree's CLI then visits each with
 * its defaults (256 slices, as many in flight as pay), `--slices 1`, `--slices 256`, and the whole cluster (no
 * document type: the default and the global bucket space, 256 chains each), in rounds that alternate which
 * simulator goes first. Only the simulator differs between the two columns. Prints each visit's seconds and
 * documents/s (the median round's) and "vs before": the median over rounds of this tree's documents/s over the
 * base's.
 *   npx tsx benchmarks/visit/serve.ts [--base main] [--documents 80603] [--rounds 2]
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildCommit } from '../lib/baseline-build.js';
import { median, medianBy, printTable } from '../lib/child.js';
import { buildDist, cliOf, fmt, generatePuts, runCliFeed } from '../lib/cli-feed.js';
import { serve } from '../lib/serve-cli.js';

const { values } = parseArgs({
  options: {
    base: { type: 'string', default: 'main' },
    documents: { type: 'string', default: '80603' },
    rounds: { type: 'string', default: '2' },
  },
});
const documents = Number(values.documents);
const rounds = Number(values.rounds);

interface VisitRun {
  seconds: number;
  rate: number;
}

/** One `visit` by this tree's CLI into /dev/null; its summary's own clock (from the first request). */
async function visit(url: string, args: string[]): Promise<VisitRun> {
  const child = spawn(process.execPath, [cliOf(), 'visit', ...args, '-t', url, '-o', '/dev/null', '--quiet'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  const summary = JSON.parse(out) as Record<string, number>;
  if (code !== 0 || summary['visit.document.count'] !== documents)
    throw new Error(
      `visit ${args.join(' ')} exited ${code} with ${summary['visit.document.count']} of ${documents} documents`,
    );
  return { seconds: summary['visit.seconds'], rate: summary['visit.document.rate'] };
}

const visits: Array<[string, string[]]> = [
  ['defaults', ['ns/music']],
  ['--slices 1', ['ns/music', '--slices', '1']],
  ['--slices 256', ['ns/music', '--slices', '256']],
  ['whole cluster (both bucket spaces)', []],
];

const load = (): string => loadavg()[0].toFixed(1);
const loadBefore = load();
const work = mkdtempSync(join(tmpdir(), 'vb-visit-serve-'));
const before = await buildCommit(values.base);
try {
  await buildDist();
  const input = join(work, 'puts.jsonl');
  await generatePuts(input, documents);
  const sims = [
    { name: 'this tree', server: await serve(cliOf()) },
    { name: `before (${values.base} = ${before.hash.slice(0, 10)})`, server: await serve(before.cli) },
  ];
  try {
    for (const sim of sims) {
      const fed = await runCliFeed({ target: sim.server.url, input, count: documents, cwd: work });
      if (fed.ok !== documents) throw new Error(`fed ${fed.ok} of ${documents} documents to ${sim.name}`);
    }
    const rows: Array<Record<string, string>> = [];
    for (const [label, args] of visits) {
      const runs = sims.map((): VisitRun[] => []);
      for (let r = 0; r < rounds; r++) {
        for (const j of r % 2 === 0 ? [0, 1] : [1, 0]) runs[j].push(await visit(sims[j].server.url, args));
      }
      const [ours, base] = runs;
      for (const [j, sim] of sims.entries()) {
        const typical = medianBy(runs[j], (x) => x.rate);
        rows.push({
          visit: label,
          simulator: sim.name,
          seconds: fmt(typical.seconds, 1),
          'docs/s': fmt(typical.rate),
          'each round, s': runs[j].map((x) => fmt(x.seconds, 1)).join(' '),
          'vs before, docs/s': j === 0 ? fmt(median(ours.map((x, i) => x.rate / base[i].rate)), 1) : '',
        });
      }
    }
    printTable(
      `visit of ${documents} documents (~1 KB) against serve, this tree's CLI; ${rounds} alternating rounds; load ${loadBefore} -> ${load()}`,
      rows,
    );
  } finally {
    for (const sim of sims) await sim.server.stop();
  }
} finally {
  before.remove();
  rmSync(work, { recursive: true, force: true });
}
