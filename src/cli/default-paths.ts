/**
 * The file names the CLI picks when none is given: the library writes no file it was not asked for, so
 * these defaults are the CLI's.
 */

/** Name of the failure file when none is given: in the working directory, unique per second. */
export function defaultFailuresPath(now = new Date()): string {
  return `vespa-bulk-failures-${stampOf(now)}.jsonl`;
}

/** Name of the checkpoint file when none is given. */
export function defaultCheckpointPath(now = new Date()): string {
  return `vespa-bulk-checkpoint-${stampOf(now)}.json`;
}

/** Whether `name` is one `defaultCheckpointPath` gives. */
export function isDefaultCheckpointName(name: string): boolean {
  return /^vespa-bulk-checkpoint-\d{8}T\d{6}Z\.json$/.test(name);
}

function stampOf(now: Date): string {
  return now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
}
