import { VespaBulkError } from '../errors.js';
import { checkFingerprint, emptyCheckpoint, hasProgress, readVisitCheckpoint, resumeStates, slicesOfFingerprint, visitCheckpointStore, type VisitCheckpoint } from './checkpoint.js';
import { createEncoder, outputFormats, type BatchEncoder, type OutputFormat } from './formats.js';
import { OptionError, checkDuration, checkInteger, checkOneOf } from '../options-check.js';
import { defaultVisitSlices, type VisitOptions } from './options.js';
import { chainsOf, sliceIdsOf, validateVisitOptions, visitFingerprint, type ChainSpec } from './query.js';
import { statSync } from 'node:fs';
import { normalize } from 'node:path';
import { cutBack } from '../sinks/cut-back.js';
import { fileSink } from '../sinks/file.js';
import type { FileSink, Sink } from '../sinks/sink.js';
import { sliceFileName, sliceFileSink } from '../sinks/slice-directory.js';
import { stdoutSink } from '../sinks/stream.js';
import { startVisit, type LocalVisitRun, type VisitReport, type VisitRun } from './visitor.js';
import { compressedFileSink } from './workers/gzip-members.js';
import { startWorkerVisit, type WorkerVisitRun } from './workers/pool.js';

/**
 * An export: a visit written to stdout, a file or one file per slice, with an optional checkpoint.
 *
 * The checkpoint is saved (at most every `checkpointIntervalMs`, and at the end) only after the documents
 * it covers have reached the output file, so a resumed export loses nothing. It stores each slice's token
 * and the ids written after that token, which the resumed run skips: after a clean stop (end, failure,
 * Ctrl-C) nothing is written twice. The checkpoint also records each output file's length as of its state, and
 * a resumed export first cuts each file back to it, so after a crash (kill -9, an evicted pod) too every
 * document is in the files once, and a `.gz` file ends between gzip members. Standard output cannot be cut
 * back: there, what was written after the last save is written again.
 */
export interface ExportOptions extends VisitOptions {
  format?: OutputFormat;
  /** A file (`.gz` compresses); undefined or '-' writes to `stdout`. */
  output?: string;
  /** One file per slice in this directory, named slice-0000.jsonl etc. Excludes `output`. */
  outputDir?: string;
  /**
   * Compresses each file of `outputDir` with gzip (slice-0000.jsonl.gz, ...); a resumed export adds gzip members
   * to them. Only with `outputDir`: `output` compresses by its `.gz` name. Default false.
   */
  gzip?: boolean;
  /**
   * Writes plain (not `.gz`) output files with O_DIRECT, bypassing the page cache, where the file system allows
   * it (ordinary writes otherwise), which about halves the export's CPU time. Default true, unless the
   * environment has `VESPA_BULK_DIRECT_IO=0`.
   */
  directIo?: boolean;
  /** Checkpoint file; an existing one for the same visit is continued, and its outputs appended to. */
  checkpoint?: string;
  /** ms between saves of `checkpoint` while the export runs (after each change). Default `defaultCheckpointIntervalMs` (1000). */
  checkpointIntervalMs?: number;
  /** Where `output: '-'` writes; default process.stdout. */
  stdout?: NodeJS.WritableStream;
  /**
   * Worker threads that visit the slices (each slice started on the worker with the fewest running) and encode, and for a `.gz` output
   * compress, their documents; this thread only writes the bytes. Default 1: everything in this thread. Not with
   * `format: 'json'` (one array is framed by one writer) or `dispatcher`.
   */
  workers?: number;
  /** Called once the visit runs, e.g. to draw progress from it. */
  onStart?: (run: VisitRun) => void;
}

/** The visit report of an export, with the bytes written. */
export interface ExportSummary extends VisitReport {
  /** Bytes written to the output(s), before compression. */
  outputBytes: number;
  /** The checkpoint continued a previous run. */
  resumed: boolean;
}

