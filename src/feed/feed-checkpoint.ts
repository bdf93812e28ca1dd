import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { writeFileAtomically } from '../fs/atomic-write.js';
import { stat } from 'node:fs/promises';
import { CheckpointStore, readCheckpointFile, readCheckpointFileSync } from '../fs/checkpoint-file.js';
import { prepareOutputFile } from '../fs/output-file.js';
import { VespaBulkError } from '../core/errors.js';
import type { InputInfo, InputPosition, OpenPosition } from './source.js';
import { isUrlInput, redactUrl } from './url-input.js';
import type { FailureMark, FailureWriter } from './failures.js';
import type { Shard } from './shard.js';
import type { RecordedFeed, RecordedOptions } from './recorded-options.js';
import { InputChangedError, InputIdentities, inputChange, type InputIdentity } from './input-identity.js';

/**
 * The feed's checkpoint: its payload (`FeedCheckpoint`), the rules of resuming from it, and its saving through the
 * one `CheckpointStore`. Version 2 records where the feed sent and what its requests carried (`endpoint`,
 * `options`); version 1 files, without them, still resume. An earlier vespa-bulk refuses a version 2 file rather
 * than feed it to its default endpoint.
 */

/** The version written. */
const feedCheckpointVersion = 2;

/**
 * Where a stopped feed can go on. Everything before `position` is finished: succeeded, or written to the
 * failure output. Operations after it may have succeeded already and are sent again on resume; put and
 * remove are idempotent, and so is an update that only assigns, so only non-assign updates can apply twice.
 * `position: null` means the whole input is finished.
 */
export interface FeedCheckpoint extends RecordedFeed {
  version: 1 | 2;
  /** Input names in feed order; resume reads the same inputs. */
  inputs: string[];
  /**
   * Where the feed sent: origin and path, without credentials. A resume that gives no endpoint feeds this one, and
   * one that gives another is refused (`resumedOptions`). Absent from version 1, and when nothing answered there
   * (the feed stopped as unreachable) and no earlier run had sent anywhere: then nothing is bound to it.
   */
  endpoint?: string;
  /** The feed's settings that change where requests go or what they carry, those set (`RecordedOptions`). */
  options?: RecordedOptions;
  position: InputPosition | null;
  /** ISO time of writing. */
  written: string;
  /** Why the feed stopped. */
  reason: string;
  shard?: string;
  failures?: string;
  /** How much of `failures` this checkpoint counts; a resumed feed cuts the files back to it. */
  failureMark?: FailureMark;
  /**
   * Everything before this position was read. With `unfinished`, only the operations listed there (and those
   * from `readTo` on) are sent on resume; without them (older checkpoints), everything from `position` on.
   */
  readTo?: InputPosition;
  /** `[input, offset, line]` of each operation read before `readTo` and not finished, in input order. */
  unfinished?: OpenPosition[];
  /** Operations succeeded and finally failed, over all runs up to this checkpoint (informative; a run before this version counted its own). */
  ok: number;
  errors: number;
  /**
   * What the runs up to this checkpoint finished, over all of them: succeeded, finally failed (of them unreadable),
   * left to other shards, dropped by the transform; and the seconds they ran. A resumed feed counts the whole feed
   * from them (its summary and progress). Absent from the files of an earlier vespa-bulk (whose `ok` and `errors`
   * may count one run only): the earlier counts are then unknown, and a feed resumed from one says so.
   */
  counts?: {
    ok: number;
    errors: number;
    parseErrors: number;
    skipped: number;
    dropped: number;
    seconds: number;
  };
  /**
   * What identifies each input's content as the checkpoint read it (in `inputs` order), so that a resume into an
   * input edited since is refused rather than skip by stale offsets (`checkInputs`). Absent from earlier files.
   */
  identity?: InputIdentity[];
  /**
   * A finished checkpoint resumed with `resumeChanged` feeds what was added to each input since: the operations
   * from this offset of input i on (and those `position`, `readTo` and `unfinished` leave). Kept by the checkpoints
   * of that feed, so a stop in one grown input does not send the old part of a later one again.
   */
  addedFrom?: number[];
}

