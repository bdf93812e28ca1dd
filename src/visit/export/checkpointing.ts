import type { CheckpointStore } from '../../fs/checkpoint-file.js';
import {
  checkFingerprint,
  emptyCheckpoint,
  hasProgress,
  readVisitCheckpoint,
  resumeStates,
  slicesOfFingerprint,
  visitCheckpointStore,
  type VisitCheckpoint,
} from '../visit-checkpoint.js';
import type { SliceResumeState } from '../options.js';
import type { Snapshot } from './snapshots.js';
import { OutputTails } from './output-tail.js';

/**
 * The export's checkpointing: all of its use of the checkpoint file, whose payload and rules are the visit
 * checkpoint's (visit-checkpoint.ts), in one place: the state a previous run saved, and saving this run's states (at
 * most every `checkpointIntervalMs`, and at the end). Without a file nothing is read or saved.
 */
export class Checkpointing {
  private writer: CheckpointStore<VisitCheckpoint> | undefined;
  private fingerprint = '';
  /** When the export's visit began (see `begin`). */
  private started: string | undefined;
  private completed: string | undefined;
  private readonly tails: OutputTails;

  private constructor(
    private readonly file: string | undefined,
    /** The state a previous run saved; undefined without one. */
    readonly previous: VisitCheckpoint | undefined,
    private readonly intervalMs: number | undefined,
  ) {
    this.tails = new OutputTails(previous);
  }

  /** Reads the checkpoint file, if one is given and exists; with `restart` it is not read, only replaced at the first save. */
  static async read(file: string | undefined, intervalMs: number | undefined, restart = false): Promise<Checkpointing> {
    const previous = file === undefined || restart ? undefined : await readVisitCheckpoint(file);
    return new Checkpointing(file, previous, intervalMs);
  }

  /** The slice count and the adaptive level the previous run saved, where it did. */
  saved(): { slices: number | undefined; inflight: number | undefined } {
    return {
      slices: this.previous === undefined ? undefined : slicesOfFingerprint(this.previous.visit),
      inflight: this.previous?.inflight,
    };
  }

  /** Binds the checkpoint to the visit: a saved one of another visit is refused. */
  belongsTo(fingerprint: string): void {
    this.fingerprint = fingerprint;
    if (this.previous !== undefined) checkFingerprint(this.previous, fingerprint, this.file!);
  }

  /** Whether the previous run made progress: its outputs are continued, not replaced. */
  resumed(): boolean {
    return hasProgress(this.previous);
  }

  /** Where each chain continues, by its key. */
  resumeFrom(): Record<string, SliceResumeState> {
    return resumeStates(this.previous);
  }

  /** The documents (and removes) the previous runs wrote, over all chains. */
  documentsBefore(): number {
    return Object.values(this.previous?.slices ?? {}).reduce((n, c) => n + (c.documents ?? 0), 0);
  }

  /** The chains the previous run finished. */
  finishedChains(): Set<string> {
    return new Set(
      Object.entries(this.previous?.slices ?? {}).flatMap(([key, c]) => (c.finished === true ? [key] : [])),
    );
  }

  /** Whether the previous run finished every one of these chains: then nothing is left to visit. */
  finishedAll(chains: readonly string[]): boolean {
    const finished = this.finishedChains();
    return this.previous !== undefined && chains.length > 0 && chains.every((key) => finished.has(key));
  }

  /**
   * The visit begins now: the export's start, unless a previous run of it began earlier (then its start stands, as
   * documents changed between the two runs in slices it had visited are in neither). A resumed export whose
   * checkpoint has no start (an earlier version's) has none: an increment of it would start too late.
   */
  begin(nowMs: number): string | undefined {
    this.started = this.previous?.started ?? (this.resumed() ? undefined : new Date(nowMs).toISOString());
    return this.started;
  }

  /** Every chain finished: saved as `completed`, which an increment's `since` asks for. */
  complete(nowMs: number): void {
    this.completed = new Date(nowMs).toISOString();
  }

  /** Starts saving the states `take` reads, once `touch`ed. */
  saveFrom(take: () => Promise<Snapshot>): void {
    if (this.file === undefined) return;
    this.writer = visitCheckpointStore(this.file, async () => this.stateOf(await take()), this.intervalMs);
  }

  /** The state changed: saved soon. */
  touch(): void {
    this.writer?.touch();
  }

  /** Saves now, and reports a failure of any save so far. */
  async flush(): Promise<void> {
    if (this.writer !== undefined) await this.writer.flush();
  }

  /** The checkpoint of a snapshot: the previous run's chains, those run here updated, documents counted over all runs. */
  private stateOf(snapshot: Snapshot): VisitCheckpoint {
    const state = emptyCheckpoint(this.fingerprint);
    state.slices = { ...(this.previous?.slices ?? {}) };
    for (const [key, s] of Object.entries(snapshot.chains))
      state.slices[key] = { ...s, documents: (this.previous?.slices[key]?.documents ?? 0) + s.documents };
    if (snapshot.inflight !== undefined) state.inflight = snapshot.inflight;
    state.outputs = snapshot.outputs;
    // Read after the lengths were taken, whose bytes are in the files by then (a save follows what it covers).
    state.outputTails = this.tails.of(snapshot.outputs);
    if (this.started !== undefined) state.started = this.started;
    if (this.completed !== undefined) state.completed = this.completed;
    return state;
  }
}
