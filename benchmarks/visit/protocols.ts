/**
 * Export over HTTP/2 against export over HTTP/1.1, from the simulator (its own process), each figure of `--protocol h2`
 * printed as a ratio to `--protocol http1.1` measured in the same run (the order alternating between rounds):
 *
 *   cpu    the corpus served as fast as the two processes manage (no visit cost): N documents of about 1 KB exported
 *          by `vespa-bulk visit ... -o /dev/null` as users run it (a bundle, under GNU time) with 4 slices, 64 slices
 *          and the default (256 slices, adaptive). Documents/s, the exporter's CPU per document (user + system), its
 *          peak RSS, and the simulator's CPU per document (from /proc), which tells a client's cost from the server's.
 *   lanes  a simulated cluster that is the limit (`--lanes` visitor lanes visiting `--capacity` documents/s in all,
 *          as benchmarks/visit/slices.ts sets it up, small documents): the default export for `--seconds`, documents/s
 *          over its second half and the exporter's CPU per document.
 *   windows HTTP/2's receive window per stream (`--windows`, KiB; the connection's 64 MiB) as a ratio to the
 *          default's, with HTTP/1.1 beside them, exporting the `cpu` corpus with `--window-slices` slices through a
 *          relay that holds each chunk half of each `--rtt` (ms) each way (benchmarks/lib/tcp-relay.ts; 0: direct):
 *          whether a stream waits for its WINDOW_UPDATE once the round trip is a real network's.
 *
 *   npx tsx benchmarks/visit/protocols.ts [cpu|lanes|windows ...] [--documents 300000] [--rounds 3] [--runs 4,64,default]
 *                                    [--lanes 16] [--capacity 8000] [--seconds 20]
 *                                    [--rtt 0,20,50] [--window-slices 4,16] [--windows 1024,4096,8192]
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { median, printTable, startChildServer, type ChildServer } from '../lib/child.js';
import { bundleCli } from './bundle.js';
import { rateAfter, runExportChild, setFaults, type ExportChildOutcome } from './timed-export.js';
import { startTcpRelay } from '../lib/tcp-relay.js';
import { defaultStreamWindow, type H2PoolOptions } from '../../src/http/h2/pool-options.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    documents: { type: 'string', default: '300000' },
    rounds: { type: 'string', default: '3' },
    runs: { type: 'string', default: '4,64,default' },
    lanes: { type: 'string', default: '16' },
    capacity: { type: 'string', default: '8000' },
    seconds: { type: 'string', default: '20' },
    rtt: { type: 'string', default: '0,20,50' },
    'window-slices': { type: 'string', default: '4,16' },
    windows: { type: 'string', default: '1024,4096,8192' },
  },
});
const which = new Set(positionals.length > 0 ? positionals : ['cpu', 'lanes', 'windows']);
const documents = Number(values.documents);
const rounds = Number(values.rounds);
const runs = values.runs.split(',');
const here = fileURLToPath(new URL('.', import.meta.url));
const protocols = ['h2', 'http1.1'] as const;
type Protocol = (typeof protocols)[number];

/** CPU seconds (user + system) a process has used so far, from /proc (Linux). */
function cpuSecondsOf(pid: number): number {
  // The fields after the command name, which is in parentheses and may hold spaces: utime and stime are the 12th and 13th.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

interface Export {
  documents: number;
  seconds: number;
  cpuSeconds: number;
  serverCpuSeconds: number;
  maxRssMB: number;
  protocol: string;
}

/** `vespa-bulk visit` as users run it, under GNU time; its summary (on stdout with -o /dev/null) gives the visit time. */
function cliExport(bundle: string, sim: ChildServer, protocol: Protocol, run: string): Promise<Export> {
  const slicing = run === 'default' ? [] : ['--slices', run];
  const args = [
    '-v',
    process.execPath,
    bundle,
    'visit',
    'bench/music',
    '-t',
    sim.url,
    ...slicing,
    '--protocol',
    protocol,
    '-o',
    '/dev/null',
    '--quiet',
  ];
  const serverBefore = cpuSecondsOf(sim.process.pid!);
  return new Promise((resolve, reject) => {
    execFile('/usr/bin/time', args, { maxBuffer: 64 << 20, timeout: 600_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`exporter failed: ${err.message}\n${stderr}`));
      const summary = JSON.parse(stdout) as Record<string, number | string>;
      const field = (re: RegExp): number => Number(re.exec(stderr)?.[1] ?? NaN);
      resolve({
        documents: Number(summary['visit.document.count']),
        seconds: Number(summary['visit.seconds']),
        cpuSeconds: field(/User time \(seconds\): ([\d.]+)/) + field(/System time \(seconds\): ([\d.]+)/),
        serverCpuSeconds: cpuSecondsOf(sim.process.pid!) - serverBefore,
        maxRssMB: field(/Maximum resident set size \(kbytes\): (\d+)/) / 1024,
        protocol: String(summary['http.protocol']),
      });
    });
  });
}

