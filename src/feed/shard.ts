import { VespaBulkError } from '../core/errors.js';

/**
 * `--shard i/N`: which share of the operations this process feeds. The shard of an operation is a stable
 * hash (FNV-1a, 32 bit, over the UTF-8 id) modulo N, so N processes reading the same input split it with no
 * overlap and no coordination, and all operations on one id land in the same process (keeping their order).
 */
export interface Shard {
  index: number;
  count: number;
}

/**
 * Parses `i/N` into a Shard; throws VB_USAGE unless 0 <= i < N.
 * @example
 * ```ts
 * import { feed, parseShard } from 'vespa-bulk';
 *
 * // Machine 2 of 4 feeds every fourth operation of the same input.
 * await feed(['corpus.jsonl'], { endpoint: 'http://127.0.0.1:8080', shard: parseShard('1/4') });
 * ```
 */
export function parseShard(text: string): Shard {
  const m = /^(\d+)\/(\d+)$/.exec(text.trim());
  if (!m) throw new VespaBulkError('VB_USAGE', `--shard '${text}': expected i/N, e.g. 0/4`);
  const index = Number(m[1]);
  const count = Number(m[2]);
  if (count < 1 || index >= count) throw new VespaBulkError('VB_USAGE', `--shard '${text}': need 0 <= i < N`);
  return { index, count };
}

const encoder = new TextEncoder();

export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  // ASCII ids (the usual case) hash without encoding.
  let ascii = true;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c > 0x7f) {
      ascii = false;
      break;
    }
    h = Math.imul(h ^ c, 0x01000193);
  }
  if (ascii) return h >>> 0;
  h = 0x811c9dc5;
  for (const b of encoder.encode(text)) h = Math.imul(h ^ b, 0x01000193);
  return h >>> 0;
}

export function shardOf(id: string, count: number): number {
  return fnv1a(id) % count;
}

export function inShard(id: string, shard: Shard | undefined): boolean {
  return shard === undefined || shard.count === 1 || shardOf(id, shard.count) === shard.index;
}
