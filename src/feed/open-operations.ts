/**
 * The operations read and not finished, by sequence number, in input order: the first is where a checkpoint
 * stands.
 *
 * A ring of slots indexed by sequence number, in place of a `Map`. A Map with one insert and one delete per
 * operation rebuilds its table every few hundred operations; a stale table that has reached old space keeps
 * finished operations alive until the next full GC, and with them the read chunks their bytes point into.
 * At 200,000 documents that was 12 full GCs and tens of MB of peak RSS (benchmarks/feed/run.ts `memory`). The
 * ring allocates only when it grows, and a finished slot is cleared at once.
 */
export class OpenOperations<T extends { seq: number }> {
  private slots: (T | undefined)[] = new Array<T | undefined>(1024).fill(undefined);
  private mask = 1023;
  /** The lowest sequence number that may still be open; every one below it is finished. */
  private head = 0;
  /** One past the highest sequence number added. */
  private tail = 0;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Adds `item`; sequence numbers must be added in increasing order. */
  add(item: T): void {
    if (this.count === 0) this.head = item.seq;
    while (item.seq - this.head >= this.slots.length) this.grow();
    this.slots[item.seq & this.mask] = item;
    this.tail = item.seq + 1;
    this.count++;
  }

  /** Removes `item` (a no-op when it is not open). */
  delete(item: T): void {
    const slot = item.seq & this.mask;
    if (item.seq < this.head || item.seq >= this.tail || this.slots[slot] !== item) return;
    this.slots[slot] = undefined;
    this.count--;
    if (this.count === 0) this.head = this.tail;
    else while (this.slots[this.head & this.mask] === undefined) this.head++;
  }

  /** The open items, in sequence order. */
  *values(): IterableIterator<T> {
    for (let seq = this.head; seq < this.tail; seq++) {
      const item = this.slots[seq & this.mask];
      if (item !== undefined) yield item;
    }
  }

  private grow(): void {
    const old = this.slots;
    const slots = new Array<T | undefined>(old.length * 2).fill(undefined);
    const mask = slots.length - 1;
    for (let seq = this.head; seq < this.tail; seq++) slots[seq & mask] = old[seq & this.mask];
    this.slots = slots;
    this.mask = mask;
  }
}
