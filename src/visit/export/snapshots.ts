import { linesHandedOn, savedStates, type ChainState } from '../slice-visitor.js';
import type { LocalVisitRun, VisitRun } from '../visitor.js';
import type { WorkerVisitRun } from '../workers/pool.js';
import type { ExportOutputs } from './outputs.js';

/** What a checkpoint covers, read so that the outputs hold exactly the documents the chains' states cover. */
export interface Snapshot {
  /** The chains run in this process: where each stands, and the documents it delivered here. */
  chains: Record<string, ChainState>;
  /** The adaptive search's level (undefined for a fixed number of slices in flight), for a resumed visit to start at. */
  inflight: number | undefined;
  /** Each output file's length as of those states. */
  outputs: Record<string, number>;
}

/** How an export reads its state for a checkpoint: in this thread, or from visit workers. */
export interface SnapshotStrategy {
  take(): Promise<Snapshot>;
}

/** The adaptive level a resumed visit starts at. */
function adaptiveLevel(run: VisitRun | undefined): number | undefined {
  const inflight = run?.inflight();
  return inflight?.adaptive === true ? inflight.limit : undefined;
}

/** The slice visitors of this thread, read between deliveries. */
export class LocalSnapshots implements SnapshotStrategy {
  constructor(
    private readonly run: LocalVisitRun | undefined,
    private readonly outputs: ExportOutputs,
  ) {}

  async take(): Promise<Snapshot> {
    const slices = this.run?.slices ?? [];
    await linesHandedOn(slices);
    // An async transform's batches are delivered but not yet written: the state is read once none is left.
    while (this.outputs.transformsPending > 0) {
      await new Promise((r) => setImmediate(r));
      await linesHandedOn(slices);
    }
    // Read the state first, then wait for the outputs: everything the state covers was written before it.
    // A chain not run yet stands where it was resumed from (or, not started at all, has no entry).
    const chains = savedStates(slices.filter((x) => x.hasStarted()));
    const inflight = adaptiveLevel(this.run);
    const cut = this.outputs.lengths();
    await this.outputs.flushed();
    return { chains, inflight, outputs: await cut };
  }
}

/** The visit workers' states, taken at a barrier: each worker answers after the batches its state covers. */
export class WorkerSnapshots implements SnapshotStrategy {
  constructor(
    private readonly run: WorkerVisitRun,
    private readonly outputs: ExportOutputs,
  ) {}

  async take(): Promise<Snapshot> {
    // Each worker sends no more batches until the cut is taken.
    let cut: Promise<Record<string, number>> | undefined;
    const chains = await this.run.states(async () => {
      await this.outputs.queued();
      cut = this.outputs.lengths();
    });
    const inflight = adaptiveLevel(this.run);
    await this.outputs.queuedAndFlushed();
    return { chains, inflight, outputs: await cut! };
  }
}
