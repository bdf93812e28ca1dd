import type { OpenPosition } from '../source.js';
import type { RawItem } from '../../core/operation-splitter.js';

/** Many operations in one message: their bytes back to back in one transferable buffer, and per item its length, line and offset. */
export interface ItemBatch {
  /** Batch number per worker, from 1: the worker reports the last one it has taken in. */
  n: number;
  input: number;
  name: string;
  bytes: ArrayBuffer;
  /** Per item: byte length, line, offset (offsets may pass 2^32, hence doubles). Read it through the accessors below. */
  meta: Float64Array;
}

/** Doubles per item in `ItemBatch.meta`, and where each figure stands among them: the layout, written once. */
const perItem = 3;
const lengthAt = 0;
const lineAt = 1;
const offsetAt = 2;

/** How many items `meta` describes. */
export function itemCount(meta: Float64Array): number {
  return meta.length / perItem;
}

/** Item `k`'s byte length. */
export function itemLength(meta: Float64Array, k: number): number {
  return meta[perItem * k + lengthAt];
}

/** Item `k`'s line. */
export function itemLine(meta: Float64Array, k: number): number {
  return meta[perItem * k + lineAt];
}

/** Item `k`'s byte offset in its input. */
export function itemOffset(meta: Float64Array, k: number): number {
  return meta[perItem * k + offsetAt];
}

/** Item `k` of input `input` as a checkpoint lists it while unfinished. */
export function itemPosition(input: number, meta: Float64Array, k: number): OpenPosition {
  return [input, itemOffset(meta, k), itemLine(meta, k)];
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
  const meta = new Float64Array(items.length * perItem);
  let at = 0;
  for (let k = 0; k < items.length; k++) {
    const it = items[k];
    view.set(it.bytes, at);
    at += it.bytes.length;
    meta[perItem * k + lengthAt] = it.bytes.length;
    meta[perItem * k + lineAt] = it.line;
    meta[perItem * k + offsetAt] = it.offset;
  }
  return { n, input, name, bytes, meta };
}

/** The items of a batch, each a view on the batch's buffer (no copy). */
export function unpackBatch(batch: ItemBatch): RawItem[] {
  const meta = batch.meta;
  const items: RawItem[] = new Array<RawItem>(itemCount(meta));
  let at = 0;
  for (let k = 0; k < items.length; k++) {
    const length = itemLength(meta, k);
    items[k] = { bytes: Buffer.from(batch.bytes, at, length), line: itemLine(meta, k), offset: itemOffset(meta, k) };
    at += length;
  }
  return items;
}
