import { readFile } from 'node:fs/promises';
import { VespaBulkError } from '../../core/errors.js';
import { checkpointFormat } from '../visit-checkpoint.js';
import { parseTimeBound } from '../time-range.js';

/**
 * Incremental exports (`since`): where an increment starts. The previous export records when its visit began (its
 * checkpoint's `started`, its summary's `startedAt`, printed as `visit.started`); everything written to the cluster
 * after that moment, removes included, is in the increment. The moment is taken on this machine's clock while the
 * service stamps writes with its content nodes' clocks, so a margin is taken off: a document exported twice is put
 * twice (the same document), while one missed would leave the copy wrong for good.
 */

/**
 * What is taken off the recorded start for clock skew between this machine and the content nodes: one minute.
 * @example
 * ```ts
 * import { defaultSinceMarginMs, exportDocuments } from 'vespa-bulk';
 *
 * // The clocks of this machine and the content nodes are known to agree within a second.
 * await exportDocuments({ endpoint: 'http://127.0.0.1:8080', cluster: 'content', output: 'changes.jsonl', since: 'music.ckpt', sinceMarginMs: Math.min(1000, defaultSinceMarginMs) });
 * ```
 */
export const defaultSinceMarginMs = 60_000;

/** Where an increment's start came from: the time given, or the record of an earlier export. */
export interface SinceStart {
  /** Microseconds since the epoch, before the margin is taken off. */
  micros: bigint;
  source: 'time' | 'checkpoint' | 'summary';
}

/**
 * The start an export's record gives: a visit checkpoint with `started`, or an export summary (the library's
 * `startedAt`/`ok`, or the CLI's printed `visit.started`/`visit.ok`). An export that did not finish is refused:
 * the documents of its unfinished slices that were not changed since are in neither it nor the increment. Pure.
 */
export function recordedStart(value: unknown, file: string): SinceStart {
  const place = { place: { file } };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new VespaBulkError(
      'VB_USAGE',
      `--since ${file}: not an export's checkpoint or summary (a JSON object)`,
      place,
    );
  }
  const o = value as Record<string, unknown>;
  const checkpoint = o.format === checkpointFormat;
  const started = checkpoint ? o.started : (o['visit.started'] ?? o.startedAt);
  const what = checkpoint ? 'checkpoint' : 'summary';
  if (!checkpoint && !('visit.ok' in o) && !('ok' in o)) {
    throw new VespaBulkError(
      'VB_USAGE',
      `--since ${file}: not an export's checkpoint (format ${checkpointFormat}) or summary (visit.ok, visit.started)`,
      place,
    );
  }
  if (typeof started !== 'string') {
    throw new VespaBulkError(
      'VB_USAGE',
      `--since ${file}: the export's ${what} records no start time (written by an earlier version, or resumed from one): give --since a time instead`,
      place,
    );
  }
  const finished = checkpoint ? typeof o.completed === 'string' : (o['visit.ok'] ?? o.ok) === true;
  if (!finished) {
    throw new VespaBulkError(
      'VB_USAGE',
      `--since ${file}: the export it records did not finish (${checkpoint ? 'its checkpoint is not completed' : 'visit.ok is false'}): finish it first (run it again with its --checkpoint), or give --since a time`,
      place,
    );
  }
  const ms = Date.parse(started);
  if (Number.isNaN(ms)) throw new VespaBulkError('VB_USAGE', `--since ${file}: bad start time '${started}'`, place);
  return { micros: BigInt(ms) * 1000n, source: checkpoint ? 'checkpoint' : 'summary' };
}

/**
 * The JSON object of a record's text: the whole text, or, for a summary captured among other lines (the stderr of an
 * export to stdout: messages before it, the report's path after), the last object printed from a line `{` to a line `}`.
 */
export function recordValue(text: string, file: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    const lines = text.split('\n');
    const open = lines.lastIndexOf('{');
    const close = open < 0 ? -1 : lines.indexOf('}', open);
    if (close > open) {
      try {
        return JSON.parse(lines.slice(open, close + 1).join('\n'));
      } catch {
        // The whole text's error is the one to tell.
      }
    }
    throw new VespaBulkError('VB_BAD_JSON', `--since ${file}: not JSON (${(err as Error).message})`, {
      place: { file },
      cause: err,
    });
  }
}

/** A `since` value: a time as `--from` takes it (epoch seconds, `<n>ms`, `<n>us`, ISO 8601), else a record file. */
export async function sinceStart(since: string): Promise<SinceStart> {
  let asTime: bigint | undefined;
  try {
    asTime = parseTimeBound(since, '--since');
  } catch {
    // Not a time: a file.
  }
  if (asTime !== undefined) return { micros: asTime, source: 'time' };
  let text: string;
  try {
    text = await readFile(since, 'utf8');
  } catch (err) {
    throw new VespaBulkError(
      'VB_USAGE',
      `--since '${since}': neither a time (epoch seconds, <n>ms, an ISO date) nor a readable export checkpoint or summary (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      { place: { file: since }, cause: err },
    );
  }
  return recordedStart(recordValue(text, since), since);
}

/** The lower bound of the increment's visit: the start less the margin, never before the epoch. Pure. */
export function sinceFromTimestamp(start: SinceStart, marginMs: number): bigint {
  const from = start.micros - BigInt(Math.round(marginMs * 1000));
  return from < 0n ? 0n : from;
}
