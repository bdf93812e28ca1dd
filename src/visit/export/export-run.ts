import { existsSync } from 'node:fs';
import { VespaBulkError } from '../../core/errors.js';
import { isTabular, type OutputFormat } from '../../sinks/output-format.js';
import { chainsOf, sliceIdsOf, visitFingerprint, type ChainSpec } from '../query.js';
import { startVisit, type VisitReport, type VisitRun } from '../visitor.js';
import { startWorkerVisit } from '../workers/pool.js';
import { Checkpointing } from './checkpointing.js';
import { checkExportOptions, resolvedVisit, type ExportOptions, type ExportSummary } from './export-options.js';
import { ExportOutputs } from './outputs.js';
import { loadTransform } from '../../transform/transform.js';
import { checkFinishedOutputs, nothingRestored, restoreOutputs, type RestoredOutputs } from './restore-outputs.js';
import { prepareExportPaths } from './output-paths.js';
import type { VisitCheckpoint } from '../visit-checkpoint.js';
import type { VisitOptions } from '../options.js';
import { defaultSinceMarginMs, sinceFromTimestamp, sinceStart } from './since.js';
import { chooseSinks, type SinkChoice } from '../../sinks/sink-choice.js';
import { checkTabularExport, forgetUnfinishedSlices, tabularLayout } from './tabular-export.js';
import { LocalSnapshots, WorkerSnapshots, type SnapshotStrategy } from './snapshots.js';

/**
 * One export (see `ExportOptions`): prepared (options checked, checkpoint read, outputs cut back to it) before any
 * output is opened, then run in this thread or on visit workers.
 */
export class Export {
  private snapshots: SnapshotStrategy | undefined;
  /** Bytes written, before compression: what the sinks took, or with workers what they encoded (the sinks see gzip members). */
  private outputBytes = (): number => this.outputs.bytes();

  private constructor(
    private readonly options: ExportOptions,
    /** The options with the slice count (and adaptive start) made explicit: what runs. */
    private readonly visiting: ExportOptions,
    private readonly format: OutputFormat,
    private readonly workers: number,
    private readonly checkpoint: Checkpointing,
    private readonly choice: SinkChoice,
    private readonly outputs: ExportOutputs,
    /** The checkpoint is of an export that finished: nothing is visited, written or saved. */
    private readonly finishedBefore: boolean,
  ) {}

  /**
   * Checks the options, makes ready the paths it will write and reads the checkpoint; a resumed export's files are
   * cut back to what it saved. A finished one's are only checked: it writes nothing.
   */
  static async prepare(given: ExportOptions): Promise<Export> {
    const { format, workers } = checkExportOptions(given);
    prepareExportPaths(given);
    const options = await withSince(given);
    const checkpoint = await Checkpointing.read(
      options.checkpoint,
      options.checkpointIntervalMs,
      options.restart === true,
    );
    const visiting = resolvedVisit(options, checkpoint.saved());
    checkpoint.belongsTo(visitFingerprint(visiting));
    const resumed = checkpoint.resumed();
    // Its last save (`completed`) came after its last byte; a checkpoint with every chain finished but not that
    // save (killed before it) is continued as any other, its files cut back and their ends written.
    const finishedBefore =
      resumed &&
      checkpoint.previous!.completed !== undefined &&
      options.resumeFrom === undefined &&
      checkpoint.finishedAll(chainsOf(visiting).map((c) => c.key));
    const choice = chooseSinks(options, format, workers);
    const paths = (choice.perSlice ? sliceIdsOf(visiting) : [0]).map((slice) => choice.pathOf(slice));
    // A Parquet file is whole or absent: one that is gone is exported again (`forgetUnfinishedSlices`), not refused.
    if (finishedBefore && (format !== 'parquet' || paths.every((p) => p === undefined || existsSync(p)))) {
      checkFinishedOutputs(checkpoint.previous!, paths, options.checkpoint!);
      const outputs = new ExportOutputs(choice, format, nothingRestored(), true, [], new Set());
      return new Export(options, visiting, format, workers, checkpoint, choice, outputs, true);
    }
    if (resumed && format === 'json') {
      throw new VespaBulkError(
        'VB_USAGE',
        '--format json cannot be continued from a checkpoint (one array cannot be appended to); use jsonl or feed',
      );
    }
    checkTabularExport(options, format, resumed);
    const layout = isTabular(format) ? await tabularLayout(options) : {};
    const chains = chainsOf(visiting);
    const restored = resumed
      ? restoredOutputs(checkpoint.previous!, format, chains, choice, visiting, options.checkpoint!)
      : nothingRestored();
    const transform = options.transform === undefined ? undefined : await loadTransform(options.transform);
    const outputs = new ExportOutputs(
      choice,
      format,
      restored,
      resumed,
      chains,
      checkpoint.finishedChains(),
      layout,
      transform,
    );
    return new Export(options, visiting, format, workers, checkpoint, choice, outputs, false);
  }

