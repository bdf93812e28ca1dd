/** One value held, with its key and where it sits among the slots. */
interface Held<T> {
  key: string;
  value: T;
  slot: number;
}

/**
 * A bounded buffer that lets values go in random order, except that values of one key leave in the order they
 * came: `take()` picks a random value and lets go of the earliest value held with its key (often the value
 * itself). A feed in an export's order (grouped by bucket) sent through it sends consecutive operations to
 * different buckets, while the operations on one document id keep their input order.
 *
 * The caller bounds it: it adds, and takes one whenever `size` is over its bound, then drains it at the end.
 */
export class ShuffleBuffer<T> {
  private readonly slots: Held<T>[] = [];
  /** Per key, the values held, in arrival order. */
  private readonly byKey = new Map<string, Held<T>[]>();

  /** `random` returns a number in [0, 1) (tests give a seeded one). */
  constructor(private readonly random: () => number = Math.random) {}

  get size(): number {
    return this.slots.length;
  }

  add(key: string, value: T): void {
    const held: Held<T> = { key, value, slot: this.slots.length };
    this.slots.push(held);
    const same = this.byKey.get(key);
    if (same === undefined) this.byKey.set(key, [held]);
    else same.push(held);
  }

  /** A value to let go (undefined when empty): the earliest held with the key of a random one. */
  take(): T | undefined {
    const n = this.slots.length;
    if (n === 0) return undefined;
    const picked = this.slots[Math.floor(this.random() * n)];
    const same = this.byKey.get(picked.key)!;
    const first = same.shift()!;
    if (same.length === 0) this.byKey.delete(picked.key);
    const last = this.slots.pop()!;
    if (last !== first) {
      this.slots[first.slot] = last;
      last.slot = first.slot;
    }
    return first.value;
  }

  /** Takes every value held, in `take()` order. */
  *drain(): Generator<T> {
    for (let v = this.take(); v !== undefined; v = this.take()) yield v;
  }

  /** Forgets every value held (a stop: the caller accounts for them). */
  clear(): void {
    this.slots.length = 0;
    this.byKey.clear();
  }
}
