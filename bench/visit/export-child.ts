// One timed export for bench/visit/slices.ts, in its own process: exportDocuments to a file for at most `seconds`,
// sampling the documents delivered (and the slices in flight) every 250 ms. Prints one JSON line at the end.
import { exportDocuments, type ExportOptions } from '../../src/visit/export.js';

interface ChildInput {
  endpoint: string;
  output: string;
  seconds: number;
  options: Partial<ExportOptions>;
}

const input = JSON.parse(process.argv[2]) as ChildInput;
const controller = new AbortController();
const samples: Array<[number, number, number]> = [];
let started = 0;
const summary = await exportDocuments({
  endpoint: input.endpoint,
  namespace: 'bench',
  documentType: 'music',
  output: input.output,
  signal: controller.signal,
  ...input.options,
  onStart: (run) => {
    started = performance.now();
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
process.stdout.write(`${JSON.stringify({ documents: summary.documents, seconds: summary.seconds, samples, inflight: summary.inflight, finished: summary.ok })}\n`);