/**
 * The file's text: indented for a reader, but the `unfinished` list one entry per line, since with workers it
 * can hold tens of thousands (the read-ahead) and is rewritten every few seconds.
 */
export function feedCheckpointText(checkpoint: FeedCheckpoint): string {
  const { unfinished, ...rest } = checkpoint;
  const text = JSON.stringify(rest, null, 2);
  if (unfinished === undefined) return `${text}\n`;
  const list =
    unfinished.length === 0 ? '[]' : `[\n${unfinished.map((e) => `    ${JSON.stringify(e)}`).join(',\n')}\n  ]`;
  return `${text.slice(0, -2)},\n  "unfinished": ${list}\n}\n`;
}

/**
 * Reads a feed checkpoint file written by a stopped feed. VB_USAGE when there is none (no file, or an empty one),
 * it cannot be read or it is not a feed checkpoint; VB_BAD_JSON when it is not JSON.
 * @example
 * ```ts
 * import { feed, readFeedCheckpoint } from 'vespa-bulk';
 *
 * const checkpoint = await readFeedCheckpoint('corpus.ckpt');
 * await feed(['corpus.jsonl'], { endpoint: 'http://127.0.0.1:8080', resume: checkpoint });
 * ```
 */
export async function readFeedCheckpoint(path: string): Promise<FeedCheckpoint> {
  const value = await readCheckpointFile(path);
  if (value === undefined)
    throw new VespaBulkError('VB_USAGE', `cannot read checkpoint '${path}': no such file, or it is empty`, {
      place: { file: path },
    });
  return feedCheckpointOf(value, path);
}

/** `readFeedCheckpoint`, synchronously: the feeder reads it when it is made, since its endpoint may come from it. */
export function readFeedCheckpointSync(path: string): FeedCheckpoint {
  const value = readCheckpointFileSync(path);
  if (value === undefined)
    throw new VespaBulkError('VB_USAGE', `cannot read checkpoint '${path}': no such file, or it is empty`, {
      place: { file: path },
    });
  return feedCheckpointOf(value, path);
}

/** The checkpoint in a checkpoint file's JSON `value`; VB_USAGE when it is not a feed checkpoint. */
function feedCheckpointOf(value: unknown, path: string): FeedCheckpoint {
  if (typeof value !== 'object' || value === null)
    throw new VespaBulkError('VB_USAGE', `'${path}' is not a vespa-bulk feed checkpoint`);
  const c = value as Partial<FeedCheckpoint>;
  const positionOk =
    c.position === null ||
    (typeof c.position === 'object' &&
      c.position !== null &&
      Number.isInteger(c.position.input) &&
      Number.isInteger(c.position.offset));
  const recordedOk =
    c.version === 1 ||
    ((c.endpoint === undefined || typeof c.endpoint === 'string') &&
      (c.options === undefined || (typeof c.options === 'object' && c.options !== null)));
  const addedOk = c.addedFrom === undefined || (Array.isArray(c.addedFrom) && c.addedFrom.every(Number.isInteger));
  if ((c.version !== 1 && c.version !== 2) || !recordedOk || !Array.isArray(c.inputs) || !positionOk || !addedOk) {
    throw new VespaBulkError('VB_USAGE', `'${path}' is not a vespa-bulk feed checkpoint`);
  }
  // Counts that are not all there (a file edited by hand) are taken as unknown rather than read as zeros.
  if (c.counts !== undefined && !countsOk(c.counts)) delete c.counts;
  return c as FeedCheckpoint;
}

/** The counts a feed checkpoint carries (`FeedCheckpoint.counts`). */
export type FeedCheckpointCounts = NonNullable<FeedCheckpoint['counts']>;

