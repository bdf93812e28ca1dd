/**
 * Keeps operations on one document id in input order: while one is under way, later ones on the same id
 * wait here, and each is let go when the one before it is done. Two writes to one document in flight at
 * once could be applied in either order, and the input's order is the one the user meant.
 */
export class IdSequencer<T> {
  /** Ids with an operation under way; the array (null while empty, to spare one per id) holds the waiting ones. */
  private readonly waiting = new Map<string, T[] | null>();

  /** Ids with an operation under way. */
  get size(): number {
    return this.waiting.size;
  }

  /** Whether `item` on `id` may go now; if not, it is held until those before it on `id` are done. */
  admit(id: string, item: T): boolean {
    const waiting = this.waiting.get(id);
    if (waiting === undefined) {
      this.waiting.set(id, null);
      return true;
    }
    if (waiting === null) this.waiting.set(id, [item]);
    else waiting.push(item);
    return false;
  }

  /** The operation under way on `id` is done: returns the next one on `id`, which may go now, if any. */
  release(id: string): T | undefined {
    const waiting = this.waiting.get(id);
    if (waiting === null || waiting === undefined || waiting.length === 0) {
      this.waiting.delete(id);
      return undefined;
    }
    const next = waiting.shift()!;
    if (waiting.length === 0) this.waiting.set(id, null);
    return next;
  }
}
