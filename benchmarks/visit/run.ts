/**
 * Export throughput: `vespa-bulk visit --slices 4 -o FILE` (a child process) against the wire floor, a plain
 * download of the same four streamed slices with undici into nothing, in the same run, from a simulator
 * seeded with N documents of about 1 KB (its own process). Prints documents/s of each, their ratio
 * (target >= 0.8) and the exporter's peak RSS (target < 200 MB). The same export to a file runs twice per round,
 * once with direct I/O (O_DIRECT, VESPA_BULK_DIRECT_IO=1) and once through the page cache (VESPA_BULK_DIRECT_IO=0),
 * each with the exporter's CPU time (user + system, from /usr/bin/time) and peak RSS, so one run says whether
 * direct writes pay on this machine; a last row exports into /dev/null.
 *   npx tsx benchmarks/visit/run.ts [--documents 1000000] [--rounds 2]
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { median, printTable, startChildServer } from '../lib/child.js';
import { directIoOption } from '../../src/cli/commands/visit.js';
import { bundleCli } from './bundle.js';

const { values } = parseArgs({
  options: {
    documents: { type: 'string', default: '1000000' },
    rounds: { type: 'string', default: '2' },
    slices: { type: 'string', default: '4' },
  },
});
const documents = Number(values.documents);
const rounds = Number(values.rounds);
const slices = Number(values.slices);
const here = fileURLToPath(new URL('.', import.meta.url));

/** The floor: each slice's streamed chain downloaded and dropped; only the last line is looked at, for the next token. */
async function wireFloor(url: string): Promise<{ seconds: number; bytes: number }> {
  const pool = new Pool(url, { connections: slices });
  let bytes = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: slices }, async (_, sliceId) => {
      let continuation: string | undefined;
      do {
        const q = new URLSearchParams({ stream: 'true', slices: String(slices), sliceId: String(sliceId) });
        if (continuation !== undefined) q.set('continuation', continuation);
        const res = await pool.request({
          method: 'GET',
          path: `/document/v1/bench/music/docid/?${q.toString()}`,
          headers: { accept: 'application/jsonl' },
        });
        let tail = '';
        for await (const chunk of res.body as AsyncIterable<Buffer>) {
          bytes += chunk.length;
          tail =
            chunk.length >= 512
              ? chunk.toString('latin1', chunk.length - 512)
              : (tail + chunk.toString('latin1')).slice(-512);
        }
        const last = tail.trimEnd().split('\n').pop()!;
        const token = (JSON.parse(last) as { continuation?: { token?: string } }).continuation?.token;
        continuation = token;
      } while (continuation !== undefined);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  return { seconds, bytes };
}

