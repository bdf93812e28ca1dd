import { createHash, type Hash } from 'node:crypto';
import { open, stat } from 'node:fs/promises';
import { VespaBulkError } from '../core/errors.js';
import type { InputFormat } from '../tabular/input-format.js';
import { tableFormatOf } from '../tabular/input-format.js';
import { isUrlInput } from './url-input.js';

/**
 * What a feed checkpoint knows of each input, so that a resume recognises it: the checkpoint's offsets point into
 * bytes a user may have edited since (a fixed line, lines inserted), and a resume into other bytes skips operations
 * it never sent.
 *
 * - `prefix` (a plain file): its size and time, and the SHA-256 of its bytes before `to` (what the checkpoint's
 *   offsets cover: its read position, or the whole file once finished). Content after `to` may change (lines
 *   appended): nothing there is skipped. Hashed at each save over the bytes read since the last one (a 1 GB file
 *   costs 0.7-1.1 s of CPU over the whole feed, off the reading path; see docs/guarantees.md).
 * - `ends` (a compressed file or a table): offsets count decompressed bytes or rows, so no prefix of the file
 *   stands for them; its size and time and the SHA-256 of its first and last 64 KiB (a gzip's last bytes are the
 *   CRC of all its data) identify it whole. Any change is a change.
 * - `none` (standard input, a URL, a stream): nothing a resume can check; it says so.
 */
export type InputIdentity =
  | { kind: 'prefix'; size: number; mtimeMs: number; to: number; line?: number; sha256: string }
  | { kind: 'ends'; size: number; mtimeMs: number; sha256: string }
  | { kind: 'none'; what: 'stdin' | 'url' | 'stream' };

const blockBytes = 64 * 1024;
const readBytes = 1024 * 1024;

/** How `path` can be identified. */
function kindOf(path: string, format: InputFormat | undefined): 'prefix' | 'ends' | 'stdin' | 'url' | 'stream' {
  if (path === '-') return 'stdin';
  if (isUrlInput(path)) return 'url';
  if (path === '<stream>' || path === '<iterable>') return 'stream';
  if (/\.(gz|zst)$/i.test(path) || tableFormatOf(path, format) !== undefined) return 'ends';
  return 'prefix';
}

/** The SHA-256 of the first and last 64 KiB of `path` (of size `size`). */
async function endsHash(path: string, size: number): Promise<string> {
  const file = await open(path, 'r');
  try {
    const hash = createHash('sha256');
    const buf = Buffer.allocUnsafe(blockBytes);
    const first = await file.read(buf, 0, Math.min(blockBytes, size), 0);
    hash.update(buf.subarray(0, first.bytesRead));
    const lastFrom = Math.max(first.bytesRead, size - blockBytes);
    const last = await file.read(buf, 0, size - lastFrom, lastFrom);
    hash.update(buf.subarray(0, last.bytesRead));
    return hash.digest('hex');
  } finally {
    await file.close();
  }
}

/** Feeds `hash` the bytes of `path` from `from` up to `to` (or its end, if sooner); returns where it stopped. */
async function hashRange(hash: Hash, path: string, from: number, to: number): Promise<number> {
  if (to <= from) return from;
  const file = await open(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(Math.min(readBytes, to - from));
    let at = from;
    while (at < to) {
      const { bytesRead } = await file.read(buf, 0, Math.min(buf.length, to - at), at);
      if (bytesRead === 0) break;
      hash.update(buf.subarray(0, bytesRead));
      at += bytesRead;
    }
    return at;
  } finally {
    await file.close();
  }
}

/** Where a checkpoint stands: its read position (`readTo`, else `position`), or null once the whole input is finished. */
export interface IdentityPoint {
  input: number;
  offset: number;
  line?: number;
}

/**
 * The identities of a feed's inputs at each checkpoint save. A plain file's hash goes on from the previous save's
 * (the state is copied, not finished), so a save reads only the bytes read since; saves run one at a time.
 */
export class InputIdentities {
  private readonly prefixes = new Map<number, { to: number; hash: Hash }>();
  private readonly ends = new Map<number, { size: number; mtimeMs: number; sha256: string }>();
  private last: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly paths: readonly string[],
    private readonly format?: () => InputFormat | undefined,
  ) {}

  /**
   * Each input's identity for a checkpoint at `point` (null: finished, every input read to its end); with
   * `addedFrom` (see `FeedCheckpoint.addedFrom`), input i's bytes before `addedFrom[i]` are covered too, since the
   * checkpoint skips them.
   */
  of(point: IdentityPoint | null, addedFrom?: readonly number[]): Promise<InputIdentity[]> {
    const next = this.last.then(() => this.compute(point, addedFrom));
    this.last = next.catch(() => undefined);
    return next;
  }

  private async compute(point: IdentityPoint | null, addedFrom?: readonly number[]): Promise<InputIdentity[]> {
    const out: InputIdentity[] = [];
    for (let i = 0; i < this.paths.length; i++) out.push(await this.identity(i, point, addedFrom?.[i]));
    return out;
  }

  private async identity(i: number, point: IdentityPoint | null, skipped = 0): Promise<InputIdentity> {
    const path = this.paths[i];
    const kind = kindOf(path, this.format?.());
    if (kind === 'stdin' || kind === 'url' || kind === 'stream') return { kind: 'none', what: kind };
    const s = await stat(path);
    const size = s.size;
    const mtimeMs = s.mtimeMs;
    if (kind === 'ends') {
      const known = this.ends.get(i);
      if (known !== undefined && known.size === size && known.mtimeMs === mtimeMs) return { kind, ...known };
      const ends = { size, mtimeMs, sha256: await endsHash(path, size) };
      this.ends.set(i, ends);
      return { kind, ...ends };
    }
    // Read whole (finished, or before where the checkpoint stands), read up to its position, or not read yet.
    let want = 0;
    if (point === null || i < point.input) want = size;
    else if (i === point.input) want = Math.min(point.offset, size);
    want = Math.max(want, Math.min(skipped, size));
    let state = this.prefixes.get(i);
    if (state === undefined || state.to > want) state = { to: 0, hash: createHash('sha256') };
    state.to = await hashRange(state.hash, path, state.to, want);
    this.prefixes.set(i, state);
    const line = point !== null && i === point.input && point.line !== undefined ? { line: point.line } : {};
    return { kind, size, mtimeMs, to: state.to, ...line, sha256: state.hash.copy().digest('hex') };
  }
}

