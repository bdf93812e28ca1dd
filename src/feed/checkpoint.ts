import { readFileSync } from 'node:fs';
import { VespaBulkError } from '../errors.js';
import { writeFileAtomicallySync } from '../fs/atomic-write.js';
import type { InputPosition } from './source.js';

/**
 * Where a stopped feed can go on. Everything before `position` is finished: succeeded, or written to the
 * failure output. Operations after it may have succeeded already and are sent again on resume; put and
 * remove are idempotent, and so is an update that only assigns, so only non-assign updates can apply twice.
 * `position: null` means the whole input is finished.
 */
export interface Checkpoint {
  version: 1;
  /** Input names in feed order; resume reads the same inputs. */
  inputs: string[];
  position: InputPosition | null;
  /** ISO time of writing. */
  written: string;
  /** Why the feed stopped. */
  reason: string;
  shard?: string;
  failures?: string;
  /** Counts at the time of the checkpoint (informative). */
  ok: number;
  errors: number;
}

/**
 * Writes the checkpoint file; a crash mid-write leaves the previous one. Synchronous: the feeder writes it while
 * it winds down, before it reports the outcome.
 */
export function writeCheckpoint(path: string, checkpoint: Checkpoint): void {
  writeFileAtomicallySync(path, `${JSON.stringify(checkpoint, null, 2)}\n`);
}

/** Reads a feed checkpoint file written by a stopped feed; throws VB_USAGE when it is not one. */
export function readCheckpoint(path: string): Checkpoint {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new VespaBulkError('VB_USAGE', `cannot read checkpoint '${path}': ${(err as Error).message}`, { cause: err });
  }
  const c = value as Partial<Checkpoint>;
  const positionOk =
    c.position === null ||
    (typeof c.position === 'object' && c.position !== null && Number.isInteger(c.position.input) && Number.isInteger(c.position.offset));
  if (c.version !== 1 || !Array.isArray(c.inputs) || !positionOk) {
    throw new VespaBulkError('VB_USAGE', `'${path}' is not a vespa-bulk feed checkpoint`);
  }
  return c as Checkpoint;
}

/** Name of the checkpoint file when none is given. */
export function defaultCheckpointPath(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  return `vespa-bulk-checkpoint-${stamp}.json`;
}