const countNames = ['ok', 'errors', 'parseErrors', 'skipped', 'dropped', 'seconds'] as const;

function countsOk(counts: unknown): counts is FeedCheckpointCounts {
  if (typeof counts !== 'object' || counts === null) return false;
  const c = counts as Record<string, unknown>;
  return countNames.every((n) => {
    const v = c[n];
    return typeof v === 'number' && Number.isFinite(v) && v >= 0;
  });
}

/**
 * Refuses (VB_USAGE) to continue `checkpoint` with other inputs or another shard: its positions would point
 * into the wrong operations.
 */
export function checkResumable(
  checkpoint: FeedCheckpoint,
  inputs: readonly string[],
  shard: Shard | undefined,
  file = 'the checkpoint',
): void {
  // URLs compare by origin and path: a rerun's link may carry a fresh signature, and the saved one has none.
  const same = (a: readonly string[]) => a.map((i) => (isUrlInput(i) ? redactUrl(i) : i)).join('\0');
  if (same(checkpoint.inputs) !== same(inputs)) {
    throw new VespaBulkError(
      'VB_USAGE',
      `${file} is for input ${checkpoint.inputs.join(', ')}, not ${inputs.join(', ')}`,
    );
  }
  const wanted = shard === undefined || shard.count === 1 ? undefined : `${shard.index}/${shard.count}`;
  const had = checkpoint.shard === '0/1' ? undefined : checkpoint.shard;
  if (had !== wanted) {
    throw new VespaBulkError(
      'VB_USAGE',
      `${file} was written ${had === undefined ? 'without --shard' : `with --shard ${had}`}, not ${wanted === undefined ? 'without it' : `with --shard ${wanted}`}`,
    );
  }
}

/**
 * The checkpoint a feed with these options continues: `resume`, else the `checkpoint` file when it exists
 * (the same feed run again goes on, as a visit does); refused (VB_USAGE) when it is for other inputs or shard,
 * or when an input changed since (`checkInputs`; `resumeChanged` goes on all the same).
 */
export async function checkpointToResume(
  options: { resume?: FeedCheckpoint | string; checkpoint?: string | false; shard?: Shard; resumeChanged?: boolean },
  inputs: readonly InputInfo[],
): Promise<FeedCheckpoint | undefined> {
  const path = typeof options.checkpoint === 'string' ? options.checkpoint : undefined;
  const from = options.resume ?? (path !== undefined && existsSync(path) ? path : undefined);
  const resume = typeof from === 'string' ? await readFeedCheckpoint(from) : from;
  if (resume === undefined) return undefined;
  const file = typeof from === 'string' ? `checkpoint '${from}'` : 'the checkpoint';
  const names = inputs.map((i) => i.name);
  checkResumable(resume, names, options.shard, file);
  return (await checkInputs(resume, names, { resumeChanged: options.resumeChanged === true, file })).checkpoint;
}

/** Checkpoints `checkInputs` returned: the feed that is handed one does not hash its inputs again. */
const checked = new WeakSet<FeedCheckpoint>();

/** What `checkInputs` found. */
export interface InputsChecked {
  /** The checkpoint to continue: the one given, or, for a finished one whose inputs grew, one that feeds what was added. */
  checkpoint: FeedCheckpoint;
  /** What a user should know that was not checked (standard input, a URL) or was taken as changed. */
  notes: string[];
  /** A finished checkpoint goes on with what was added to its inputs: where. */
  added?: { input: string; offset: number; line?: number }[];
}

/**
 * Whether each input (`paths`, as given) is still what `checkpoint` read (its `identity`): content before the
 * position it stands at unchanged (a file may have grown after it). Refused with `InputChangedError` (VB_USAGE)
 * when one changed, unless `resumeChanged`: then the checkpoint goes on as it stands, and a finished one feeds
 * what was added to each input after the bytes it had read.
 */
