import type { VisitBatch } from '../visit-batch.js';
import type { TransformFunction } from '../../transform/transform.js';
import { transformEntries } from '../transform-entries.js';
import { createEncoder, type BatchEncoder, type OutputFormat } from '../../sinks/output-format.js';
import type { ChainSpec } from '../query.js';
import { sizeOf, type RestoredOutputs } from './restore-outputs.js';
import type { OpenedSink, SinkChoice } from '../../sinks/sink-choice.js';
import { csvHeaderOf } from './tabular-export.js';
import type { TabularLayout } from '../../sinks/parquet-write.js';

/** An open output: its sink, the encoder of its documents, and the writes queued on it (one at a time). */
interface OpenOutput extends OpenedSink {
  encoder: BatchEncoder;
  queue: Promise<void>;
}

/** An output closed before the end: its file, its final length once closed, and the bytes it took. */
interface ClosedOutput {
  path: string | undefined;
  length: Promise<number | undefined>;
  bytes: number;
}

/**
 * The outputs of an export as it runs: opened on a slice's first documents (per slice, or one for all), closed once
 * every chain of their slice finished (a visit of 256 slices does not hold 256 files and their buffers), and their
 * lengths for checkpoints. A table in parts (`SinkChoice.rowsPerFile`) has one output for all the slices, closed
 * and followed by the next part once it holds that many rows.
 */
export class ExportOutputs {
  private readonly open = new Map<number | 'all', OpenOutput>();
  /** Files of slices whose chains all finished, closed (and parts that were full, by `part:<n>`). */
  private readonly closed = new Map<number | string, ClosedOutput>();
  /** The part being written, and its rows so far (with `rowsPerFile`). */
  private part = 0;
  private rowsInPart = 0;
  private readonly chainsOfSlice = new Map<number, string[]>();
  private transforming = 0;

  constructor(
    private readonly choice: SinkChoice,
    private readonly format: OutputFormat,
    private readonly restored: RestoredOutputs,
    private readonly resumed: boolean,
    chains: readonly ChainSpec[],
    /** Chains the checkpoint saved as finished. */
    private readonly finishedChains: Set<string>,
    /** A Parquet or CSV export's columns. */
    private readonly layout: TabularLayout = {},
    /** Applied to each batch before it is encoded (`ExportOptions.transform`). */
    private readonly transform?: TransformFunction,
  ) {
    for (const c of chains) this.chainsOfSlice.set(c.sliceId, [...(this.chainsOfSlice.get(c.sliceId) ?? []), c.key]);
  }

  /** The output of a slice, opened on first use. */
  of(slice: number): OpenOutput {
    const key = this.choice.perSlice ? slice : 'all';
    let s = this.open.get(key);
    if (s === undefined) {
      // A part is a new file, never one written before.
      if (this.choice.rowsPerFile !== undefined) return this.opened(key, this.choice.open(this.part, false));
      const path = this.choice.pathOf(slice);
      // A closed file opened again (not expected: its chains were finished) is appended to, never truncated.
      const append = this.closed.has(slice) || (this.resumed && (path === undefined || !this.restored.fresh.has(path)));
      // A CSV file continued keeps the columns of its header.
      const header = this.format === 'csv' && append && path !== undefined ? csvHeaderOf(path) : undefined;
      s = this.opened(key, this.choice.open(slice, append), header);
    }
    return s;
  }

  private opened(key: number | 'all', sink: OpenedSink, header?: string[]): OpenOutput {
    const s = { ...sink, encoder: createEncoder(this.format, this.layout, header), queue: Promise.resolve() };
    this.open.set(key, s);
    return s;
  }

  /** Encodes and writes a batch of documents (this thread's visit); settles when the sink can take more. */
  deliver(batch: VisitBatch): void | Promise<void> {
    const s = this.of(batch.slice);
    if (this.transform === undefined) return this.write(s, batch.entries);
    const entries = transformEntries(batch.entries, this.transform);
    if (!(entries instanceof Promise)) return this.write(s, entries);
    // An async transform: written in delivery order after the writes queued before, counted until written so a
    // checkpoint waits for it (`transformsPending`).
    this.transforming++;
    const written = s.queue.then(() => entries).then((list) => this.write(s, list));
    s.queue = written.then(
      () => undefined,
      () => undefined,
    );
    return written.finally(() => this.transforming--);
  }

