import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { VespaBulkError } from '../core/errors.js';
import { writeFileAtomically } from './atomic-write.js';

/**
 * ms between periodic checkpoint saves, for the feed and the visit alike. 1 s rather than 2 s: the interval is what a
 * kill outright costs (a feed sends it again; a visit to standard output writes it twice), and a visit writes the
 * partly filled tail of each output file at each save, so with 2 s a short export shows its output later (the
 * signal test, which stops a visit by its output's size, then stops it only after the end). A save costs two fsyncs
 * and, with feed workers, a short pause in reading: small at one a second.
 */
export const defaultCheckpointIntervalMs = 1000;

/** How a `CheckpointStore` saves its payload. */
export interface CheckpointStoreOptions<T> {
  /** The checkpoint file. */
  path: string;
  /** The file's text for a payload. Default: JSON indented by 2, with a final newline. */
  text?: (payload: T) => string;
  /**
   * The payload as it stands, read when a save of `touch()`, `start()` or `flush()` begins (after the saves
   * before it), so a save writes the newest state.
   */
  snapshot?: () => T | Promise<T>;
  /**
   * Runs before each write, after the payload was taken: whatever the payload counts as done is put on disk
   * here first (the feed's failure output), so a checkpoint never gets ahead of it.
   */
  beforeWrite?: () => Promise<void>;
  /** ms between saves of `touch()` and `start()`. Default `defaultCheckpointIntervalMs`. */
  intervalMs?: number;
}

/**
 * One checkpoint file holding a JSON payload, saved atomically and durably (see `writeFileAtomically`): on demand
 * (`save`, `flush`) and periodically (`start`: every interval; `touch`: within an interval of a change). Saves run
 * one at a time in the order asked, so the last one asked is the one on disk. The feed's and the visit's
 * checkpoints are payloads of it (`feed/feed-checkpoint.ts`, `visit/visit-checkpoint.ts`).
 */
export class CheckpointStore<T> {
  private last: Promise<void> = Promise.resolve();
  private interval: NodeJS.Timeout | undefined;
  private delay: NodeJS.Timeout | undefined;
  /** The save of a `touch()` (or `flush()`) under way. */
  private touched: Promise<void> | undefined;
  private dirty = false;
  private failure: { error: unknown } | undefined;

  constructor(private readonly options: CheckpointStoreOptions<T>) {}

  get path(): string {
    return this.options.path;
  }

  private get intervalMs(): number {
    return this.options.intervalMs ?? defaultCheckpointIntervalMs;
  }

  /** Saves `payload` (once made) after the saves asked before it; resolves when the file is replaced, rejects with this save's failure. */
  save(payload: T | Promise<T>): Promise<void> {
    // A payload still being made is awaited in turn, so the saves stay in the order asked.
    if (payload instanceof Promise) payload.catch(() => undefined);
    return this.enqueue(() => payload);
  }

  private enqueue(payload: () => T | Promise<T>): Promise<void> {
    const next = this.last.then(async () => {
      const value = await payload();
      await this.options.beforeWrite?.();
      await writeFileAtomically(this.options.path, (this.options.text ?? jsonText)(value));
    });
    this.last = next.catch(() => undefined);
    return next;
  }

  private snapshot(): T | Promise<T> {
    const snapshot = this.options.snapshot;
    if (snapshot === undefined)
      throw new VespaBulkError('VB_USAGE', `checkpoint ${this.options.path}: no snapshot to save`);
    return snapshot();
  }

  /**
   * Saves `snapshot()` (default: the store's) every interval until `stop()`; a tick while that save still runs is
   * skipped. A failed periodic save (a full disk) leaves the previous file; the final save reports its own error.
   */
  start(snapshot: () => T | Promise<T> = () => this.snapshot(), intervalMs = this.intervalMs): void {
    let busy = false;
    this.interval = setInterval(() => {
      if (busy) return;
      busy = true;
      this.enqueue(snapshot)
        .catch(() => undefined)
        .finally(() => (busy = false));
    }, intervalMs);
    this.interval.unref();
  }

  /** Ends the periodic saves and waits for those under way. */
  async stop(): Promise<void> {
    clearInterval(this.interval);
    this.interval = undefined;
    clearTimeout(this.delay);
    this.delay = undefined;
    while (this.touched !== undefined) await this.touched;
    await this.last;
  }

  /** The state changed: the store's snapshot is saved within an interval (at most one save per interval, never two at once). */
  touch(): void {
    this.dirty = true;
    if (this.delay !== undefined || this.touched !== undefined) return;
    this.delay = setTimeout(() => {
      this.delay = undefined;
      void this.saveTouched();
    }, this.intervalMs);
    this.delay.unref();
  }

  /** Saves the store's snapshot now (after any save under way); rejects with the failure of any save of `touch()` or `flush()` so far. */
  async flush(): Promise<void> {
    clearTimeout(this.delay);
    this.delay = undefined;
    while (this.touched !== undefined) await this.touched;
    this.dirty = true;
    await this.saveTouched();
    if (this.failure !== undefined) throw this.failure.error;
  }

  private async saveTouched(): Promise<void> {
    if (!this.dirty) return;
    if (this.touched !== undefined) return this.touched;
    this.dirty = false;
    this.touched = this.enqueue(() => this.snapshot())
      .catch((err: unknown) => {
        this.failure = { error: err };
      })
      .finally(() => (this.touched = undefined));
    await this.touched;
    if (this.dirty) this.touch();
  }
}

function jsonText(payload: unknown): string {
  return `${JSON.stringify(payload, null, 2)}\n`;
}

/**
 * The JSON value of a checkpoint file, or undefined when there is none yet (no file, or an empty one: a save
 * never leaves one, but a user may create it). VB_USAGE when it cannot be read, VB_BAD_JSON when it is not JSON
 * (cut short, or not a checkpoint at all); the payload's reader checks its shape.
 */
export async function readCheckpointFile(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    return unreadable(err, path);
  }
  return checkpointValue(text, path);
}

/** `readCheckpointFile`, read synchronously: for a constructor that must know what it continues (the feed's endpoint). */
export function readCheckpointFileSync(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    return unreadable(err, path);
  }
  return checkpointValue(text, path);
}

function unreadable(err: unknown, path: string): undefined {
  if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
  throw new VespaBulkError('VB_USAGE', `cannot read checkpoint '${path}': ${(err as Error).message}`, {
    cause: err,
    place: { file: path },
  });
}

function checkpointValue(text: string, path: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new VespaBulkError('VB_BAD_JSON', `checkpoint ${path} is not valid JSON`, {
      cause: err,
      place: { file: path },
    });
  }
}
