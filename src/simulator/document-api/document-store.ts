import { cloneExact, parseExact } from './exact-json.js';
import { badRequest } from './responses.js';

/**
 * The simulator's documents: one in-memory store per content cluster. A remove leaves a tombstone, as the
 * service does, so visits with `includeRemoves` can report it. Documents are visited in bucket order: the
 * bucket is a 32-bit hash of the id's location (n=, g=, or the whole id), so documents with the same number
 * or group sit together, and a slice is `bucket % slices`.
 */
export interface StoredEntry {
  readonly id: string;
  /** JSON.stringify(id), computed once: visits write it for every document. */
  readonly idJson: string;
  readonly namespace: string;
  readonly type: string;
  readonly bucket: number;
  /** A remove leaves the entry as a tombstone. */
  removed: boolean;
  /**
   * The fields, parsed. A live entry holds `fields`, `fieldsJson` or both: a put keeps only the JSON text (one
   * string per document is far cheaper for the garbage collector than an object graph), and the parsed form
   * is made on demand (selections, updates) and kept.
   */
  fields: Record<string, unknown> | undefined;
  /** The fields serialized, as visits and gets write them. */
  fieldsJson: string | undefined;
  timestampMicros: number;
}

/** A live document as tests see it. */
export interface StoredDocument {
  id: string;
  fields: Record<string, unknown>;
  timestampMicros: number;
}

export interface SeedDocument {
  id: string;
  fields: Record<string, unknown>;
}

/**
 * Microseconds since the epoch, strictly increasing per clock (each write to a store gets its own timestamp), read
 * from `nowMs` (default `Date.now`): a test gives its own to stamp writes at chosen times, e.g. hours apart, rather
 * than sleeping between them.
 */
export class MicrosClock {
  private last = 0;

  constructor(private readonly nowMs: () => number = Date.now) {}

  now(): number {
    let t = Math.floor(this.nowMs() * 1000);
    if (t <= this.last) t = this.last + 1;
    this.last = t;
    return t;
  }
}

/** FNV-1a, 32 bits: cheap, stable, and spreads ids evenly over buckets. */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

interface IdParts {
  namespace: string;
  type: string;
  bucket: number;
}

/** Splits `id:<ns>:<type>:<kv>:<local>` without validating (ids reaching the store are already checked). */
export function idParts(id: string): IdParts {
  const c1 = id.indexOf(':', 3);
  const c2 = id.indexOf(':', c1 + 1);
  const c3 = id.indexOf(':', c2 + 1);
  if (!id.startsWith('id:') || c1 < 0 || c2 < 0 || c3 < 0) throw new Error(`not a document id: '${id}'`);
  return {
    namespace: id.slice(3, c1),
    type: id.slice(c1 + 1, c2),
    bucket: locationOf(id.slice(c2 + 1, c3)) ?? hash32(id),
  };
}

/** The 32-bit location an id's key/value part names (`n=` its number, `g=` a hash of the group); undefined for none. */
export function locationOf(kv: string): number | undefined {
  if (kv.startsWith('n=')) return Number(BigInt.asUintN(32, BigInt(kv.slice(2))));
  if (kv.startsWith('g=')) return hash32(kv.slice(2));
  return undefined;
}

export function compareEntries(a: StoredEntry, b: StoredEntry): number {
  if (a.bucket !== b.bucket) return a.bucket < b.bucket ? -1 : 1;
  if (a.id === b.id) return 0;
  return a.id < b.id ? -1 : 1;
}

/** Position in the visit order, as carried by a continuation token. */
export interface VisitPosition {
  bucket: number;
  id: string;
}

const tokenPrefix = 'sim1:';

export function encodeContinuation(position: VisitPosition): string {
  return Buffer.from(`${tokenPrefix}${position.bucket.toString(16)}:${position.id}`, 'utf8').toString('base64url');
}

export function decodeContinuation(token: string): VisitPosition {
  const text = Buffer.from(token, 'base64url').toString('utf8');
  const sep = text.indexOf(':', tokenPrefix.length);
  const bucket = sep < 0 ? NaN : parseInt(text.slice(tokenPrefix.length, sep), 16);
  // A token the service cannot read runs out of bytes while its fields are read: what it answers for most garbage.
  if (!text.startsWith(tokenPrefix) || !Number.isFinite(bucket))
    throw badRequest(`Failed parsing '${token}': BufferUnderflowException`);
  return { bucket, id: text.slice(sep + 1) };
}

