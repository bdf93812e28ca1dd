import { setTimeout as sleep } from 'node:timers/promises';
import type { Faults } from '../faults.js';

/**
 * The content nodes' visiting time: `visitParallelism` lanes, each iterating one request's documents at
 * `visitCostUs` per document. A request charges its documents in batches and waits until the earliest free
 * lane would have finished them, so N slices at once take 1/N of the time of one, up to the lanes there are;
 * the simulator's own CPU is not what is measured.
 */
export class VisitCost {
  /** When each lane is free again, in performance.now() milliseconds. */
  private lanes: number[] = [];
  /** Entries the visits iterated, cost or not: what a test reads to see what a request walked through. */
  private iteratedEntries = 0;

  constructor(private readonly faults: Faults) {}

  /** Whether a cost is charged at all; when not, callers skip the counting. */
  get enabled(): boolean {
    return this.faults.current.visitCostUs > 0;
  }

  get iterated(): number {
    return this.iteratedEntries;
  }

  /** Counts `documents` iterated and waits for them on a lane; resolves at once when the cost is off. */
  async charge(documents: number): Promise<void> {
    this.iteratedEntries += documents;
    const { visitCostUs, visitParallelism } = this.faults.current;
    if (visitCostUs <= 0 || documents <= 0) return;
    if (this.lanes.length !== visitParallelism)
      this.lanes = Array.from({ length: visitParallelism }, (_, i) => this.lanes[i] ?? 0);
    let lane = 0;
    for (let i = 1; i < this.lanes.length; i++) if (this.lanes[i] < this.lanes[lane]) lane = i;
    const now = performance.now();
    const end = Math.max(now, this.lanes[lane]) + (documents * visitCostUs) / 1000;
    this.lanes[lane] = end;
    const wait = end - performance.now();
    if (wait >= 1) await sleep(wait);
  }
}
