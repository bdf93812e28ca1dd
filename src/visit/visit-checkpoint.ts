import { CheckpointStore, readCheckpointFile } from '../fs/checkpoint-file.js';
import { VespaBulkError } from '../core/errors.js';
import type { SliceResumeState } from './options.js';

/**
 * The checkpoint file: where each slice of a visit stands. Saved through the one `CheckpointStore` (atomic and
 * fsync'd), so that a crash leaves either the old or the new state, never half of one. The format is fixed:
 * checkpoints of earlier versions resume.
 *
 * {
 *   "format": "vespa-bulk-visit-checkpoint/1",
 *   "visit": "<fingerprint: path, selection, time range... and the slice count>",
 *   "updated": "<ISO time>",
 *   "slices": { "<sliceId>": { "continuation": "<token>", "finished": false, "documents": 123,
 *                              "deliveredIds": ["id:..."] } },
 *   "outputs": { "<output file>": <bytes> },
 *   "outputTails": { "<output file>": "<sha256 of the up to 4 KiB before its length>" },
 *   "inflight": 16,
 *   "started": "<ISO time>",
 *   "completed": "<ISO time>"
 * }
 *
 * A whole-cluster visit goes through both bucket spaces; the global space's chains are `"<sliceId>@global"`.
 * A visit of several content clusters keys each chain after its cluster: `"<cluster>/<sliceId>"`.
 *
 * Each slice stands in one of three places: finished (`finished`), begun (`continuation`, and/or `deliveredIds`:
 * running when saved, or parked by the adaptive visit), or not started: then it has no entry (the fingerprint's
 * slice count says which slices there are). An adaptive visit starts the begun ones first when resumed.
 *
 * `deliveredIds` are the documents already written after `continuation`; a resumed visit skips them when
 * the service sends them again. `outputs` holds each output file's length as of the saved state (after a
 * SIGKILL a file may hold more: a resumed export cuts it back first). Checkpoints written before `outputs`
 * existed lack it, and are continued as they were: appended to as they stand. `outputTails` fingerprints the end of
 * what each file held at that length, so a file rewritten or edited since (another export to the same name) is
 * refused rather than cut back to a length that means nothing in it; without it (earlier versions) only the
 * length is checked. `inflight` (adaptive visits only) is
 * the number of slices in flight the search had reached, where a resumed visit starts; older versions ignore it.
 * `started` is when the export's visit began (its first run's, when resumed), and `completed` when it ended with
 * every chain finished: an incremental export (`since`) of this one starts from `started`.
 */
export const checkpointFormat = 'vespa-bulk-visit-checkpoint/1';

export interface SliceCheckpoint extends SliceResumeState {
  /** Documents written for this slice so far, over all runs. */
  documents: number;
}

/** A visit checkpoint: the visit it belongs to and each slice's progress. */
export interface VisitCheckpoint {
  format: typeof checkpointFormat;
  visit: string;
  updated: string;
  slices: Record<string, SliceCheckpoint>;
  /** Each output file's length in bytes (path as the export names it) when the state above was taken. */
  outputs?: Record<string, number>;
  /** Per output file, the SHA-256 (hex) of the up to 4 KiB before its length in `outputs`. */
  outputTails?: Record<string, string>;
  /** The adaptive visit's slices in flight when saved: where a resumed one starts. */
  inflight?: number;
  /** When the export's visit began (ISO 8601; a resumed export keeps its first run's): where an increment of it starts. */
  started?: string;
  /** When the export ended with every chain finished (ISO 8601); absent while it is unfinished. */
  completed?: string;
}

export function emptyCheckpoint(fingerprint: string): VisitCheckpoint {
  return { format: checkpointFormat, visit: fingerprint, updated: new Date(0).toISOString(), slices: {} };
}