export async function checkInputs(
  checkpoint: FeedCheckpoint,
  paths: readonly string[],
  how: { resumeChanged: boolean; file?: string },
): Promise<InputsChecked> {
  const notes: string[] = [];
  const identity = checkpoint.identity;
  if (checked.has(checkpoint) || identity === undefined) return { checkpoint, notes };
  const finished = checkpoint.position === null;
  const point = checkpoint.readTo ?? checkpoint.position;
  const changes = [];
  for (let i = 0; i < paths.length && i < identity.length; i++) {
    const id = identity[i];
    if (id.kind === 'none') {
      const what = id.what === 'stdin' ? 'standard input' : `input ${paths[i]}`;
      if (!finished && (point === null || i <= point.input))
        notes.push(
          `${what} cannot be checked against the checkpoint (nothing of it is kept): it must be the same input, since what the checkpoint counts as done is skipped by its offsets`,
        );
      continue;
    }
    const change = await inputChange(i, paths[i], id, finished || (point !== null && i < point.input));
    if (change !== undefined) changes.push(change);
  }
  const file = how.file ?? 'the checkpoint';
  if (changes.length === 0) {
    checked.add(checkpoint);
    return { checkpoint, notes };
  }
  if (!how.resumeChanged) throw new InputChangedError(file, changes, finished);
  notes.push(...changes.map((c) => `input ${c.name}: ${c.detail}; resumed all the same (resumeChanged)`));
  if (!finished) {
    checked.add(checkpoint);
    return { checkpoint, notes };
  }
  // Finished: only what was added after the bytes the feed had read of each input is fed.
  const addedFrom = identity.map((id) => (id.kind === 'prefix' ? id.to : Number.MAX_SAFE_INTEGER));
  const added = [];
  for (const c of changes) {
    const id = identity[c.input];
    if (id.kind !== 'prefix') continue;
    const size = await sizeOf(paths[c.input]);
    if (size !== undefined && size > id.to)
      added.push({ input: c.name, offset: id.to, ...(id.line !== undefined && { line: id.line }), at: c.input });
  }
  const first = added[0];
  if (first === undefined) {
    checked.add(checkpoint);
    return { checkpoint, notes };
  }
  const resumed: FeedCheckpoint = {
    ...checkpoint,
    position: { input: first.at, offset: first.offset, line: first.line ?? 1 },
    addedFrom,
  };
  delete resumed.readTo;
  delete resumed.unfinished;
  checked.add(resumed);
  return {
    checkpoint: resumed,
    notes,
    added: added.map(({ at: _at, ...a }) => a),
  };
}

async function sizeOf(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).size;
  } catch {
    return undefined;
  }
}

function before(a: { input: number; offset: number }, b: { input: number; offset: number }): boolean {
  return a.input < b.input || (a.input === b.input && a.offset < b.offset);
}

/**
 * Which items a feed resumed from `checkpoint` skips: those before its position, and those before `readTo`
 * that are not listed unfinished (they succeeded or are in the failure output already).
 */
export function resumeSkip(checkpoint: FeedCheckpoint): (input: number, offset: number) => boolean {
  const added = checkpoint.addedFrom;
  const skip = positionSkip(checkpoint);
  if (added === undefined) return skip;
  return (input, offset) => offset < (added[input] ?? Number.MAX_SAFE_INTEGER) || skip(input, offset);
}

function positionSkip(checkpoint: FeedCheckpoint): (input: number, offset: number) => boolean {
  const from = checkpoint.position ?? { input: Number.MAX_SAFE_INTEGER, offset: 0 };
  const readTo = checkpoint.readTo;
  const unfinished = checkpoint.unfinished;
  if (readTo === undefined || unfinished === undefined) return (input, offset) => before({ input, offset }, from);
  const open = new Set(unfinished.map(([input, offset]) => `${input}:${offset}`));
  return (input, offset) => {
    const at = { input, offset };
    if (before(at, from)) return true;
    return before(at, readTo) && !open.has(`${input}:${offset}`);
  };
}