/** Visits and writes the documents to stdout, a file or a file per slice; resolves with the summary. */
export async function exportDocuments(options: ExportOptions): Promise<ExportSummary> {
  const format = options.format ?? 'jsonl';
  if (options.output !== undefined && options.output !== '-' && options.outputDir !== undefined) throw new OptionError('output', 'left out', options.output, 'outputDir');
  checkOneOf(options, 'format', outputFormats);
  checkOneOf(options, 'directIo', [true, false]);
  checkOneOf(options, 'gzip', [true, false]);
  if (options.gzip === true && options.outputDir === undefined) throw new OptionError('gzip', 'used with an output directory (a single output file compresses by its .gz name)', true);
  checkDuration(options, 'checkpointIntervalMs');
  checkInteger(options, 'workers', 1, 256);
  const workers = options.workers ?? 1;
  if (workers > 1 && format === 'json') throw new OptionError('format', 'jsonl or feed with workers', format, 'workers');
  // Before any output is opened (and a file truncated).
  validateVisitOptions(options);
  const stored = options.checkpoint === undefined ? undefined : await readVisitCheckpoint(options.checkpoint);
  const visiting = resolvedVisit(options, stored);
  const fingerprint = visitFingerprint(visiting);
  if (stored !== undefined) checkFingerprint(stored, fingerprint, options.checkpoint!);
  const previous = stored;
  const resumed = hasProgress(previous);
  if (resumed && format === 'json') {
    throw new VespaBulkError('VB_USAGE', '--format json cannot be continued from a checkpoint (one array cannot be appended to); use jsonl or feed');
  }
  const priorDocuments = new Map<string, number>(Object.entries(previous?.slices ?? {}).map(([key, s]) => [key, s.documents ?? 0]));

  const extension = `${format === 'json' ? 'json' : 'jsonl'}${options.gzip === true ? '.gz' : ''}`;
  const pathOf = (slice: number): string | undefined =>
    options.outputDir !== undefined ? sliceFileName(options.outputDir, slice, extension) : options.output === undefined || options.output === '-' ? undefined : normalize(options.output);
  const outputs = resumed ? restoreOutputs(previous!, chainsOf(visiting), options.outputDir !== undefined ? sliceIdsOf(visiting) : [0], pathOf, options.outputDir !== undefined) : { lengths: {}, fresh: new Set<string>() };

  const compressed = options.outputDir !== undefined ? options.gzip === true : options.output !== undefined && options.output.endsWith('.gz');
  // With workers, a .gz output (or each .gz slice file) gets gzip members compressed by the workers, written as they come.
  const gzipOnWorkers = workers > 1 && compressed;
  const sinks = new Map<number | 'all', { sink: Sink; file?: { path: string; sink: FileSink }; encoder: BatchEncoder; queue: Promise<void> }>();
  /** Files of slices whose chains all finished, closed (a visit of 256 slices does not hold 256 files and their buffers). */
  const closed = new Map<number, { path: string | undefined; length: Promise<number | undefined>; bytes: number }>();
  const sinkFor = (slice: number): { sink: Sink; encoder: BatchEncoder; queue: Promise<void> } => {
    const key = options.outputDir !== undefined ? slice : 'all';
    let s = sinks.get(key);
    if (s === undefined) {
      const path = pathOf(slice);
      // A closed file opened again (not expected: its chains were finished) is appended to, never truncated.
      const append = closed.has(slice) || (resumed && (path === undefined || !outputs.fresh.has(path)));
      const fileOptions = { append, ...(options.directIo !== undefined && { directIo: options.directIo }) };
      const file =
        options.outputDir !== undefined
          ? gzipOnWorkers
            ? compressedFileSink(sliceFileName(options.outputDir, slice, extension), append)
            : sliceFileSink(options.outputDir, slice, extension, fileOptions)
          : options.output === undefined || options.output === '-'
            ? undefined
            : gzipOnWorkers
              ? compressedFileSink(options.output, append)
              : fileSink(options.output, fileOptions);
      const sink = file ?? stdoutSink(options.stdout);
      s = { sink, ...(file !== undefined && path !== undefined && { file: { path, sink: file } }), encoder: createEncoder(format), queue: Promise.resolve() };
      sinks.set(key, s);
    }
    return s;
  };
  // Outputs exist even when nothing is visited (an empty export is an empty file, or `[]`).
  if (options.outputDir === undefined) sinkFor(0);

  let run: LocalVisitRun | undefined;
  let workerRun: WorkerVisitRun | undefined;
  // Each output file's length as of the state being saved: read in the same turn as that state, awaited after. A
  // closed file's slice is finished in any state read after the close began, so its final length is the one.
  const cutOutputs = (): Promise<Record<string, number>> => {
    const final = [...closed.values()].flatMap((c) => (c.path === undefined ? [] : [c.length.then((length) => [c.path!, length] as const)]));
    const cuts = [...sinks.values()].flatMap((s) => (s.file === undefined ? [] : [s.file.sink.lengthAtCut().then((length) => [s.file!.path, length] as const)]));
    return Promise.all([Promise.all(final), Promise.all(cuts)]).then(([ends, lengths]) => ({
      ...outputs.lengths,
      ...Object.fromEntries(ends.filter((e): e is readonly [string, number] => e[1] !== undefined)),
      ...Object.fromEntries(lengths),
    }));
  };
  const chainsOfSlice = new Map<number, string[]>();
  for (const c of chainsOf(visiting)) chainsOfSlice.set(c.sliceId, [...(chainsOfSlice.get(c.sliceId) ?? []), c.key]);
  const finishedChains = new Set(Object.entries(previous?.slices ?? {}).flatMap(([key, c]) => (c.finished === true ? [key] : [])));
  const closeSlice = (slice: number): void => {
    const s = sinks.get(slice);
    if (s === undefined) return;
    sinks.delete(slice);
    const length = (async () => {
      await s.queue;
      const tail = s.encoder.end();
      if (tail !== undefined) await s.sink.write([tail]);
      await s.sink.close();
      return s.file === undefined ? undefined : sizeOf(s.file.path);
    })();
    length.catch(() => {});
    closed.set(slice, { path: s.file?.path, length, bytes: s.sink.bytes });
  };
  /** A chain stopped: once every chain of its slice finished, the slice's own file (`outputDir`) is closed. */
  const chainStopped = (key: string, slice: number, status: string): void => {
    if (options.outputDir === undefined || status !== 'finished') return;
    finishedChains.add(key);
    if ((chainsOfSlice.get(slice) ?? []).every((k) => finishedChains.has(k))) closeSlice(slice);
  };
  const snapshot = async (): Promise<VisitCheckpoint> => {
    if (workerRun !== undefined) {
      // Each worker answers after the batches its state covers, and sends no more until the cut is taken.
      let cut: Promise<Record<string, number>> | undefined;
      const states = await workerRun.states(async () => {
        await Promise.all([...sinks.values()].map((s) => s.queue));
        cut = cutOutputs();
      });
      const state = emptyCheckpoint(fingerprint);
      state.slices = { ...(previous?.slices ?? {}) };
      for (const [key, s] of Object.entries(states)) state.slices[key] = { ...s, documents: (priorDocuments.get(key) ?? 0) + s.documents };
      addInflight(state, workerRun);
      await Promise.all([...sinks.values()].map(async (s) => {
        await s.queue;
        await s.sink.flushed();
      }));
      state.outputs = await cut!;
      return state;
    }
    // Lines read but not yet handed to the output are handed on within this turn of the event loop.
    for (let turns = 0; turns < 100 && run?.slices.some((s) => s.undelivered); turns++) await new Promise((r) => setImmediate(r));
    // Read the state first, then wait for the outputs: everything the state covers was written before it.
    const state = emptyCheckpoint(fingerprint);
    state.slices = { ...(previous?.slices ?? {}) };
    // A chain not run yet stands where it was resumed from (or, not started at all, has no entry).
    for (const s of (run?.slices ?? []).filter((x) => x.started)) {
      state.slices[s.key] = {
        ...(s.status === 'finished' ? { finished: true } : s.continuation !== undefined ? { continuation: s.continuation } : {}),
        documents: (priorDocuments.get(s.key) ?? 0) + s.documents + s.removes,
        ...(s.status !== 'finished' && { deliveredIds: s.exactlyOnce.pendingIds() }),
      };
    }
    addInflight(state, run);
    const cut = cutOutputs();
    await Promise.all([...sinks.values()].map((s) => s.sink.flushed()));
    state.outputs = await cut;
    return state;
  };
  const checkpoint = options.checkpoint === undefined ? undefined : visitCheckpointStore(options.checkpoint, snapshot, options.checkpointIntervalMs);

  let outputRawBytes = 0;
  const visitOptions = { ...visiting, resumeFrom: { ...resumeStates(previous), ...options.resumeFrom } };
  if (workers > 1) {
    const { onStart: _onStart, stdout: _stdout, ...toWorkers } = visitOptions;
    workerRun = startWorkerVisit(toWorkers, workers, { format: format as 'jsonl' | 'feed', gzip: gzipOnWorkers }, (slice, data, rawBytes) => {
      outputRawBytes += rawBytes;
      checkpoint?.touch();
      // One write at a time per output: a sink that is behind finishes a write later, and the next must follow it.
      const s = sinkFor(slice);
      s.queue = s.queue.then(() => s.sink.write([data]));
      return s.queue;
    }, { onChainStopped: chainStopped });
  }
  const current: VisitRun = workerRun ?? (run = startVisit(
    visitOptions,
    {
      deliver(batch) {
        const { sink, encoder } = sinkFor(batch.slice);
        return sink.write(encoder.encode(batch.entries));
      },
      onSliceState(s) {
        checkpoint?.touch();
        if (s.status === 'finished') chainStopped(s.key, s.sliceId, s.status);
      },
    },
  ));
  options.onStart?.(current);
  let report: VisitReport;
  try {
    report = await current.done;
  } catch (err) {
    await Promise.allSettled([...sinks.values()].map((s) => s.sink.close()));
    if ((err as NodeJS.ErrnoException).code === 'EPIPE') {
      throw new VespaBulkError('VB_ABORTED', 'the output was closed by its reader (e.g. | head); visit stopped', { cause: err });
    }
    throw err;
  }
  for (const { sink, encoder } of sinks.values()) {
    const tail = encoder.end();
    if (tail !== undefined) await sink.write([tail]);
  }
  await Promise.all([...sinks.values()].map((s) => s.sink.close()));
  await Promise.all([...closed.values()].map((c) => c.length));
  if (checkpoint !== undefined) await checkpoint.flush();
  return {
    ...report,
    outputBytes: workerRun !== undefined ? outputRawBytes : [...sinks.values(), ...closed.values()].reduce((n, s) => n + ('sink' in s ? s.sink.bytes : s.bytes), 0),
    resumed,
  };
}

