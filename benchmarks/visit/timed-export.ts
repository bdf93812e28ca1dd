/**
 * Timed exports in a process of their own (benchmarks/visit/export-child.ts), for benchmarks/visit/slices.ts and protocols.ts,
 * and the simulator's visit cost: what those benches share.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { H2PoolOptions } from '../../src/http/h2/pool-options.js';
import type { ExportOptions } from '../../src/visit/export/index.js';
import type { InflightReport } from '../../src/visit/visitor.js';

/** What export-child.ts is given (as JSON, its one argument). */
export interface ExportChildInput {
  endpoint: string;
  output: string;
  /** The export is stopped after this long, if it has not finished. */
  seconds: number;
  options: Partial<ExportOptions>;
  /** Visit through an HTTP/2 pool of these settings (receive windows, connections) instead of the own pool. */
  h2?: H2PoolOptions;
}

/** What export-child.ts prints: documents delivered, sampled every 250 ms as [seconds, documents, slices running]. */
export interface ExportChildOutcome {
  documents: number;
  seconds: number;
  samples: Array<[number, number, number]>;
  inflight: InflightReport;
  /** Every slice finished (the corpus was smaller than the time). */
  finished: boolean;
  protocol: string | undefined;
  /** CPU (user + system) of the export's process from the start of the visit to its end. */
  cpuSeconds: number;
}

const child = fileURLToPath(new URL('export-child.ts', import.meta.url));
const tsxLoader = fileURLToPath(import.meta.resolve('tsx'));

export function runExportChild(input: ExportChildInput): Promise<ExportChildOutcome> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', tsxLoader, child, JSON.stringify(input)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    proc.on('error', reject);
    proc.on('close', (code) => {
      if (code !== 0) return reject(new Error(`export ${JSON.stringify(input.options)} exited with ${code}`));
      resolve(JSON.parse(out.trim().split('\n').pop()!) as ExportChildOutcome);
    });
  });
}

/** Documents/s between `from` seconds and the end of the export. */
export function rateAfter(o: ExportChildOutcome, from: number): number {
  const last = o.samples.at(-1)!;
  const first = o.samples.find(([t]) => t >= from) ?? last;
  return last[0] > first[0] ? (last[1] - first[1]) / (last[0] - first[0]) : o.documents / o.seconds;
}

/** Changes the simulator's faults (visit lanes, cost per document) through its admin path. */
export async function setFaults(url: string, patch: Record<string, number>): Promise<void> {
  const res = await fetch(`${url}/_sim/faults`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(patch),
  });
  if (!res.ok) throw new Error(`/_sim/faults answered ${res.status}`);
}