/** The checkpoint in a checkpoint file's JSON `value`; VB_USAGE when it is not a visit checkpoint. */
function visitCheckpointOf(value: unknown, file: string): VisitCheckpoint {
  const c = value as Partial<VisitCheckpoint> | null;
  if (
    c === null ||
    typeof c !== 'object' ||
    c.format !== checkpointFormat ||
    typeof c.visit !== 'string' ||
    typeof c.slices !== 'object' ||
    c.slices === null
  ) {
    throw new VespaBulkError(
      'VB_USAGE',
      `${file} is not a vespa-bulk visit checkpoint (expected format ${checkpointFormat})`,
      { place: { file } },
    );
  }
  for (const [id, s] of Object.entries(c.slices)) {
    if (
      !/^(?:[^/]+\/)?\d+(@global)?$/.test(id) ||
      typeof s !== 'object' ||
      s === null ||
      (s.continuation !== undefined && typeof s.continuation !== 'string')
    ) {
      throw new VespaBulkError('VB_USAGE', `checkpoint ${file}: bad entry for slice '${id}'`, { place: { file } });
    }
  }
  if (c.outputs !== undefined) {
    if (typeof c.outputs !== 'object' || c.outputs === null || Array.isArray(c.outputs)) {
      throw new VespaBulkError('VB_USAGE', `checkpoint ${file}: 'outputs' is not an object of file lengths`, {
        place: { file },
      });
    }
    for (const [path, length] of Object.entries(c.outputs)) {
      if (!Number.isSafeInteger(length) || length < 0)
        throw new VespaBulkError('VB_USAGE', `checkpoint ${file}: bad length for output '${path}'`, {
          place: { file },
        });
    }
  }
  // A check of the outputs, added later: one that is not an object of hashes is left out (only lengths checked).
  if (
    c.outputTails !== undefined &&
    (typeof c.outputTails !== 'object' ||
      c.outputTails === null ||
      Object.values(c.outputTails).some((h) => typeof h !== 'string'))
  )
    delete c.outputTails;
  // A hint only: one that is not a count is left out rather than refused.
  if (c.inflight !== undefined && !(Number.isSafeInteger(c.inflight) && c.inflight >= 1)) delete c.inflight;
  // Records for increments: a time that is not a string is left out (an increment of it is then refused).
  if (c.started !== undefined && typeof c.started !== 'string') delete c.started;
  if (c.completed !== undefined && typeof c.completed !== 'string') delete c.completed;
  return c as VisitCheckpoint;
}

/** Refuses a checkpoint written for another visit (its tokens would mean nothing here). */
export function checkFingerprint(checkpoint: VisitCheckpoint, fingerprint: string, file: string): void {
  if (checkpoint.visit !== fingerprint) {
    throw new VespaBulkError(
      'VB_USAGE',
      `checkpoint ${file} belongs to another visit (${checkpoint.visit}); this one is ${fingerprint}. Use another --checkpoint file or delete it.`,
      { place: { file } },
    );
  }
}

/**
 * Reads the checkpoint, or undefined when there is none yet (no file, or an empty one). VB_USAGE when it cannot be
 * read, is not a visit checkpoint or, with `fingerprint`, was written for another visit; VB_BAD_JSON when it is
 * not JSON.
 * @example
 * ```ts
 * import { readVisitCheckpoint } from 'vespa-bulk';
 *
 * const checkpoint = await readVisitCheckpoint('music.ckpt');
 * console.log(checkpoint === undefined ? 'nothing to resume' : `${checkpoint.slices.length} slices recorded`);
 * ```
 */
export async function readVisitCheckpoint(file: string, fingerprint?: string): Promise<VisitCheckpoint | undefined> {
  const value = await readCheckpointFile(file);
  if (value === undefined) return undefined;
  const checkpoint = visitCheckpointOf(value, file);
  if (fingerprint !== undefined) checkFingerprint(checkpoint, fingerprint, file);
  return checkpoint;
}

/** The slice count a fingerprint was written with (its last parameter, see `visitFingerprint`). */
export function slicesOfFingerprint(fingerprint: string): number | undefined {
  const m = /&slices=(\d+)$/.exec(fingerprint);
  const n = m === null ? NaN : Number(m[1]);
  return Number.isSafeInteger(n) && n >= 1 ? n : undefined;
}

/** Resume states from a checkpoint, per slice id. */
export function resumeStates(checkpoint: VisitCheckpoint | undefined): Record<string, SliceResumeState> {
  const out: Record<string, SliceResumeState> = {};
  for (const [id, s] of Object.entries(checkpoint?.slices ?? {})) {
    out[id] = { continuation: s.continuation, finished: s.finished, deliveredIds: s.deliveredIds };
  }
  return out;
}

/** Whether a checkpoint records any progress (then outputs are appended to, not replaced). */
export function hasProgress(checkpoint: VisitCheckpoint | undefined): boolean {
  return Object.values(checkpoint?.slices ?? {}).some(
    (s) => s.finished || s.continuation !== undefined || s.documents > 0,
  );
}

/**
 * The visit's checkpoint file: `snapshot()` saved within an interval of each `touch()` (default
 * `defaultCheckpointIntervalMs`) and at `flush()`, stamped with the time of saving. `snapshot` is read at save
 * time; the caller makes sure everything it reports is already written out.
 */
export function visitCheckpointStore(
  file: string,
  snapshot: () => Promise<VisitCheckpoint>,
  intervalMs?: number,
): CheckpointStore<VisitCheckpoint> {
  return new CheckpointStore<VisitCheckpoint>({
    path: file,
    // One space of indent: the file is rewritten every save, and a visit's slices can be many.
    text: (checkpoint) => `${JSON.stringify(checkpoint, null, 1)}\n`,
    snapshot: async () => ({ ...(await snapshot()), updated: new Date().toISOString() }),
    ...(intervalMs !== undefined && { intervalMs }),
  });
}