export class ClusterStore {
  private readonly entries = new Map<string, StoredEntry>();
  private live = 0;
  private ordered: StoredEntry[] | null = null;
  /** Entries added since `ordered` was built; merged in on the next visit rather than re-sorting everything. */
  private added: StoredEntry[] = [];
  /** The document types the deployed package puts in this cluster; null: any (nothing deployed). */
  documentTypes: readonly string[] | null = null;

  /** The store's clock, shared by its clusters so a copy between them keeps timestamps increasing. */
  constructor(
    readonly name: string,
    readonly clock: MicrosClock = new MicrosClock(),
  ) {}

  get size(): number {
    return this.live;
  }

  entry(id: string): StoredEntry | undefined {
    return this.entries.get(id);
  }

  /** The live document, or undefined when absent or removed. */
  document(id: string): StoredEntry | undefined {
    const e = this.entries.get(id);
    return e !== undefined && !e.removed ? e : undefined;
  }

  /** Writes a document; given its JSON text, the parsed `fields` are not kept (see StoredEntry.fields). */
  put(
    id: string,
    fields: Record<string, unknown> | undefined,
    timestampMicros = this.clock.now(),
    fieldsJson?: string,
  ): StoredEntry {
    if (fieldsJson !== undefined) fields = undefined;
    else if (fields === undefined) fields = {};
    return this.write(id, false, fields, fieldsJson, timestampMicros);
  }

  /** Marks the document removed (a tombstone is kept even for an id never seen, as the service does); whether it was live. */
  remove(id: string, timestampMicros = this.clock.now()): boolean {
    const live = this.live;
    this.write(id, true, undefined, undefined, timestampMicros);
    return this.live < live;
  }

  /** Sets the entry of `id` (a new one for an id never seen), keeping the count of live documents. */
  private write(
    id: string,
    removed: boolean,
    fields: Record<string, unknown> | undefined,
    fieldsJson: string | undefined,
    timestampMicros: number,
  ): StoredEntry {
    const existing = this.entries.get(id);
    if (existing === undefined) {
      const entry = newEntry(id, removed, fields, fieldsJson, timestampMicros);
      this.entries.set(id, entry);
      if (!removed) this.live++;
      this.noteAdded(entry);
      return entry;
    }
    if (existing.removed !== removed) this.live += removed ? -1 : 1;
    existing.removed = removed;
    existing.fields = fields;
    existing.fieldsJson = fieldsJson;
    existing.timestampMicros = timestampMicros;
    return existing;
  }

  /**
   * Every entry (tombstones included) in visit order. The array is replaced, never mutated, when a new id
   * arrives, so a visit running over an earlier array is unaffected.
   */
  orderedEntries(): StoredEntry[] {
    if (this.ordered === null) {
      this.ordered = [...this.entries.values()].sort(compareEntries);
      this.added = [];
    } else if (this.added.length > 0) {
      this.ordered = mergeSorted(this.ordered, this.added.sort(compareEntries));
      this.added = [];
    }
    return this.ordered;
  }

  private noteAdded(entry: StoredEntry): void {
    if (this.ordered === null) return;
    // Past a quarter of the corpus a full sort is cheaper than merging.
    if (this.added.length > (this.ordered.length >> 2) + 1024) {
      this.ordered = null;
      this.added = [];
    } else this.added.push(entry);
  }

  clear(): void {
    this.entries.clear();
    this.live = 0;
    this.ordered = null;
    this.added = [];
  }
}

/** Merges two sorted arrays into a new one (the old stays intact for visits still running over it). */
function mergeSorted(a: StoredEntry[], b: StoredEntry[]): StoredEntry[] {
  const out = new Array<StoredEntry>(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) out[k++] = compareEntries(a[i], b[j]) <= 0 ? a[i++] : b[j++];
  while (i < a.length) out[k++] = a[i++]!;
  while (j < b.length) out[k++] = b[j++]!;
  return out;
}

export function fieldsJsonOf(entry: StoredEntry): string {
  if (entry.fieldsJson === undefined) entry.fieldsJson = JSON.stringify(entry.fields ?? {});
  return entry.fieldsJson;
}

/** The fields as values whose numbers keep their text (exact-json.ts): a fresh copy the caller may change. */
export function exactFieldsOf(entry: StoredEntry): Record<string, unknown> {
  if (entry.fieldsJson !== undefined) return parseExact(entry.fieldsJson) as Record<string, unknown>;
  return cloneExact(entry.fields ?? {});
}

/** The parsed fields of a live entry (made from the JSON text on first need, then kept). */
export function fieldsOf(entry: StoredEntry): Record<string, unknown> {
  if (entry.fields === undefined)
    entry.fields = entry.fieldsJson === undefined ? {} : (JSON.parse(entry.fieldsJson) as Record<string, unknown>);
  return entry.fields;
}