/** Where a feed stands: what a checkpoint saves. */
export interface FeedPosition {
  /** The first unfinished operation (or `readTo` when none is); null: the whole input is finished. */
  position: InputPosition | null;
  readTo?: InputPosition;
  unfinished?: OpenPosition[];
  /** The resumed checkpoint's, kept (see `FeedCheckpoint.addedFrom`). */
  addedFrom?: number[];
}

/**
 * The position of a feed from its unfinished operations (`[input, offset, line]`, in input order) and the
 * position after the last item read. Operations of `previous` (the checkpoint resumed) that this run has
 * not read yet are still unfinished, and its `readTo` still holds: a save early in a resumed run keeps
 * what the earlier run knew.
 */
export function feedPosition(
  unfinished: Iterable<OpenPosition>,
  readPosition: InputPosition | undefined,
  previous?: FeedCheckpoint,
): FeedPosition {
  const open = [...unfinished];
  let readTo = readPosition;
  if (previous !== undefined && previous.position !== null) {
    const prevReadTo = previous.readTo ?? previous.position;
    if (readTo === undefined || before(readTo, prevReadTo)) {
      const read = readTo;
      readTo = prevReadTo;
      // An older checkpoint without the list: everything from its position on is open, which readTo says.
      if (previous.unfinished !== undefined) {
        for (const e of previous.unfinished)
          if (read === undefined || !before({ input: e[0], offset: e[1] }, read)) open.push(e);
      }
    }
  }
  readTo ??= { input: 0, offset: 0, line: 1 };
  const first = open[0];
  const position = first === undefined ? readTo : { input: first[0], offset: first[1], line: first[2] };
  return {
    position,
    readTo,
    unfinished: open,
    ...(previous?.addedFrom !== undefined && { addedFrom: previous.addedFrom }),
  };
}

/** The last checkpoint of a run could not be written where asked; `savedTo` is where it was written instead, if anywhere. */
export class CheckpointUnwritableError extends VespaBulkError {
  constructor(
    readonly path: string,
    cause: unknown,
    readonly savedTo: string | undefined,
  ) {
    super(
      'VB_TRANSPORT',
      `the checkpoint '${path}' cannot be written: ${(cause as Error).message}; ${savedTo !== undefined ? `it was saved to ${savedTo} instead` : 'it could not be saved elsewhere either'}`,
      { cause, place: { file: path } },
    );
  }
}

/** What a `FeedCheckpointStore` needs to know of the feed it saves. */
export interface FeedCheckpointOptions {
  path: string;
  /** Input names in feed order. */
  inputs: string[];
  shard?: Shard;
  /** The failure output: synced before each save, and its mark recorded. */
  failures?: FailureWriter;
  /** Where the feed sends and what its requests carry (`recordFeed`), as it stands at each save. */
  sends: () => { endpoint?: string; options?: RecordedOptions };
}

/**
 * The feed checkpoint for `state`, with the failure output's mark as it is now (none without `failures`, as for a
 * checkpoint shown to a caller rather than saved).
 */
export function buildFeedCheckpoint(feed: Omit<FeedCheckpointOptions, 'path'>, state: SaveState): FeedCheckpoint {
  const c: FeedCheckpoint = {
    version: feedCheckpointVersion,
    inputs: feed.inputs,
    ...feed.sends(),
    position: state.position,
    written: new Date().toISOString(),
    reason: state.reason,
    ok: state.ok,
    errors: state.errors,
    ...(state.counts !== undefined && { counts: state.counts }),
  };
  const shard = feed.shard;
  if (shard !== undefined && shard.count > 1) c.shard = `${shard.index}/${shard.count}`;
  const failures = feed.failures;
  if (failures !== undefined && failures.count > 0) {
    c.failures = failures.path;
    c.failureMark = failures.mark();
  }
  if (state.position !== null && state.readTo !== undefined && state.unfinished !== undefined) {
    c.readTo = state.readTo;
    c.unfinished = state.unfinished;
  }
  if (state.position !== null && state.addedFrom !== undefined) c.addedFrom = state.addedFrom;
  return c;
}

