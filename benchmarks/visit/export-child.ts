// One timed export for benchmarks/visit/slices.ts and protocols.ts, in its own process: exportDocuments to a file for at
// most `seconds`, sampling the documents delivered (and the slices in flight) every 250 ms. Prints one JSON line at
// the end, with the CPU time (user + system) this process spent from the start of the visit to its end.
import { exportDocuments } from '../../src/visit/export/index.js';
import { Http2Transport } from '../../src/http/h2/h2-transport.js';
import type { ExportChildInput, ExportChildOutcome } from './timed-export.js';

const input = JSON.parse(process.argv[2]) as ExportChildInput;
const controller = new AbortController();
const samples: Array<[number, number, number]> = [];
let started = 0;
let cpuAtStart = process.cpuUsage();
const summary = await exportDocuments({
  endpoint: input.endpoint,
  namespace: 'bench',
  documentType: 'music',
  output: input.output,
  signal: controller.signal,
  ...(input.h2 !== undefined && { transport: new Http2Transport(input.endpoint, input.h2) }),
  ...input.options,
  onStart: (run) => {
    started = performance.now();
    cpuAtStart = process.cpuUsage();
    const sample = (): void => {
      samples.push([(performance.now() - started) / 1000, run.documents(), run.inflight().running]);
    };
    const timer = setInterval(sample, 250);
    const stop = setTimeout(() => controller.abort(), input.seconds * 1000);
    void run.done.finally(() => {
      sample();
      clearInterval(timer);
      clearTimeout(stop);
    });
  },
});
const cpu = process.cpuUsage(cpuAtStart);
const cpuSeconds = (cpu.user + cpu.system) / 1e6;
const outcome: ExportChildOutcome = {
  documents: summary.documents,
  seconds: summary.seconds,
  samples,
  inflight: summary.inflight,
  finished: summary.ok,
  protocol: summary.protocol,
  cpuSeconds,
};
process.stdout.write(`${JSON.stringify(outcome)}\n`);