function toStoredDocument(e: StoredEntry): StoredDocument {
  // A copy, so tests cannot change the store behind its back.
  return {
    id: e.id,
    fields: JSON.parse(fieldsJsonOf(e)) as Record<string, unknown>,
    timestampMicros: e.timestampMicros,
  };
}

/** A content cluster of a deployed package: its id and the document types it holds. */
export interface ServedCluster {
  name: string;
  documentTypes: readonly string[];
}

/** All clusters' stores; the in-process handle tests use to seed and inspect. */
export class DocumentStore {
  private readonly clusters = new Map<string, ClusterStore>();
  private readonly configured: readonly string[];
  private served: readonly string[];
  private readonly clock: MicrosClock;

  /** `nowMs`: the clock that stamps every write (default `Date.now`); see {@link MicrosClock}. */
  constructor(clusterNames: readonly string[], options: { nowMs?: () => number } = {}) {
    if (clusterNames.length === 0) throw new Error('at least one content cluster is needed');
    this.clock = new MicrosClock(options.nowMs);
    this.configured = [...clusterNames];
    this.served = this.configured;
    for (const name of clusterNames) this.clusters.set(name, new ClusterStore(name, this.clock));
  }

  /** The content clusters served now: those the store was made with, or the deployed package's. */
  get clusterNames(): readonly string[] {
    return this.served;
  }

  /**
   * Serves the content clusters a deployed package names, each holding only its document types; null goes back
   * to the clusters the store was made with, any type in each. A cluster no longer served keeps its documents,
   * so deploying it again finds them.
   */
  serve(clusters: readonly ServedCluster[] | null): void {
    for (const store of this.clusters.values()) store.documentTypes = null;
    if (clusters === null) {
      this.served = this.configured;
      return;
    }
    this.served = clusters.map((c) => c.name);
    for (const c of clusters) {
      let store = this.clusters.get(c.name);
      if (store === undefined) {
        store = new ClusterStore(c.name, this.clock);
        this.clusters.set(c.name, store);
      }
      store.documentTypes = [...c.documentTypes];
    }
  }

  /** The named cluster's store (the first cluster when no name is given). */
  cluster(name?: string): ClusterStore {
    const store = this.clusters.get(name ?? this.served[0]);
    if (store === undefined) throw new Error(`no content cluster '${name}'`);
    return store;
  }

  /** `get(id)` in the first cluster, or `get(cluster, id)`. */
  get(clusterOrId: string, id?: string): StoredDocument | undefined {
    const e = id === undefined ? this.cluster().document(clusterOrId) : this.cluster(clusterOrId).document(id);
    return e === undefined ? undefined : toStoredDocument(e);
  }

  put(id: string, fields: Record<string, unknown>, options: { cluster?: string; timestampMicros?: number } = {}): void {
    this.cluster(options.cluster).put(
      id,
      undefined,
      options.timestampMicros ?? this.clock.now(),
      JSON.stringify(fields),
    );
  }

  /** Puts many documents at once; returns how many. */
  seed(documents: Iterable<SeedDocument>, options: { cluster?: string } = {}): number {
    const store = this.cluster(options.cluster);
    let n = 0;
    for (const d of documents) {
      store.put(d.id, undefined, this.clock.now(), JSON.stringify(d.fields));
      n++;
    }
    return n;
  }

  remove(id: string, options: { cluster?: string } = {}): boolean {
    return this.cluster(options.cluster).remove(id);
  }

  /** Live documents in one cluster, or in all clusters when none is named. */
  size(cluster?: string): number {
    if (cluster !== undefined) return this.cluster(cluster).size;
    let n = 0;
    for (const c of this.clusters.values()) n += c.size;
    return n;
  }

  /** Live documents in visit order (one cluster, or all clusters one after another). */
  all(cluster?: string): StoredDocument[] {
    const stores = cluster !== undefined ? [this.cluster(cluster)] : [...this.clusters.values()];
    const out: StoredDocument[] = [];
    for (const s of stores) for (const e of s.orderedEntries()) if (!e.removed) out.push(toStoredDocument(e));
    return out;
  }

  clear(): void {
    for (const c of this.clusters.values()) c.clear();
  }
}

function newEntry(
  id: string,
  removed: boolean,
  fields: Record<string, unknown> | undefined,
  fieldsJson: string | undefined,
  timestampMicros: number,
): StoredEntry {
  const parts = idParts(id);
  return {
    id,
    idJson: JSON.stringify(id),
    namespace: parts.namespace,
    type: parts.type,
    bucket: parts.bucket,
    removed,
    fields,
    fieldsJson,
    timestampMicros,
  };
}
