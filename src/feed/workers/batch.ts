import type { RawItem } from '../splitter.js';

/** Many operations in one message: their bytes back to back in one transferable buffer, and per item its length, line and offset. */
export interface ItemBatch {
  /** Batch number per worker, from 1: the worker reports the last one it has taken in. */
  n: number;
  input: number;
  name: string;
  bytes: ArrayBuffer;
  /** Per item: byte length, line, offset (offsets may pass 2^32, hence doubles). */
  meta: Float64Array;
}

/**
 * Packs items into one batch: one copy of their bytes into a buffer of its own, which is then transferred
 * (moved, not copied) to the worker. Items of one read chunk go to several workers, so the chunk itself
 * cannot be transferred.
 */
export function packBatch(n: number, input: number, name: string, items: RawItem[]): ItemBatch {
  let total = 0;
  for (const it of items) total += it.bytes.length;
  const bytes = new ArrayBuffer(total);
  const view = new Uint8Array(bytes);
  const meta = new Float64Array(items.length * 3);
  let at = 0;
  for (let k = 0; k < items.length; k++) {
    const it = items[k];
    view.set(it.bytes, at);
    at += it.bytes.length;
    meta[3 * k] = it.bytes.length;
    meta[3 * k + 1] = it.line;
    meta[3 * k + 2] = it.offset;
  }
  return { n, input, name, bytes, meta };
}

/** The items of a batch, each a view on the batch's buffer (no copy). */
export function unpackBatch(batch: ItemBatch): RawItem[] {
  const items: RawItem[] = new Array<RawItem>(batch.meta.length / 3);
  let at = 0;
  for (let k = 0; k < items.length; k++) {
    const length = batch.meta[3 * k];
    items[k] = { bytes: Buffer.from(batch.bytes, at, length), line: batch.meta[3 * k + 1], offset: batch.meta[3 * k + 2] };
    at += length;
  }
  return items;
}
