/**
 * A small seeded generator (mulberry32): the same seed gives the same documents, so two bench runs send
 * alike. Not for anything secret. Pure: no I/O.
 */
export class Random {
  private state: number;

  constructor(seed: number = Date.now()) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** `length` random lowercase letters. */
  letters(length: number): string {
    let s = '';
    for (let i = 0; i < length; i++) s += String.fromCharCode(97 + Math.floor(this.next() * 26));
    return s;
  }

  /** Words of 2 to 9 letters, separated by spaces. */
  words(count: number): string {
    const words: string[] = [];
    for (let i = 0; i < count; i++) words.push(this.letters(this.int(2, 9)));
    return words.join(' ');
  }

  /** One of `items`, each as likely. */
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }
}
