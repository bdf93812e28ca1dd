import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Feeder } from '../../src/feed/feeder.js';
import { RunRecorder } from '../../src/report/recorder.js';
import { feedSummaryJson } from '../../src/cli/summary-names.js';
import { feedSampler } from '../../src/report/sample.js';
import { StatsFileWriter } from '../../src/report/stats-file.js';
import type { RecordedRun } from '../../src/report/stats-format.js';

/** Writes `count` put operations (ids `prefix-N`) to `dir/name` and returns its path. */
export function writeDocs(dir: string, name: string, count: number, prefix = 'd'): string {
  const lines: string[] = [];
  for (let i = 0; i < count; i++) lines.push(JSON.stringify({ put: `id:music:music::${prefix}-${i}`, fields: { title: `song ${i} ${'x'.repeat(120)}`, n: i } }));
  const path = join(dir, name);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

/**
 * Feeds `file` to `endpoint` in this process with a recorder writing `stats`: one shard of a load run. With
 * `steps`, the run is marked in steps of `stepMs` each, as a stepped bench would.
 */
export async function recordFeed(endpoint: string, file: string, stats: string, options: { host?: string; steps?: string[]; stepMs?: number } = {}): Promise<RecordedRun> {
  const feeder = new Feeder({ endpoint });
  const writer = new StatsFileWriter(stats);
  const recorder = new RunRecorder({
    params: { command: 'feed', target: endpoint, flags: { files: [file] }, tool: 'vespa-bulk test', host: options.host ?? 'test', startTime: new Date().toISOString() },
    sample: feedSampler(feeder),
    onLine: (line) => writer.write(line),
  });
  const steps = [...(options.steps ?? [])];
  let timer: NodeJS.Timeout | undefined;
  const next = () => {
    const name = steps.shift();
    if (name === undefined) return;
    recorder.step(name, Number.parseInt(name, 10) || undefined);
    timer = setTimeout(next, options.stepMs ?? 1000);
  };
  next();
  try {
    const outcome = await feeder.run(file);
    return recorder.finish(feedSummaryJson(outcome.summary));
  } finally {
    clearTimeout(timer);
    writer.close();
  }
}
