import { FifoQueue } from '../structures/fifo-queue.js';

/*
 * The content nodes' bucket locks: a write to a bucket waits while another write to that bucket is being
 * processed, as a content node's persistence layer serialises the operations on one bucket (it takes the
 * bucket's lock for each). With `latencyMs` the processing takes that long, so writes to one bucket go one
 * after another, `latencyMs` each, while writes to different buckets overlap: a feed in bucket order (an export
 * re-fed as it came) is slower than the same documents in random order, as on a real cluster.
 *
 * The bucket of an id is the top `bucketBits` bits of the 32-bit location the store orders visits by (its
 * `idParts().bucket`: n= its number, g= a hash of the group, else a hash of the id), so documents that a visit
 * delivers together share a lock. 16 bits match the service's distribution bits; fewer put many documents of
 * a small corpus in each bucket.
 */

/**
 * The service's distribution bits: the buckets a content cluster splits its documents into at least.
 * @example
 * ```ts
 * import { defaultBucketBits, startDocumentServer } from 'vespa-bulk/simulator';
 *
 * // Fewer buckets: a small corpus contends for the buckets' locks as a large one does.
 * const server = await startDocumentServer({ port: 0, bucketBits: defaultBucketBits - 8 });
 * await server.close();
 * ```
 */
export const defaultBucketBits = 16;

/** What the locks have seen: in `/_sim/stats`. */
export interface BucketLockCounts {
  /** Buckets whose lock a write holds now. */
  held: number;
  /** Writes waiting for a bucket's lock now. */
  waiting: number;
  /** Writes that had to wait for a lock, since the start. */
  waits: number;
  /** The bits of the location that make a bucket. */
  bucketBits: number;
}

/** A write that waits for its bucket. */
export interface LockWaiter {
  /** Its turn: it takes the lock and returns true, or returns false when it gave up meanwhile (the lock goes to the next). */
  granted(): boolean;
}

export class BucketLocks {
  /** Per bucket whose lock is held: the writes waiting for it, in arrival order. */
  private readonly held = new Map<number, FifoQueue<LockWaiter>>();
  private waitingCount = 0;
  private waitCount = 0;
  private readonly shift: number;

  constructor(readonly bucketBits = defaultBucketBits) {
    if (!Number.isInteger(bucketBits) || bucketBits < 1 || bucketBits > 32)
      throw new Error(`bucketBits must be an integer 1-32, got ${bucketBits}`);
    this.shift = 32 - bucketBits;
  }

  /** The lock's bucket of a 32-bit location. */
  bucketOf(location: number): number {
    return this.shift === 0 ? location >>> 0 : location >>> this.shift;
  }

  /** `waiter` gets `bucket`'s lock: at once (true, nothing called) when free, else `granted()` once its turn comes (false). */
  acquire(bucket: number, waiter: LockWaiter): boolean {
    const queue = this.held.get(bucket);
    if (queue === undefined) {
      this.held.set(bucket, new FifoQueue<LockWaiter>());
      return true;
    }
    queue.push(waiter);
    this.waitingCount++;
    this.waitCount++;
    return false;
  }

  /** The holder of `bucket`'s lock is done: the next write still waiting gets it. */
  release(bucket: number): void {
    const queue = this.held.get(bucket);
    if (queue === undefined) return;
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      this.waitingCount--;
      if (next.granted()) return;
    }
    this.held.delete(bucket);
  }

  counts(): BucketLockCounts {
    return { held: this.held.size, waiting: this.waitingCount, waits: this.waitCount, bucketBits: this.bucketBits };
  }
}