/** How an input differs from its identity in a checkpoint. */
export interface InputChange {
  input: number;
  name: string;
  /** `grew`: only bytes after those the checkpoint covers were added; the others change what it skips. */
  kind: 'grew' | 'shorter' | 'content' | 'changed' | 'missing';
  /** What a user reads: what changed. */
  detail: string;
  /** For `grew`: where the new bytes begin, and the line there when known. */
  from?: { offset: number; line?: number };
}

function when(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * How input `i` (`path`) stands against `recorded`: undefined when it is as the checkpoint left it (an input grown
 * past a stopped checkpoint's read position is as it left it: it reads on there), else the change. A file whose
 * size and time are those recorded is not hashed again.
 */
export async function inputChange(
  i: number,
  path: string,
  recorded: InputIdentity,
  whole: boolean,
): Promise<InputChange | undefined> {
  if (recorded.kind === 'none') return undefined;
  let size: number;
  let mtimeMs: number;
  try {
    const s = await stat(path);
    size = s.size;
    mtimeMs = s.mtimeMs;
  } catch (err) {
    return { input: i, name: path, kind: 'missing', detail: `cannot be read: ${(err as Error).message}` };
  }
  const same = size === recorded.size && mtimeMs === recorded.mtimeMs;
  if (recorded.kind === 'ends') {
    if (same) return undefined;
    const sha256 = await endsHash(path, size);
    if (size === recorded.size && sha256 === recorded.sha256) return undefined;
    return {
      input: i,
      name: path,
      kind: 'changed',
      detail: `${size === recorded.size ? 'its content' : `its size (${recorded.size} bytes then, ${size} now)`} changed since the checkpoint (modified ${when(mtimeMs)}); a compressed file or a table is checked whole`,
    };
  }
  const to = recorded.to;
  const at = `byte ${to}${recorded.line !== undefined ? ` (line ${recorded.line})` : ''}`;
  if (same) return undefined;
  if (size < to)
    return {
      input: i,
      name: path,
      kind: 'shorter',
      detail: `it is shorter than the checkpoint's position: ${size} bytes now, the checkpoint covers its first ${to} (to ${at}); modified ${when(mtimeMs)}`,
    };
  const hash = createHash('sha256');
  await hashRange(hash, path, 0, to);
  if (hash.digest('hex') !== recorded.sha256)
    return {
      input: i,
      name: path,
      kind: 'content',
      detail: `its content before ${at} changed since the checkpoint (modified ${when(mtimeMs)}; ${recorded.size} bytes then, ${size} now)`,
    };
  // Bytes after those covered: new operations. A checkpoint that stands in this input reads on there; one past it
  // (finished, or in a later input) has nothing more to read of it.
  if (whole && size > to)
    return {
      input: i,
      name: path,
      kind: 'grew',
      detail: `${size - to} bytes were added after the ${to} the feed had read of it (modified ${when(mtimeMs)})`,
      from: { offset: to, ...(recorded.line !== undefined && { line: recorded.line }) },
    };
  return undefined;
}

/**
 * A resume refused because an input is not what the checkpoint read: its message names the input, what changed and
 * the choices, with the option names a caller knows (`messageWith`: the CLI passes its flags).
 */
export class InputChangedError extends VespaBulkError {
  constructor(
    readonly file: string,
    readonly changes: readonly InputChange[],
    readonly finished: boolean,
  ) {
    super('VB_USAGE', '');
    this.message = this.messageWith({
      resumeChanged: 'resumeChanged: true',
      afresh: 'leave out resume, and remove the checkpoint',
    });
  }

  messageWith(names: { resumeChanged: string; afresh: string }): string {
    const lines = this.changes.map((c) => `input ${c.name}: ${c.detail}`);
    if (this.finished && this.changes.every((c) => c.kind === 'grew'))
      return `${this.file} is of a finished feed, and its input grew since: ${lines.join('; ')}. The new operations were never sent. Feed only what was added with ${names.resumeChanged}, or start afresh (${names.afresh}) to feed everything again`;
    return `${this.file} does not match its input any more: ${lines.join('; ')}. Its offsets would skip operations that were never sent. Start afresh (${names.afresh}) to feed everything again, or resume anyway with ${names.resumeChanged}: operations before the checkpoint's position are not sent again as they stand now, and operations moved across it may be lost or sent twice`;
  }
}
