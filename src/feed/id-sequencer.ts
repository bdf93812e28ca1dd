import { fnv1a } from './shard.js';

/**
 * Keeps operations on one document id in input order: while one is under way, later ones on the same id
 * wait here, and each is let go when the one before it is done. Two writes to one document in flight at
 * once could be applied in either order, and the input's order is the one the user meant.
 *
 * The ids under way are an open-addressing table (linear probing, deletion by backward shift) rather than a
 * `Map`: a Map with an insert and a delete per operation rebuilds its table every few hundred operations,
 * and the stale tables that reach old space are what pushed a long feed's peak RSS up (see OpenOperations).
 * This table allocates only when it grows.
 */
export class IdSequencer<T> {
  private keys: (string | undefined)[] = new Array<string | undefined>(1024).fill(undefined);
  /** Per key: the operations waiting behind the one under way, or null when none wait (an array per id spared). */
  private waiting: (T[] | null)[] = new Array<T[] | null>(1024).fill(null);
  private mask = 1023;
  /** 32 minus log2 of the table's size: a slot is the top bits of the mixed hash (see `home`). */
  private shift = 22;
  private count = 0;

  /** Ids with an operation under way. */
  get size(): number {
    return this.count;
  }

  /** Whether `item` on `id` may go now; if not, it is held until those before it on `id` are done. */
  admit(id: string, item: T): boolean {
    let slot = this.home(id);
    for (;;) {
      const key = this.keys[slot];
      if (key === undefined) break;
      if (key === id) {
        const waiting = this.waiting[slot];
        if (waiting === null) this.waiting[slot] = [item];
        else waiting.push(item);
        return false;
      }
      slot = (slot + 1) & this.mask;
    }
    this.keys[slot] = id;
    this.waiting[slot] = null;
    if (++this.count * 2 > this.keys.length) this.grow();
    return true;
  }

  /** The operation under way on `id` is done: returns the next one on `id`, which may go now, if any. */
  release(id: string): T | undefined {
    let slot = this.home(id);
    for (;;) {
      const key = this.keys[slot];
      if (key === undefined) return undefined;
      if (key === id) break;
      slot = (slot + 1) & this.mask;
    }
    const waiting = this.waiting[slot];
    if (waiting !== null && waiting.length > 0) {
      const next = waiting.shift()!;
      if (waiting.length === 0) this.waiting[slot] = null;
      return next;
    }
    this.remove(slot);
    return undefined;
  }

  /** Empties `slot`, moving later entries of its probe run back so that every lookup still finds them. */
  private remove(slot: number): void {
    const mask = this.mask;
    let hole = slot;
    let next = (slot + 1) & mask;
    for (;;) {
      const key = this.keys[next];
      if (key === undefined) break;
      const home = this.home(key);
      // The entry may fill the hole only if its home is not cyclically within (hole, next].
      if (((next - home) & mask) >= ((next - hole) & mask)) {
        this.keys[hole] = key;
        this.waiting[hole] = this.waiting[next];
        hole = next;
      }
      next = (next + 1) & mask;
    }
    this.keys[hole] = undefined;
    this.waiting[hole] = null;
    this.count--;
  }

  private grow(): void {
    const keys = this.keys;
    const waiting = this.waiting;
    this.keys = new Array<string | undefined>(keys.length * 2).fill(undefined);
    this.waiting = new Array<T[] | null>(keys.length * 2).fill(null);
    this.mask = this.keys.length - 1;
    this.shift--;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      if (key === undefined) continue;
      let slot = this.home(key);
      while (this.keys[slot] !== undefined) slot = (slot + 1) & this.mask;
      this.keys[slot] = key;
      this.waiting[slot] = waiting[i];
    }
  }

  private home(id: string): number {
    return sequencerHash(id) >>> this.shift;
  }
}

/**
 * The hash whose top bits are an id's home slot: `--shard`'s FNV-1a through murmur3's finaliser. Neither its low
 * bits, nor the top bits of the golden-ratio product that `--workers` routes by (workers/route.ts): under
 * `--shard i/N` every id of this process has the same FNV-1a residue mod N, and in worker k of 16 the same top
 * four bits of that product, so either would crowd the ids into 1/N or 1/16 of the table, and every release
 * would shift a long run (5-8 % of each worker's CPU at 16 workers, before this).
 */
export function sequencerHash(id: string): number {
  let h = fnv1a(id);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}
