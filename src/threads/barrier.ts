/**
 * The cut a checkpoint of several workers stands on: every live worker is asked for its state, and what a worker
 * sends after its answer is held back until the coordinator has taken the cut (saved the checkpoint, noted the
 * outputs' lengths) and calls `release()`. The cut then covers exactly what was handled before it, in every
 * worker, though they answer at different moments.
 *
 * One round at a time. The coordinator tells the barrier of each answer (`answer`), of a worker that will not
 * answer since it ended (`leave`: its state is its final one, it holds nothing), and routes each worker's later
 * messages through `admit` (callbacks) or `passage` (a promise, for a coordinator that handles messages in an
 * async chain).
 *
 * ```ts
 * const answers = await barrier.gather(workers, (w, round) => w.post({ type: 'snapshot', id: round }));
 * if (answers !== undefined) save(answers);   // undefined: cancel()ed
 * barrier.release();                          // held messages are handled now, in order
 * ```
 */
export class SnapshotBarrier<W, A> {
  private round = 0;
  private current: Round<W, A> | undefined;

  /** Whether a round is open: asked and not yet released. */
  get open(): boolean {
    return this.current !== undefined;
  }

  /** Whether `worker` is asked in the open round and has not answered (or left) yet. */
  awaits(worker: W): boolean {
    return this.current?.waiting.has(worker) === true;
  }

  /**
   * Opens a round: `ask` each of `workers` (with the round's number, to be sent back with the answer). Resolves
   * with the answers once every worker answered or left (a worker that left has none), or with undefined when
   * the round is cancelled first. The round stays open until `release()`. Throws while another round is open.
   */
  gather(workers: Iterable<W>, ask: (worker: W, round: number) => void): Promise<Map<W, A> | undefined> {
    if (this.current !== undefined) throw new Error('a snapshot round is already open');
    const round = new Round<W, A>(++this.round, new Set(workers));
    this.current = round;
    for (const w of round.waiting) ask(w, round.id);
    round.settleIfAnswered();
    return round.result;
  }

  /** `worker`'s answer to round `round` (leave it out to mean the open one); an answer to an earlier round is ignored. */
  answer(worker: W, answer: A, round?: number): void {
    const r = this.current;
    if (r === undefined || (round !== undefined && round !== r.id) || !r.waiting.delete(worker)) return;
    r.answers.set(worker, answer);
    r.settleIfAnswered();
  }

  /** `worker` ended without answering the open round: the round goes on without it. */
  leave(worker: W): void {
    const r = this.current;
    if (r === undefined || !r.waiting.delete(worker)) return;
    r.settleIfAnswered();
  }

  /** Ends the open round without a cut (a worker crashed): `gather` resolves with undefined; held messages go on. */
  cancel(): void {
    const r = this.current;
    if (r === undefined) return;
    r.settle(undefined);
    this.release();
  }

  /**
   * Runs `deliver` now, or, when `worker` already answered the open round, once it is released: a message sent
   * after the answer belongs after the cut. Held deliveries run in the order they were admitted.
   */
  admit(worker: W, deliver: () => void): void {
    const r = this.current;
    if (r === undefined || r.waiting.has(worker) || !r.answers.has(worker)) deliver();
    else r.held.push(deliver);
  }

  /** `admit` as a promise: resolved at once, or when the round `worker` answered is released. */
  passage(worker: W): Promise<void> {
    return new Promise((resolve) => this.admit(worker, resolve));
  }

  /** Closes the open round after the cut was taken: what was held back is handed on, in order. */
  release(): void {
    const r = this.current;
    if (r === undefined) return;
    this.current = undefined;
    for (const deliver of r.held.splice(0)) deliver();
  }
}

class Round<W, A> {
  readonly answers = new Map<W, A>();
  readonly held: Array<() => void> = [];
  readonly result: Promise<Map<W, A> | undefined>;
  settle!: (answers: Map<W, A> | undefined) => void;

  constructor(
    readonly id: number,
    readonly waiting: Set<W>,
  ) {
    this.result = new Promise((resolve) => (this.settle = resolve));
  }

  settleIfAnswered(): void {
    if (this.waiting.size === 0) this.settle(this.answers);
  }
}