/** The exporter as users run it; its own summary gives the visit time, /usr/bin/time its peak RSS. */
function exporter(
  bundle: string,
  url: string,
  out: string,
  env: NodeJS.ProcessEnv = {},
): Promise<{
  seconds: number;
  documents: number;
  maxRssBytes: number | undefined;
  cpuSeconds: number | undefined;
  outputBytes: number;
}> {
  const args = [
    ...(process.env.VISIT_BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.VISIT_BENCH_PROFILE}`] : []),
    bundle,
    'visit',
    'bench/music',
    '-t',
    url,
    '--slices',
    String(slices),
    '-o',
    out,
    '--quiet',
  ];
  const useTime = (() => {
    try {
      return statSync('/usr/bin/time').isFile();
    } catch {
      return false;
    }
  })();
  const [cmd, argv] = useTime ? ['/usr/bin/time', ['-v', process.execPath, ...args]] : [process.execPath, args];
  return new Promise((resolve, reject) => {
    execFile(
      cmd,
      argv,
      { env: { ...process.env, ...env }, maxBuffer: 64 << 20, timeout: 600_000 },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`exporter failed: ${err.message}\n${stderr}`));
        const summary = JSON.parse(stdout) as Record<string, number>;
        const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderr);
        const user = /User time \(seconds\): ([\d.]+)/.exec(stderr);
        const system = /System time \(seconds\): ([\d.]+)/.exec(stderr);
        resolve({
          seconds: summary['visit.seconds'],
          documents: summary['visit.document.count'],
          maxRssBytes: rss ? Number(rss[1]) * 1024 : undefined,
          cpuSeconds: user && system ? Number(user[1]) + Number(system[1]) : undefined,
          outputBytes: summary['output.bytes'],
        });
      },
    );
  });
}

const seedStarted = performance.now();
const sim = await startChildServer(join(here, 'seeded-sim.ts'), [], { VISIT_BENCH_DOCUMENTS: String(documents) });
process.stderr.write(`seeded ${documents} documents in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s\n`);
const dir = mkdtempSync(join(tmpdir(), 'vb-visit-bench-'));
try {
  const bundle = bundleCli(dir);
  // Warm-up: the simulator serialises each document once and caches it; neither side should pay for that.
  const warm = await wireFloor(sim.url);
  process.stderr.write(`warm-up: ${(warm.bytes / 1e6).toFixed(0)} MB in ${warm.seconds.toFixed(1)} s\n`);
  const floorRates: number[] = [];
  const nullRates: number[] = [];
  const rss: number[] = [];
  const rows: Array<Record<string, string | number>> = [];
  /** The two ways of writing the file, measured on the same data in the same run. */
  const fileModes = [
    {
      name: 'direct I/O',
      env: { VESPA_BULK_DIRECT_IO: '1' },
      rates: [] as number[],
      cpu: [] as number[],
      rss: [] as number[],
    },
    {
      name: 'page cache',
      env: { VESPA_BULK_DIRECT_IO: '0' },
      rates: [] as number[],
      cpu: [] as number[],
      rss: [] as number[],
    },
  ];
  const exportRow = (
    round: number,
    what: string,
    ex: Awaited<ReturnType<typeof exporter>>,
  ): Record<string, string | number> => ({
    round,
    run: what,
    seconds: ex.seconds.toFixed(2),
    'docs/s': Math.round(ex.documents / ex.seconds),
    'MB/s': (ex.outputBytes / 1e6 / ex.seconds).toFixed(0),
    'CPU s': ex.cpuSeconds === undefined ? '?' : ex.cpuSeconds.toFixed(2),
    'peak RSS MB': ex.maxRssBytes === undefined ? '?' : (ex.maxRssBytes / 2 ** 20).toFixed(0),
  });
  for (let r = 0; r < rounds; r++) {
    const floor = await wireFloor(sim.url);
    floorRates.push(documents / floor.seconds);
    rows.push({
      round: r + 1,
      run: 'wire floor (undici -> nothing)',
      seconds: floor.seconds.toFixed(2),
      'docs/s': Math.round(documents / floor.seconds),
      'MB/s': (floor.bytes / 1e6 / floor.seconds).toFixed(0),
      'CPU s': '-',
      'peak RSS MB': '-',
    });
    const out = join(dir, `export-${r}.jsonl`);
    // Alternate which mode goes first, so neither always meets the other's dirty pages being written back.
    for (const mode of r % 2 === 0 ? fileModes : [...fileModes].reverse()) {
      const ex = await exporter(bundle, sim.url, out, mode.env);
      if (ex.documents !== documents)
        throw new Error(`exporter wrote ${ex.documents} documents, expected ${documents}`);
      mode.rates.push(ex.documents / ex.seconds);
      if (ex.cpuSeconds !== undefined) mode.cpu.push(ex.cpuSeconds);
      if (ex.maxRssBytes !== undefined) {
        rss.push(ex.maxRssBytes);
        mode.rss.push(ex.maxRssBytes);
      }
      rows.push(exportRow(r + 1, `vespa-bulk visit --slices ${slices} -o file, ${mode.name}`, ex));
      rmSync(out, { force: true });
    }
    // The same export into /dev/null: the visitor's own cost, without the file's.
    const exNull = await exporter(bundle, sim.url, '/dev/null');
    nullRates.push(exNull.documents / exNull.seconds);
    if (exNull.maxRssBytes !== undefined) rss.push(exNull.maxRssBytes);
    rows.push(exportRow(r + 1, `vespa-bulk visit --slices ${slices} -o /dev/null`, exNull));
  }
  printTable(`Export of ${documents} documents (~1 KB) with ${slices} slices`, rows);
  const floorMedian = median(floorRates);
  const [direct, cached] = fileModes as [(typeof fileModes)[0], (typeof fileModes)[0]];
  const byDefault = (directIoOption(undefined).directIo ?? true) ? direct : cached;
  const mb = (bytes: number[]): string => (bytes.length ? `${(Math.max(...bytes) / 2 ** 20).toFixed(0)} MB` : '?');
  const cpu = (seconds: number[]): string => (seconds.length ? `${median(seconds).toFixed(2)} s` : '?');
  process.stdout.write(
    `\nexport to file / wire floor (median docs/s): ${(median(byDefault.rates) / floorMedian).toFixed(2)}  (target >= 0.80; ${byDefault.name}, the default)\n` +
      `  direct I/O / wire floor:                  ${(median(direct.rates) / floorMedian).toFixed(2)}  (VESPA_BULK_DIRECT_IO=1)\n` +
      `  page cache / wire floor:                  ${(median(cached.rates) / floorMedian).toFixed(2)}  (VESPA_BULK_DIRECT_IO=0)\n` +
      `  direct I/O / page cache, docs/s:          ${(median(direct.rates) / median(cached.rates)).toFixed(2)}\n` +
      `  exporter CPU (user+sys, median):          direct I/O ${cpu(direct.cpu)}, page cache ${cpu(cached.cpu)}\n` +
      `  exporter peak RSS:                        direct I/O ${mb(direct.rss)}, page cache ${mb(cached.rss)}\n` +
      `export to /dev/null / wire floor:            ${(median(nullRates) / floorMedian).toFixed(2)}\n` +
      `exporter peak RSS: ${rss.length ? `${(Math.max(...rss) / 2 ** 20).toFixed(0)} MB` : 'unknown'}  (target < 200 MB)\n`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
  await sim.stop();
}