  /** Visits and writes; resolves with the summary once the outputs are closed and the last checkpoint saved. */
  async run(): Promise<ExportSummary> {
    // Before the first request (and the first save): what the visit returns is what the cluster held from about this moment on.
    const startedAt = this.checkpoint.begin(Date.now());
    // A finished export's checkpoint stays as it is: its `completed` is what an increment of it starts from.
    if (!this.finishedBefore)
      this.checkpoint.saveFrom(() => (this.snapshots ?? new LocalSnapshots(undefined, this.outputs)).take());
    const resumed = this.checkpoint.resumed();
    if (resumed)
      this.options.onResume?.({
        documents: this.checkpoint.documentsBefore(),
        finishedChains: this.checkpoint.finishedChains().size,
        chains: chainsOf(this.visiting).length,
        finished: this.finishedBefore,
      });
    // Every chain finished: the visit sends nothing and delivers nothing (so opens no output), and needs no workers.
    const run = this.workers > 1 && !this.finishedBefore ? this.startOnWorkers() : this.startHere();
    this.options.onStart?.(run);
    const report = await this.reportOf(run);
    // Outputs are opened on the first documents, so a visit that fails before any (nothing answers) leaves no
    // file behind and an existing one untouched; one that ends well without any still has its (empty) output.
    if (report.ok && !this.choice.perSlice && !this.finishedBefore) this.outputs.of(0);
    await this.outputs.finish();
    if (report.ok && !this.finishedBefore) this.checkpoint.complete(Date.now());
    await this.checkpoint.flush();
    const from = this.options.fromTimestamp;
    return {
      ...report,
      outputBytes: this.outputBytes(),
      resumed,
      ...(resumed && { documentsBefore: this.checkpoint.documentsBefore() }),
      ...(this.finishedBefore && { finishedBefore: true }),
      ...(startedAt !== undefined && { startedAt }),
      ...(from !== undefined && { fromTimestamp: String(from) }),
    };
  }

  /** The visit's options: resumed where the checkpoint saved, unless the caller's `resumeFrom` says otherwise. */
  private visitOptions(): ExportOptions {
    return { ...this.visiting, resumeFrom: { ...this.checkpoint.resumeFrom(), ...this.options.resumeFrom } };
  }

  /** The visit in this thread: its batches are encoded and written here. */
  private startHere(): VisitRun {
    const run = startVisit(this.visitOptions(), {
      deliver: (batch) => this.outputs.deliver(batch),
      onSliceState: (s) => {
        this.checkpoint.touch();
        if (s.isFinished()) this.outputs.chainStopped(s.key, s.sliceId, 'finished');
      },
    });
    this.snapshots = new LocalSnapshots(run, this.outputs);
    return run;
  }

  /** The visit on worker threads, which encode (and compress) the batches: this thread writes the bytes. */
  private startOnWorkers(): VisitRun {
    const { onStart: _onStart, onResume: _onResume, stdout: _stdout, ...toWorkers } = this.visitOptions();
    let encodedBytes = 0;
    this.outputBytes = () => encodedBytes;
    const run = startWorkerVisit(
      toWorkers,
      this.workers,
      { format: this.format as 'jsonl' | 'feed', gzip: this.choice.workersCompress },
      (slice, data, rawBytes) => {
        encodedBytes += rawBytes;
        this.checkpoint.touch();
        return this.outputs.enqueue(slice, data);
      },
      { onChainStopped: (key, slice, status) => this.outputs.chainStopped(key, slice, status) },
    );
    this.snapshots = new WorkerSnapshots(run, this.outputs);
    return run;
  }

  /** The visit's report; on a failure the outputs are closed first, and a reader gone (EPIPE) is named. */
  private async reportOf(run: VisitRun): Promise<VisitReport> {
    try {
      return await run.done;
    } catch (err) {
      await this.outputs.abandon();
      if ((err as NodeJS.ErrnoException).code === 'EPIPE') {
        throw new VespaBulkError('VB_ABORTED', 'the output was closed by its reader (e.g. | head); visit stopped', {
          cause: err,
        });
      }
      throw err;
    }
  }
}

/** What a resumed export keeps of its outputs: Parquet's slices that finished, any other's files cut back to what the checkpoint saved. */
function restoredOutputs(
  previous: VisitCheckpoint,
  format: OutputFormat,
  chains: ChainSpec[],
  choice: SinkChoice,
  visiting: Pick<VisitOptions, 'slices' | 'sliceIds'>,
  checkpointFile: string,
): RestoredOutputs {
  if (format === 'parquet') return forgetUnfinishedSlices(previous, chains, (slice) => choice.pathOf(slice));
  return restoreOutputs(
    previous,
    chains,
    choice.perSlice ? sliceIdsOf(visiting) : [0],
    (slice) => choice.pathOf(slice),
    choice.perSlice,
    checkpointFile,
  );
}

/** An increment's options: `since` read (a time, or an earlier export's record) into `fromTimestamp` with the removes. */
async function withSince(options: ExportOptions): Promise<ExportOptions> {
  if (options.since === undefined) return options;
  const { since, sinceMarginMs, ...rest } = options;
  const fromTimestamp = sinceFromTimestamp(await sinceStart(since), sinceMarginMs ?? defaultSinceMarginMs);
  return { ...rest, fromTimestamp, includeRemoves: true };
}