/**
 * An export through the library (benchmarks/visit/export-child.ts) into `output` for at most `seconds`: the default one,
 * or with `slices`; over `protocol`, or through an HTTP/2 pool of the settings `h2`.
 */
function timedExport(
  url: string,
  output: string,
  how: { protocol: Protocol } | { h2: H2PoolOptions },
  seconds: number,
  slices?: number,
): Promise<ExportChildOutcome> {
  const options = { ...('protocol' in how && { protocol: how.protocol }), ...(slices !== undefined && { slices }) };
  return runExportChild({ endpoint: url, output, seconds, options, ...('h2' in how && { h2: how.h2 }) });
}

const ratio = (a: number[], b: number[]): string => (median(a) / median(b)).toFixed(2);
const order = (round: number): readonly Protocol[] => (round % 2 === 0 ? protocols : [...protocols].reverse());
const dir = mkdtempSync(join(tmpdir(), 'vb-visit-protocols-'));

try {
  if (which.has('cpu')) {
    const sim = await startChildServer(join(here, 'seeded-sim.ts'), [], { VISIT_BENCH_DOCUMENTS: String(documents) });
    try {
      const bundle = bundleCli(dir);
      // Warm-up: the simulator serialises each document once and caches it; neither protocol should pay for that.
      await cliExport(bundle, sim, 'http1.1', '4');
      const rows: Array<Record<string, string | number>> = [];
      const byRun = new Map(
        runs.map((r) => [
          r,
          new Map(
            protocols.map((p) => [
              p,
              { rate: [] as number[], cpu: [] as number[], server: [] as number[], rss: [] as number[] },
            ]),
          ),
        ]),
      );
      for (let round = 0; round < rounds; round++) {
        for (const run of runs) {
          for (const protocol of order(round)) {
            const ex = await cliExport(bundle, sim, protocol, run);
            if (ex.documents !== documents)
              throw new Error(`exported ${ex.documents} documents, expected ${documents}`);
            if (ex.protocol !== protocol) throw new Error(`asked ${protocol}, spoke ${ex.protocol}`);
            const m = byRun.get(run)!.get(protocol)!;
            m.rate.push(ex.documents / ex.seconds);
            m.cpu.push((ex.cpuSeconds / ex.documents) * 1e6);
            m.server.push((ex.serverCpuSeconds / ex.documents) * 1e6);
            m.rss.push(ex.maxRssMB);
            rows.push({
              round: round + 1,
              slices: run,
              protocol,
              seconds: ex.seconds.toFixed(2),
              'docs/s': Math.round(ex.documents / ex.seconds),
              'exporter CPU µs/doc': ((ex.cpuSeconds / ex.documents) * 1e6).toFixed(2),
              'simulator CPU µs/doc': ((ex.serverCpuSeconds / ex.documents) * 1e6).toFixed(2),
              'peak RSS MB': ex.maxRssMB.toFixed(0),
            });
          }
        }
      }
      printTable(`cpu: export of ${documents} documents (~1 KB) to /dev/null, simulator not limited`, rows);
      const summary = runs.map((run) => {
        const h2 = byRun.get(run)!.get('h2')!;
        const h1 = byRun.get(run)!.get('http1.1')!;
        return {
          slices: run,
          'h2 docs/s': Math.round(median(h2.rate)),
          'http1.1 docs/s': Math.round(median(h1.rate)),
          'docs/s h2/http1.1': ratio(h2.rate, h1.rate),
          'exporter CPU/doc h2/http1.1': ratio(h2.cpu, h1.cpu),
          'simulator CPU/doc h2/http1.1': ratio(h2.server, h1.server),
          'peak RSS MB h2, http1.1': `${Math.max(...h2.rss).toFixed(0)}, ${Math.max(...h1.rss).toFixed(0)}`,
        };
      });
      printTable(`cpu: medians of ${rounds} rounds, HTTP/2 as a ratio to HTTP/1.1`, summary);
    } finally {
      await sim.stop();
    }
  }

  if (which.has('lanes')) {
    // As benchmarks/visit/slices.ts sets it up: small documents in 256 location groups, the visit cost charged per lane.
    const sim = await startChildServer(join(here, 'seeded-sim.ts'), [], {
      VISIT_BENCH_DOCUMENTS: String(Math.max(documents, 1_000_000)),
      VISIT_BENCH_COST_US: '0',
      VISIT_BENCH_FILLER_BYTES: '0',
      VISIT_BENCH_GROUPS: '256',
    });
    try {
      const lanes = Number(values.lanes);
      const capacity = Number(values.capacity);
      const seconds = Number(values.seconds);
      await setFaults(sim.url, { visitParallelism: lanes, visitCostUs: Math.round((lanes * 1e6) / capacity) });
      const rows: Array<Record<string, string | number>> = [];
      const m = new Map(protocols.map((p) => [p, { rate: [] as number[], cpu: [] as number[] }]));
      for (let round = 0; round < rounds; round++) {
        for (const protocol of order(round)) {
          // The requests of the export before go on in the simulator until their next 256 documents are paid for.
          await new Promise((r) => setTimeout(r, (256 * 256 * 1000) / capacity));
          const o = await timedExport(sim.url, join(dir, 'export.jsonl'), { protocol }, seconds);
          rmSync(join(dir, 'export.jsonl'), { force: true });
          if (o.protocol !== protocol) throw new Error(`asked ${protocol}, spoke ${o.protocol}`);
          const steady = rateAfter(o, o.seconds / 2);
          m.get(protocol)!.rate.push(steady);
          m.get(protocol)!.cpu.push((o.cpuSeconds / o.documents) * 1e6);
          rows.push({
            round: round + 1,
            protocol,
            'docs/s': Math.round(o.documents / o.seconds),
            'docs/s, 2nd half': Math.round(steady),
            'exporter CPU µs/doc': ((o.cpuSeconds / o.documents) * 1e6).toFixed(2),
            'slices in flight: mean, most': `${o.inflight.meanRunning.toFixed(1)}, ${o.inflight.maxLimit}`,
          });
        }
      }
      printTable(
        `lanes: the default export for ${seconds} s against ${lanes} lanes (${capacity} documents/s in all), small documents`,
        rows,
      );
      const h2 = m.get('h2')!;
      const h1 = m.get('http1.1')!;
      printTable(`lanes: medians of ${rounds} rounds, HTTP/2 as a ratio to HTTP/1.1`, [
        {
          'docs/s (2nd half) h2/http1.1': ratio(h2.rate, h1.rate),
          'exporter CPU/doc h2/http1.1': ratio(h2.cpu, h1.cpu),
        },
      ]);
    } finally {
      await sim.stop();
    }
  }

  if (which.has('windows')) {
    const sim = await startChildServer(join(here, 'seeded-sim.ts'), [], { VISIT_BENCH_DOCUMENTS: String(documents) });
    try {
      const kib = 1024;
      const nameOf = (w: number): string =>
        `h2, ${w >= 1024 * kib ? `${w / 1024 / kib} MiB` : `${w / kib} KiB`} per stream`;
      const windows = values.windows.split(',').map((k) => Number(k) * kib);
      const variants: Array<{ name: string; how: { protocol: Protocol } | { h2: H2PoolOptions } }> = [
        { name: 'http1.1', how: { protocol: 'http1.1' } },
        ...[...new Set([...windows, defaultStreamWindow])]
          .sort((a, b) => a - b)
          .map((w) => ({ name: nameOf(w), how: { h2: { streamWindow: w, connectionWindow: 64 << 20 } } })),
      ];
      const baseline = nameOf(defaultStreamWindow);
      // Warm-up: the simulator serialises each document once and caches it.
      await timedExport(sim.url, '/dev/null', { protocol: 'http1.1' }, 600, 4);
      const summary: Array<Record<string, string | number>> = [];
      for (const rtt of values.rtt.split(',').map(Number)) {
        const relay = rtt > 0 ? await startTcpRelay(sim.url, { oneWayMs: rtt / 2 }) : undefined;
        try {
          for (const slices of values['window-slices'].split(',').map(Number)) {
            const rates = new Map(variants.map((v) => [v.name, [] as number[]]));
            const cpu = new Map(variants.map((v) => [v.name, [] as number[]]));
            for (let round = 0; round < rounds; round++) {
              for (const v of round % 2 === 0 ? variants : [...variants].reverse()) {
                const o = await timedExport(relay?.url ?? sim.url, '/dev/null', v.how, 600, slices);
                if (o.documents !== documents)
                  throw new Error(`exported ${o.documents} documents, expected ${documents}`);
                rates.get(v.name)!.push(o.documents / o.seconds);
                cpu.get(v.name)!.push((o.cpuSeconds / o.documents) * 1e6);
              }
            }
            for (const v of variants) {
              summary.push({
                'round trip': `${rtt} ms`,
                slices,
                variant: v.name,
                'docs/s': Math.round(median(rates.get(v.name)!)),
                [`docs/s vs ${baseline}`]: ratio(rates.get(v.name)!, rates.get(baseline)!),
                'exporter CPU µs/doc': median(cpu.get(v.name)!).toFixed(2),
              });
            }
          }
        } finally {
          await relay?.close();
        }
      }
      printTable(
        `windows: export of ${documents} documents (~1 KB), medians of ${rounds} rounds; the connection's window 64 MiB`,
        summary,
      );
    } finally {
      await sim.stop();
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
