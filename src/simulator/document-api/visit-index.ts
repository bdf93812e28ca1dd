import type { StoredEntry, VisitPosition } from './document-store.js';

/**
 * What a content node iterates for one visit request: the entries of one bucket space and one slice, in visit
 * order. A content node keeps its bucket spaces apart and a visitor walks only the buckets of its slice, so a
 * request costs its share of the corpus; scanning the whole store per request made 256 slices cost 256 corpora.
 *
 * The shares of one slice count are cut in one pass and kept with the visit order they were cut from: the store
 * replaces that array (never changes it) when an id arrives, so a kept share is never stale, and it goes with it.
 */
export interface SpaceAndSlice {
  /** The types in the global bucket space; a request visits either those or the others. */
  globalTypes: ReadonlySet<string>;
  global: boolean;
  /** Undefined: the whole space, as one slice. */
  slices: number | undefined;
  sliceId: number | undefined;
}

interface Shares {
  globalTypes: ReadonlySet<string>;
  global: boolean;
  slices: number;
  parts: StoredEntry[][];
}

/** Slice counts kept per visit order: a visit uses one, tests a few; more would only hold memory. */
const keptCounts = 4;
const sharesByOrder = new WeakMap<readonly StoredEntry[], Shares[]>();

/** The entries of `ordered` in the request's bucket space and slice, in the same order. */
export function sliceOf(ordered: StoredEntry[], want: SpaceAndSlice): StoredEntry[] {
  const slices = want.slices ?? 1;
  const sliceId = want.sliceId ?? 0;
  // Nothing global and the default space unsliced: the visit order is the share, no copy needed.
  if (slices === 1 && want.globalTypes.size === 0) return want.global ? [] : ordered;
  let kept = sharesByOrder.get(ordered);
  if (kept === undefined) sharesByOrder.set(ordered, (kept = []));
  let shares = kept.find((s) => s.slices === slices && s.global === want.global && s.globalTypes === want.globalTypes);
  if (shares === undefined) {
    shares = {
      globalTypes: want.globalTypes,
      global: want.global,
      slices,
      parts: cut(ordered, want.globalTypes, want.global, slices),
    };
    if (kept.unshift(shares) > keptCounts) kept.pop();
  }
  return shares.parts[sliceId];
}

function cut(
  ordered: readonly StoredEntry[],
  globalTypes: ReadonlySet<string>,
  global: boolean,
  slices: number,
): StoredEntry[][] {
  const parts = Array.from({ length: slices }, (): StoredEntry[] => []);
  for (const e of ordered) if (globalTypes.has(e.type) === global) parts[e.bucket % slices].push(e);
  return parts;
}

/** The stretch of `entries` (in visit order) in one bucket: all a visit of one location (n=, g=) iterates. */
export function bucketStretch(entries: StoredEntry[], bucket: number): StoredEntry[] {
  const first = firstIndex(entries, (e) => e.bucket >= bucket);
  const end = firstIndex(entries, (e) => e.bucket > bucket);
  return first === 0 && end === entries.length ? entries : entries.slice(first, end);
}

/** The index of the first entry after `position` (a continuation's) in `entries`, which are in visit order. */
export function indexAfter(entries: readonly StoredEntry[], position: VisitPosition): number {
  return firstIndex(entries, (e) => e.bucket > position.bucket || (e.bucket === position.bucket && e.id > position.id));
}

/** The first index whose entry passes `past` (false up to some index, true from there on). */
function firstIndex(entries: readonly StoredEntry[], past: (e: StoredEntry) => boolean): number {
  let lo = 0;
  let hi = entries.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (past(entries[mid])) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
