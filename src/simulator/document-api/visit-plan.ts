import type { DocumentRoute } from './document-path.js';
import type { QueryParameters } from './query-parameters.js';
import { badRequest } from './responses.js';
import { matches, type Matcher, type SelectionCache } from './selection-cache.js';
import {
  decodeContinuation,
  locationOf,
  type ClusterStore,
  type DocumentStore,
  type StoredEntry,
  type VisitPosition,
} from './document-store.js';
import { bucketStretch, indexAfter, sliceOf } from './visit-index.js';

/**
 * What a visit or bulk request covers, from its path and parameters: the cluster, which entries qualify and
 * where to start. Shared by plain visits, streamed visits and the bulk operations.
 */
export interface VisitScope {
  pathId: string;
  cluster: ClusterStore;
  /**
   * What the content nodes iterate for the request, in visit order, as it stood when the request came: the entries
   * of its bucket space and slice (and its location's bucket, for a path with n= or g=). Each costs iteration time.
   */
  ordered: StoredEntry[];
  /** Index in `ordered` to start at (after the continuation). */
  start: number;
  accepts: (entry: StoredEntry) => boolean;
  includeRemoves: boolean;
  timeoutMs: number;
  traceLevel: number;
}

export interface ScopeContext {
  store: DocumentStore;
  /** Types stored in the global bucket space (visible only with bucketSpace=global). */
  globalTypes: ReadonlySet<string>;
  documentTypes: ReadonlySet<string> | null;
  selections: SelectionCache;
}

export const defaultTimeoutMs = 180_000;

export function clusterList(names: readonly string[]): string {
  return `'${names.join("', '")}'`;
}

/** The service's cluster rules, with its exact messages (DocumentV1ApiHandler.java:1589-1606). */
export function resolveCluster(store: DocumentStore, wanted: string | undefined): ClusterStore {
  const names = store.clusterNames;
  if (names.length === 0)
    throw badRequest('Your Vespa deployment has no content clusters, so the document API is not enabled');
  if (wanted !== undefined) {
    if (!names.includes(wanted))
      throw badRequest(`Your Vespa deployment has no content cluster '${wanted}', only ${clusterList(names)}`);
    return store.cluster(wanted);
  }
  if (names.length > 1)
    throw badRequest(`Please specify one of the content clusters in your Vespa deployment: ${clusterList(names)}`);
  return store.cluster(names[0]);
}

/**
 * Where a single-document operation without `cluster` goes: the first served cluster that holds its type (the
 * default route picks clusters by document type), else the first one.
 */
export function defaultClusterName(store: DocumentStore, type: string): string | undefined {
  const names = store.clusterNames;
  return names.find((name) => store.cluster(name).documentTypes?.includes(type) === true) ?? names[0];
}

export function checkDocumentType(types: ReadonlySet<string> | null, type: string): void {
  if (types !== null && !types.has(type))
    throw badRequest(
      `unknown document type '${type}': this deployment has ${types.size === 0 ? 'no document types' : `only ${clusterList([...types])}`}`,
    );
}

export function parseTraceLevel(query: QueryParameters): number {
  const level = query.integer('tracelevel');
  if (level === undefined) return 0;
  if (level < 0 || level > 9) throw badRequest(`tracelevel must be in [0, 9], got ${level}`);
  return level;
}

export function parseTimeoutMs(query: QueryParameters): number {
  return query.durationMs('timeout') ?? defaultTimeoutMs;
}

/** Builds the scope; `cluster` is what the request resolved (it differs in rules between visit and bulk). */
export function buildScope(
  context: ScopeContext,
  route: Extract<DocumentRoute, { kind: 'root' | 'collection' }>,
  query: QueryParameters,
  pathId: string,
  cluster: ClusterStore,
): VisitScope {
  if (route.kind === 'collection') {
    const held = cluster.documentTypes;
    if (held === null) checkDocumentType(context.documentTypes, route.type);
    // After a deployment a cluster serves only the types its <documents> list (DocumentV1ApiHandler.java:1608-1612).
    else if (!held.includes(route.type))
      throw badRequest(
        `There is no document type '${route.type}' in cluster '${cluster.name}', only ${clusterList(held)}`,
      );
  }
  const timeoutMs = parseTimeoutMs(query);
  const traceLevel = parseTraceLevel(query);

  const bucketSpace = query.string('bucketSpace');
  if (bucketSpace !== undefined && bucketSpace !== 'default' && bucketSpace !== 'global')
    throw badRequest(`Bucket space '${bucketSpace}' is not a known bucket space; expected one of default, global`);

  const slices = query.integer('slices');
  const sliceId = query.integer('sliceId');
  if ((slices === undefined) !== (sliceId === undefined))
    throw badRequest("None or both of 'slices' and 'sliceId' must be set");
  // The visitor iterator's checks, reached only when both are given.
  if (slices !== undefined && slices < 1) throw badRequest(`slices must be positive, but was ${slices}`);
  if (slices !== undefined && sliceId !== undefined && (sliceId < 0 || sliceId >= slices))
    throw badRequest(`sliceId must be in [0, ${slices}), but was ${sliceId}`);

  const from = query.unsignedLong('fromTimestamp');
  const to = query.unsignedLong('toTimestamp');
  if (from !== undefined && to !== undefined && from > to)
    throw badRequest('toTimestamp must be greater than, or equal to, fromTimestamp');
  const fromMicros = from === undefined ? undefined : Number(from);
  const toMicros = to === undefined ? undefined : Number(to);

  const includeRemoves = query.boolean('includeRemoves') ?? false;

  const selectionText = query.string('selection');
  const matcher: Matcher | undefined =
    selectionText === undefined ? undefined : context.selections.compile(selectionText, 'selection');

  const continuation = query.string('continuation');
  const position: VisitPosition | undefined = continuation === undefined ? undefined : decodeContinuation(continuation);

  // The path's type, namespace and number/group are ANDed with the selection; checked natively for speed.
  const location =
    route.kind === 'collection' && route.location !== undefined
      ? `${route.location.kind === 'number' ? 'n' : 'g'}=${route.location.value}`
      : undefined;
  const idPrefix =
    route.kind === 'collection'
      ? `id:${route.namespace}:${route.type}:${location === undefined ? '' : `${location}:`}`
      : undefined;
  const { globalTypes } = context;
  // A typed path visits the type's own bucket space; at the root the parameter decides.
  const global = route.kind === 'collection' ? globalTypes.has(route.type) : bucketSpace === 'global';

  // The bucket space and the slice are what is iterated (visit-index.ts); the rest is checked per entry.
  const accepts = (e: StoredEntry): boolean => {
    if (idPrefix !== undefined && !e.id.startsWith(idPrefix)) return false;
    if (fromMicros !== undefined && e.timestampMicros < fromMicros) return false;
    if (toMicros !== undefined && e.timestampMicros > toMicros) return false;
    if (e.removed) return includeRemoves;
    return matcher === undefined || matches(matcher, e);
  };

  const share = sliceOf(cluster.orderedEntries(), { globalTypes, global, slices, sliceId });
  const ordered = location === undefined ? share : bucketStretch(share, locationOf(location)!);
  const start = position === undefined ? 0 : indexAfter(ordered, position);
  return { pathId, cluster, ordered, start, accepts, includeRemoves, timeoutMs, traceLevel };
}

export function percentFinished(scope: VisitScope, nextIndex: number): number {
  if (scope.ordered.length === 0) return 100;
  return Math.round((nextIndex / scope.ordered.length) * 100_000) / 1000;
}