  /** Writes a batch's entries to `s`; a part that now holds `rowsPerFile` rows is closed, the next opened on use. */
  private write(s: OpenOutput, entries: VisitBatch['entries']): void | Promise<void> {
    const written = s.sink.write(s.encoder.encode(entries));
    const limit = this.choice.rowsPerFile;
    if (limit !== undefined && this.open.get('all') === s && (this.rowsInPart += entries.length) >= limit) {
      this.open.delete('all');
      this.closed.set(`part:${this.part}`, this.close(s));
      this.part++;
      this.rowsInPart = 0;
    }
    return written;
  }

  /** Batches an async transform has not yet given back and written: a checkpoint's state must wait for them. */
  get transformsPending(): number {
    return this.transforming;
  }

  /** Writes bytes already encoded (by visit workers) after those queued before on the same output. */
  enqueue(slice: number, data: Buffer): Promise<void> {
    // One write at a time per output: a sink that is behind finishes a write later, and the next must follow it.
    const s = this.of(slice);
    s.queue = s.queue.then(() => s.sink.write([data]));
    return s.queue;
  }

  /** A chain stopped: once every chain of its slice finished, the slice's own file (`outputDir`) is closed. */
  chainStopped(key: string, slice: number, status: string): void {
    if (!this.choice.perSlice || status !== 'finished') return;
    this.finishedChains.add(key);
    if ((this.chainsOfSlice.get(slice) ?? []).every((k) => this.finishedChains.has(k))) this.closeSlice(slice);
  }

  /**
   * Each output file's length as of the state being saved: to be read in the same turn as that state, awaited after.
   * A closed file's slice is finished in any state read after the close began, so its final length is the one.
   */
  lengths(): Promise<Record<string, number>> {
    const final = [...this.closed.values()].flatMap((c) =>
      c.path === undefined ? [] : [c.length.then((length) => [c.path!, length] as const)],
    );
    const cuts = [...this.open.values()].flatMap((s) =>
      s.file === undefined ? [] : [s.file.sink.lengthAtCut().then((length) => [s.file!.path, length] as const)],
    );
    return Promise.all([Promise.all(final), Promise.all(cuts)]).then(([ends, lengths]) => ({
      ...this.restored.lengths,
      ...Object.fromEntries(ends.filter((e): e is readonly [string, number] => e[1] !== undefined)),
      ...Object.fromEntries(lengths),
    }));
  }

  /** Settles once the writes queued so far were handed to the sinks. */
  async queued(): Promise<void> {
    await Promise.all([...this.open.values()].map((s) => s.queue));
  }

  /** Settles once everything written so far has reached the operating system. */
  async flushed(): Promise<void> {
    await Promise.all([...this.open.values()].map((s) => s.sink.flushed()));
  }

  /** Settles once the writes queued so far have reached the operating system. */
  async queuedAndFlushed(): Promise<void> {
    await Promise.all(
      [...this.open.values()].map(async (s) => {
        await s.queue;
        await s.sink.flushed();
      }),
    );
  }

  /** Ends each output's encoding (a JSON array's `]`), closes them, and waits for those closed before. */
  async finish(): Promise<void> {
    for (const { sink, encoder } of this.open.values()) {
      const tail = encoder.end();
      if (tail !== undefined) await sink.write([tail]);
    }
    await Promise.all(
      [...this.open.values()].map(async (s) => {
        await s.sink.close();
        await s.commit?.();
      }),
    );
    await Promise.all([...this.closed.values()].map((c) => c.length));
  }

  /** Closes the open outputs after a failure, whatever their closing meets. */
  async abandon(): Promise<void> {
    await Promise.allSettled([...this.open.values()].map((s) => s.sink.close()));
  }

  /** Bytes the sinks took, before compression. */
  bytes(): number {
    return [...this.open.values(), ...this.closed.values()].reduce(
      (n, s) => n + ('sink' in s ? s.sink.bytes : s.bytes),
      0,
    );
  }

  private closeSlice(slice: number): void {
    const s = this.open.get(slice);
    if (s === undefined) return;
    this.open.delete(slice);
    this.closed.set(slice, this.close(s));
  }

  /** Ends an output's encoding once its queued writes are done, closes and commits it. */
  private close(s: OpenOutput): ClosedOutput {
    const length = (async () => {
      await s.queue;
      const tail = s.encoder.end();
      if (tail !== undefined) await s.sink.write([tail]);
      await s.sink.close();
      await s.commit?.();
      return s.file === undefined ? undefined : sizeOf(s.file.path);
    })();
    length.catch(() => {});
    return { path: s.file?.path, length, bytes: s.sink.bytes };
  }
}
