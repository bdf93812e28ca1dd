import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { VespaBulkError } from '../core/errors.js';
import type { RecordedRun, RunParams, StatsLine } from './stats-format.js';

/**
 * Writes stats lines to a file as they come, each with one write (no buffering in the process), so a
 * dashboard tailing the file sees every second and a crash loses nothing already written.
 * @example
 * ```ts
 * import { hostname } from 'node:os';
 * import { Feeder } from 'vespa-bulk';
 * import { feedSampler, RunRecorder, StatsFileWriter } from 'vespa-bulk/report';
 *
 * const feeder = new Feeder({ endpoint: 'http://127.0.0.1:8080' });
 * const stats = new StatsFileWriter('feed.stats.jsonl'); // a dashboard may tail it: one line a second
 * const recorder = new RunRecorder({
 *   params: { command: 'feed', target: 'http://127.0.0.1:8080', flags: {}, tool: 'my-loader', host: hostname(), startTime: new Date().toISOString() },
 *   sample: feedSampler(feeder),
 *   onLine: (line) => stats.write(line),
 * });
 * recorder.finish({ ...(await feeder.run('corpus.jsonl')).summary });
 * stats.close();
 * ```
 */
export class StatsFileWriter {
  private fd: number | undefined;

  constructor(readonly path: string) {
    try {
      this.fd = openSync(path, 'w');
    } catch (err) {
      throw new VespaBulkError('VB_USAGE', `--stats ${path}: ${(err as Error).message}`, { cause: err });
    }
  }

  /** Appends one line. */
  write(line: StatsLine): void {
    if (this.fd !== undefined) writeSync(this.fd, `${JSON.stringify(line)}\n`);
  }

  /** Closes the file; later writes are dropped. */
  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

/**
 * Reads a stats file back. A last line cut short (the run crashed mid-write) is ignored; any other bad line is an error naming it.
 * @example
 * ```ts
 * import { writeFileSync } from 'node:fs';
 * import { readStatsFile, renderReport } from 'vespa-bulk/report';
 *
 * writeFileSync('feed.html', renderReport(readStatsFile('feed.stats.jsonl')));
 * ```
 */
export function readStatsFile(path: string): RecordedRun {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new VespaBulkError('VB_USAGE', `${path}: ${(err as Error).message}`, { cause: err });
  }
  const lines = text.split('\n');
  const run: RecordedRun = { params: [], points: [], steps: [] };
  let params: RunParams | undefined;
  lines.forEach((raw, i) => {
    if (raw.trim() === '') return;
    let line: StatsLine;
    try {
      line = JSON.parse(raw) as StatsLine;
    } catch (err) {
      if (i === lines.length - 1) return;
      throw new VespaBulkError('VB_USAGE', `${path}:${i + 1}: not a JSON line: ${(err as Error).message}`, {
        cause: err,
      });
    }
    switch (line?.type) {
      case 'run':
        if (params !== undefined)
          throw new VespaBulkError('VB_USAGE', `${path}:${i + 1}: a second 'run' line: one stats file per run`);
        params = line;
        break;
      case 'point':
        run.points.push(line);
        break;
      case 'step':
        run.steps.push(line);
        break;
      case 'summary':
        run.summary = line;
        break;
      default:
        throw new VespaBulkError(
          'VB_USAGE',
          `${path}:${i + 1}: not a stats line (type must be run, point, step or summary)`,
        );
    }
  });
  if (params === undefined) throw new VespaBulkError('VB_USAGE', `${path}: no 'run' line: not a vespa-bulk stats file`);
  run.params.push(params);
  return run;
}