/** The counters and stop reason of a save, beside the position. */
export interface SaveState extends FeedPosition {
  ok: number;
  errors: number;
  /** Over all runs; absent when the checkpoint resumed had none (`FeedCheckpoint.counts`). */
  counts?: FeedCheckpointCounts;
  /** Why the feed stopped, or 'running' / 'finished'. */
  reason: string;
}

/**
 * The feed's checkpoint file, saved through a `CheckpointStore` (atomic, fsync'd, one save at a time in the order
 * asked). A save records the failure output's mark at the moment it is asked for, and is written only once those
 * failures are on disk, so a checkpoint never counts an operation as finished that a crash could lose. A
 * coordinator of several feeders calls `save()` with the position it computed.
 */
export class FeedCheckpointStore {
  private readonly store: CheckpointStore<FeedCheckpoint>;
  private readonly identities: InputIdentities;

  constructor(private readonly options: FeedCheckpointOptions) {
    const failures = options.failures;
    prepareOutputFile(options.path, 'checkpoint');
    this.store = new CheckpointStore({
      path: options.path,
      text: feedCheckpointText,
      ...(failures !== undefined && { beforeWrite: () => failures.sync() }),
    });
    this.identities = new InputIdentities(options.inputs, () => options.sends().options?.inputFormat);
  }

  /** `checkpoint` with what identifies its inputs up to where it stands, hashed after the state was taken. */
  private async identified(checkpoint: FeedCheckpoint): Promise<FeedCheckpoint> {
    const point = checkpoint.position === null ? null : (checkpoint.readTo ?? checkpoint.position);
    checkpoint.identity = await this.identities.of(point, checkpoint.addedFrom);
    return checkpoint;
  }

  get path(): string {
    return this.options.path;
  }

  /** The checkpoint for `state` now (the failure mark is taken here). */
  private build(state: SaveState): FeedCheckpoint {
    return buildFeedCheckpoint(this.options, state);
  }

  /** Saves `state` once the failures it counts are on disk; resolves when the file is replaced. */
  save(state: SaveState): Promise<void> {
    const checkpoint = this.identified(this.build(state));
    const saved = this.store.save(checkpoint);
    // A periodic save that fails leaves the previous file, and the next one tries again; the last save of a run does not.
    if (state.reason === 'running') return saved;
    return saved.catch(async (err: unknown) => {
      throw await this.savedElsewhere(await checkpoint, err);
    });
  }

  /**
   * The last save of a run could not be written where asked (its folder gone, a full disk): it is written in the
   * temporary folder instead, so that where the feed stands is not lost, and the error says where. Not when it
   * failed because the failure output could not be synced: the checkpoint would count failures that are on no disk.
   */
  private async savedElsewhere(checkpoint: FeedCheckpoint, err: unknown): Promise<VespaBulkError> {
    const failures = this.options.failures;
    if (failures !== undefined && failures.failed !== undefined) return err as VespaBulkError;
    const path = this.options.path;
    const elsewhere = join(tmpdir(), `vespa-bulk-${process.pid}-${basename(path)}`);
    let savedTo: string | undefined;
    try {
      await writeFileAtomically(elsewhere, feedCheckpointText(checkpoint));
      savedTo = elsewhere;
    } catch {
      savedTo = undefined;
    }
    return new CheckpointUnwritableError(path, err, savedTo);
  }

  /** Saves `state()` every `intervalMs` until `stop()`; a save still running is not doubled. */
  start(intervalMs: number, state: () => SaveState): void {
    this.store.start(() => this.identified(this.build(state())), intervalMs);
  }

  /** Ends the periodic saves and waits for one under way. */
  async stop(): Promise<void> {
    await this.store.stop();
  }
}