/**
 * The visit as it runs: the slice count made explicit (with it, `inflightSlices` as it was meant without it). Without
 * `slices` a checkpoint's own count is taken, so that one saved under an earlier default (4, all at once) is continued;
 * then too the visit is adaptive, and it starts at the level the checkpoint saved.
 */
function resolvedVisit(options: ExportOptions, stored: VisitCheckpoint | undefined): ExportOptions {
  if (options.slices !== undefined) return options;
  const slices = (stored === undefined ? undefined : slicesOfFingerprint(stored.visit)) ?? defaultVisitSlices;
  const inflight = options.inflightSlices ?? 'adaptive';
  const start = options.adaptiveSlices?.start ?? stored?.inflight;
  return {
    ...options,
    slices,
    inflightSlices: inflight,
    ...(inflight === 'adaptive' && start !== undefined && { adaptiveSlices: { ...options.adaptiveSlices, start } }),
  };
}

/** Records the adaptive level in the checkpoint, for a resumed visit to start from. */
function addInflight(state: VisitCheckpoint, run: VisitRun | undefined): void {
  const inflight = run?.inflight();
  if (inflight?.adaptive === true) state.inflight = inflight.limit;
}

/**
 * Before a resumed export opens its outputs: each file the checkpoint recorded a length for is cut back to it (see
 * `cutBack`); a file it has no length for starts empty, unless its slice wrote documents by the checkpoint's count
 * (then the file cannot be trusted, and the export is refused). A checkpoint from before lengths were recorded
 * leaves the files as they are, and records their present lengths from here on.
 */
function restoreOutputs(
  previous: VisitCheckpoint,
  chains: ChainSpec[],
  sliceIds: number[],
  pathOf: (slice: number) => string | undefined,
  perSlice: boolean,
): { lengths: Record<string, number>; fresh: Set<string> } {
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
    } else if (recorded !== undefined) cutBack(path, recorded);
    else if (wrote(slice)) {
      throw new VespaBulkError('VB_USAGE', `the checkpoint records documents written to ${path} but not the file's length: it was written by another export; use the output of the run that saved the checkpoint, or delete the checkpoint to start over`, {
        place: { file: path },
      });
    } else fresh.add(path);
  }
  return { lengths, fresh };
}

function sizeOf(path: string): number | undefined {
  try {
    return statSync(path).size;
  } catch {
    return undefined;
  }
}
