import { statSync } from 'node:fs';
import { VespaBulkError } from '../../core/errors.js';
import { cutBack } from '../../sinks/cut-back.js';
import type { ChainSpec } from '../query.js';
import type { VisitCheckpoint } from '../visit-checkpoint.js';
import { OutputChangedError, outputChangeOf } from './output-changed.js';
import { tailHash } from './output-tail.js';

/** The outputs of a resumed export before they are opened: the lengths to record, and the files to start empty. */
export interface RestoredOutputs {
  /** Each output file's length as the checkpoint recorded it (or, from an old checkpoint, as found). */
  lengths: Record<string, number>;
  /** Files the checkpoint has no length for and no documents in: opened empty, not appended to. */
  fresh: Set<string>;
}

/** A fresh export's outputs: nothing recorded, nothing to keep. */
export const nothingRestored = (): RestoredOutputs => ({ lengths: {}, fresh: new Set<string>() });

/**
 * Before a resumed export opens its outputs: each file the checkpoint recorded a length for is cut back to it (see
 * `cutBack`), or refused when shorter or gone (`OutputChangedError`, naming `checkpointFile`); a file it has no length for starts empty, unless its slice wrote documents by the checkpoint's count
 * (then the file cannot be trusted, and the export is refused). A checkpoint from before lengths were recorded
 * leaves the files as they are, and records their present lengths from here on.
 */
export function restoreOutputs(
  previous: VisitCheckpoint,
  chains: ChainSpec[],
  sliceIds: number[],
  pathOf: (slice: number) => string | undefined,
  perSlice: boolean,
  checkpointFile: string,
): RestoredOutputs {
  const lengths: Record<string, number> = { ...previous.outputs };
  const fresh = new Set<string>();
  const wrote = (slice: number): boolean =>
    perSlice
      ? chains.some((c) => c.sliceId === slice && (previous.slices[c.key]?.documents ?? 0) > 0)
      : Object.values(previous.slices).some((s) => (s.documents ?? 0) > 0);
  for (const slice of sliceIds) {
    const path = pathOf(slice);
    if (path === undefined) continue;
    const recorded = previous.outputs?.[path];
    if (previous.outputs === undefined) {
      // Today's behaviour for an old checkpoint: appended to as it stands.
      const size = sizeOf(path);
      if (size !== undefined) lengths[path] = size;
    } else if (recorded !== undefined) {
      checkOutput(path, recorded, false, checkpointFile, previous.outputTails?.[path]);
      cutBack(path, recorded);
    } else if (wrote(slice)) {
      throw new VespaBulkError(
        'VB_USAGE',
        `the checkpoint records documents written to ${path} but not the file's length: it was written by another export; use the output of the run that saved the checkpoint, or delete the checkpoint to start over`,
        {
          place: { file: path },
        },
      );
    } else fresh.add(path);
  }
  return { lengths, fresh };
}

/**
 * A finished export run again: each output its checkpoint recorded must be as it left it (nothing is written to
 * them this run); OutputChangedError otherwise.
 */
export function checkFinishedOutputs(
  previous: VisitCheckpoint,
  paths: ReadonlyArray<string | undefined>,
  checkpointFile: string,
): void {
  for (const path of paths) {
    const recorded = path === undefined ? undefined : previous.outputs?.[path];
    if (recorded !== undefined) checkOutput(path!, recorded, true, checkpointFile, previous.outputTails?.[path!]);
  }
}

function checkOutput(
  path: string,
  recorded: number,
  finished: boolean,
  checkpointFile: string,
  recordedTail: string | undefined,
): void {
  const size = sizeOf(path);
  const tail =
    recordedTail !== undefined && size !== undefined && size >= recorded ? tailHash(path, recorded) : undefined;
  const detail = outputChangeOf(
    { path, recorded, size, ...(recordedTail !== undefined && { recordedTail }), ...(tail !== undefined && { tail }) },
    finished,
  );
  if (detail !== undefined) throw new OutputChangedError(checkpointFile, detail, path, finished);
}

/** A file's length; undefined when it does not exist (or cannot be read). */
export function sizeOf(path: string): number | undefined {
  try {
    return statSync(path).size;
  } catch {
    return undefined;
  }
}
