import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';

/**
 * Bytes before an output's recorded length that its checkpoint fingerprints: a rewritten end (another export to
 * the same name, another order of documents) shows there. One block: an export of 256 slice files being written
 * reads back at most 1 MB per save.
 */
export const tailBytes = 4096;

/**
 * The SHA-256 (hex) of the up to `tailBytes` bytes of `path` before `length`: what a checkpoint records with the
 * length, so a resume tells the file it wrote from another one as long (another export to the same name, an edit).
 * Undefined when the file cannot be read or is shorter than `length` (nothing to record, or to compare).
 */
export function tailHash(path: string, length: number): string | undefined {
  const from = Math.max(0, length - tailBytes);
  const buf = Buffer.alloc(length - from);
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, from + got);
      if (n === 0) return undefined;
      got += n;
    }
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
  return createHash('sha256').update(buf).digest('hex');
}

/**
 * The fingerprints of a checkpoint's outputs as it is saved, each file read again only when its length changed
 * since the last save (a visit of 256 slice files reads the few still being written).
 */
export class OutputTails {
  private readonly known = new Map<string, { length: number; hash: string }>();

  constructor(previous?: { outputs?: Record<string, number>; outputTails?: Record<string, string> }) {
    for (const [path, hash] of Object.entries(previous?.outputTails ?? {})) {
      const length = previous?.outputs?.[path];
      if (length !== undefined) this.known.set(path, { length, hash });
    }
  }

  of(lengths: Record<string, number>): Record<string, string> {
    const tails: Record<string, string> = {};
    for (const [path, length] of Object.entries(lengths)) {
      const known = this.known.get(path);
      const hash = known !== undefined && known.length === length ? known.hash : tailHash(path, length);
      if (hash === undefined) continue;
      this.known.set(path, { length, hash });
      tails[path] = hash;
    }
    return tails;
  }
}
