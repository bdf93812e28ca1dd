import { toVisitPath } from '../document/id.js';
import { tensorFormatParameter, tensorFormats } from '../document/tensor-format.js';
import { VespaBulkError } from '../core/errors.js';
import {
  OptionError,
  checkDuration,
  checkExclusive,
  checkFunction,
  checkInteger,
  checkOneOf,
  checkProtocol,
  checkUrl,
} from '../core/options-check.js';
import { isServerDuration, parseDurationMs } from '../time/duration.js';
import {
  checkVisitRetry,
  defaultAdaptiveStart,
  defaultVisitSlices,
  type VisitOptions,
  type VisitSelectionOptions,
} from './options.js';
import { checkSelection } from './selection-check.js';

/** Pure mapping from options to the request path and query of one visit request. */

/** Streamed requests ask for JSONL first; a server without it streams the plain JSON object instead. */
export const streamAccept = 'application/jsonl, application/json;q=0.9';

export function visitPath(options: Pick<VisitSelectionOptions, 'namespace' | 'documentType'>): string {
  if ((options.namespace === undefined) !== (options.documentType === undefined)) {
    throw new VespaBulkError(
      'VB_USAGE',
      'give both the namespace and the document type (<namespace>/<type>), or neither to visit the whole cluster',
    );
  }
  return toVisitPath(options.namespace, options.documentType);
}

/** `<namespace>/<type>` as the CLI takes it; empty or undefined means the whole cluster. */
export function parseDocumentSpec(spec: string | undefined): { namespace?: string; documentType?: string } {
  if (spec === undefined || spec === '') return {};
  const parts = spec.split('/');
  if (parts.length !== 2 || parts[0] === '' || parts[1] === '') {
    throw new VespaBulkError('VB_USAGE', `'${spec}': expected <namespace>/<document-type>, e.g. mynamespace/music`);
  }
  return { namespace: parts[0], documentType: parts[1] };
}

/** Refuses bad VisitOptions with an OptionError naming the option, before anything is opened or sent. */
export function validateVisitOptions(options: VisitOptions): void {
  checkVisitOptionValues(options);
  visitPath(options);
}

/**
 * The value checks of validateVisitOptions without the path: a whole-cluster visit may still have to find its
 * content cluster, and a bad value should be refused before that request is sent.
 */
export function checkVisitOptionValues(options: VisitOptions): void {
  checkUrl(options, 'endpoint');
  checkInteger(options, 'slices', 1);
  const slices = slicesOf(options);
  if (options.sliceIds !== undefined && !Array.isArray(options.sliceIds))
    throw new OptionError('sliceIds', 'an array of slice numbers', options.sliceIds);
  // A slice id or a token names a share of the corpus only together with the slice count, and the default count
  // is not a promise: it was 4, it is 256 now.
  if (options.slices === undefined && options.sliceIds !== undefined)
    throw new OptionError(
      'slices',
      'given with the slice ids to visit (a slice id names a share of the corpus only with the slice count)',
      undefined,
    );
  if (options.slices === undefined && options.resumeFrom !== undefined && Object.keys(options.resumeFrom).length > 0) {
    throw new OptionError(
      'slices',
      'given with the tokens to resume from (a continuation token belongs to one slice of one slice count)',
      undefined,
    );
  }
  for (const id of options.sliceIds ?? []) {
    if (!Number.isInteger(id) || id < 0 || id >= slices)
      throw new OptionError('sliceIds', `integers from 0 to ${slices - 1}`, id);
  }
  if (options.inflightSlices !== 'adaptive') checkInteger(options, 'inflightSlices', 1);
  const adaptive = options.adaptiveSlices;
  if (adaptive !== undefined) {
    if (typeof adaptive !== 'object' || adaptive === null)
      throw new OptionError('adaptiveSlices', 'an object ({ start, max, windowMs })', adaptive);
    // Named as a caller wrote them, with the object they are in.
    const named = {
      'adaptiveSlices.start': adaptive.start,
      'adaptiveSlices.max': adaptive.max,
      'adaptiveSlices.windowMs': adaptive.windowMs,
      'adaptiveSlices.windowDocuments': adaptive.windowDocuments,
    };
    checkInteger(named, 'adaptiveSlices.start', 1);
    checkInteger(named, 'adaptiveSlices.max', 1);
    checkDuration(named, 'adaptiveSlices.windowMs', true);
    checkInteger(named, 'adaptiveSlices.windowDocuments', 0);
  }
  if (options.serviceTimeout !== undefined && !isServerDuration(options.serviceTimeout))
    throw new OptionError('serviceTimeout', 'a number with unit s or ms, e.g. 60s', options.serviceTimeout);
  checkInteger(options, 'wantedDocumentCount', 1);
  checkInteger(options, 'concurrency', 1, 1024);
  checkInteger(options, 'tracelevel', 0, 9);
  checkDuration(options, 'requestTimeoutMs', true);
  checkOneOf(options, 'bucketSpace', ['default', 'global']);
  checkOneOf(options, 'tensorFormat', tensorFormats);
  checkClusters(options);
  // The own transport's TLS settings would be silently ignored with a caller's transport.
  checkExclusive(options, 'transport', 'tls');
  checkProtocol(options);
  checkFunction(options, 'onMessage');
  checkVisitRetry(options.retry);
  if (
    options.fromTimestamp !== undefined &&
    options.toTimestamp !== undefined &&
    BigInt(options.fromTimestamp) > BigInt(options.toTimestamp)
  ) {
    throw new VespaBulkError('VB_USAGE', 'the start of the time range is after its end');
  }
  checkSelection(options.selection, options.model?.types);
}

/** `clusters`: non-empty names, not with `cluster`. */
function checkClusters(options: VisitOptions): void {
  const clusters = options.clusters;
  if (clusters === undefined) return;
  if (!Array.isArray(clusters) || clusters.some((c) => typeof c !== 'string' || c === ''))
    throw new OptionError('clusters', 'an array of content cluster names', clusters);
  if (options.cluster !== undefined) throw new OptionError('clusters', 'left out', clusters, 'cluster');
}

/**
 * The bucket spaces one visit goes through: both for the whole cluster without --bucket-space (the service
 * would visit only `default`), else just the one the request names or implies (undefined: leave it out).
 */
export function bucketSpacesOf(
  options: Pick<VisitOptions, 'namespace' | 'documentType' | 'bucketSpace'>,
): Array<string | undefined> {
  if (options.bucketSpace !== undefined || options.documentType !== undefined) return [options.bucketSpace];
  return ['default', 'global'];
}

/**
 * The key of one chain of requests in checkpoints and `resumeFrom`: the slice id, with `@global` for the
 * global space's chain when a whole-cluster visit goes through both spaces, after `<cluster>/` when the visit
 * goes through several content clusters.
 */
export function chainKey(sliceId: number, splitSpace: string | undefined, splitCluster?: string): string {
  const key = splitSpace === 'global' ? `${sliceId}@global` : String(sliceId);
  return splitCluster === undefined ? key : `${splitCluster}/${key}`;
}

/** The content clusters one visit goes through: `clusters` when several, else the one named (or none). */
export function clustersOf(options: Pick<VisitOptions, 'cluster' | 'clusters'>): Array<string | undefined> {
  return options.clusters !== undefined && options.clusters.length > 0
    ? [...new Set(options.clusters)]
    : [options.cluster];
}

/** The number of slices the corpus is split in: the option, else the default. */
export function slicesOf(options: Pick<VisitOptions, 'slices'>): number {
  return options.slices ?? defaultVisitSlices;
}

/** The slices to visit, in order. */
export function sliceIdsOf(options: Pick<VisitOptions, 'slices' | 'sliceIds'>): number[] {
  const slices = slicesOf(options);
  const ids = options.sliceIds ?? Array.from({ length: slices }, (_, i) => i);
  return [...new Set(ids)].sort((a, b) => a - b);
}

/** One chain of requests of a visit: a slice, or a slice of one bucket space when a whole-cluster visit covers both. */
export interface ChainSpec {
  /** Its key in checkpoints and `resumeFrom` (see `chainKey`). */
  key: string;
  sliceId: number;
  /** The bucket space, when the visit goes through both (else the request names at most one, in its query). */
  space: string | undefined;
  /** The content cluster, when the visit goes through several (else the query names at most one). */
  cluster?: string;
}

/** Every chain of the visit, in order: each space's slices in turn (a token of one space means nothing in the other). */
export function chainsOf(
  options: Pick<
    VisitOptions,
    'slices' | 'sliceIds' | 'namespace' | 'documentType' | 'bucketSpace' | 'cluster' | 'clusters'
  >,
): ChainSpec[] {
  const ids = sliceIdsOf(options);
  const spaces = bucketSpacesOf(options);
  const clusters = clustersOf(options);
  return clusters.flatMap((cluster) => {
    const splitCluster = clusters.length > 1 ? cluster : undefined;
    return spaces.flatMap((space) => {
      const split = spaces.length > 1 ? space : undefined;
      return ids.map((sliceId) => ({
        key: chainKey(sliceId, split, splitCluster),
        sliceId,
        space: split,
        ...(splitCluster !== undefined && { cluster: splitCluster }),
      }));
    });
  });
}

/** How many slices run at once: `'adaptive'` without `slices` (unless told otherwise), else the number (default: all). */
export function inflightOf(options: Pick<VisitOptions, 'slices' | 'inflightSlices'>): number | 'adaptive' {
  return options.inflightSlices ?? (options.slices === undefined ? 'adaptive' : Number.MAX_SAFE_INTEGER);
}

/** The most chains a visit of `chains` chains ever has in flight (the connections its pool may need). */
export function maxInflightOf(
  options: Pick<VisitOptions, 'slices' | 'inflightSlices' | 'adaptiveSlices'>,
  chains: number,
): number {
  const inflight = inflightOf(options);
  const max = inflight === 'adaptive' ? (options.adaptiveSlices?.max ?? chains) : inflight;
  return Math.max(1, Math.min(chains, max));
}

/** Where the adaptive search starts, within its bounds. */
export function adaptiveStartOf(options: Pick<VisitOptions, 'adaptiveSlices'>, max: number): number {
  return Math.max(1, Math.min(max, options.adaptiveSlices?.start ?? defaultAdaptiveStart));
}

/** Query parameters shared by every request of a visit: everything but the slice and the continuation. */
export function baseVisitQuery(options: VisitOptions): URLSearchParams {
  const q = new URLSearchParams();
  const stream = options.stream ?? true;
  if (options.selection !== undefined && options.selection !== '') q.set('selection', options.selection);
  const clusters = clustersOf(options);
  if (clusters.length === 1 && clusters[0] !== undefined) q.set('cluster', clusters[0]);
  if (options.bucketSpace !== undefined) q.set('bucketSpace', options.bucketSpace);
  if (options.fieldSet !== undefined) q.set('fieldSet', options.fieldSet);
  if (options.fromTimestamp !== undefined) q.set('fromTimestamp', String(options.fromTimestamp));
  if (options.toTimestamp !== undefined) q.set('toTimestamp', String(options.toTimestamp));
  if (options.includeRemoves) q.set('includeRemoves', 'true');
  if (options.tensorFormat !== undefined) q.set(tensorFormatParameter, options.tensorFormat);
  const wanted = options.wantedDocumentCount ?? (stream ? undefined : 1000);
  if (wanted !== undefined) q.set('wantedDocumentCount', String(wanted));
  if (options.concurrency !== undefined) q.set('concurrency', String(options.concurrency));
  if (options.serviceTimeout !== undefined) q.set('timeout', options.serviceTimeout);
  if (options.tracelevel !== undefined && options.tracelevel > 0) q.set('tracelevel', String(options.tracelevel));
  if (stream) q.set('stream', 'true');
  return q;
}

/** Path and query of one request of one slice. */
export function visitRequestPath(
  base: string,
  query: URLSearchParams,
  slices: number,
  sliceId: number,
  continuation: string | undefined,
): string {
  const q = new URLSearchParams(query);
  if (slices > 1) {
    q.set('slices', String(slices));
    q.set('sliceId', String(sliceId));
  }
  if (continuation !== undefined) q.set('continuation', continuation);
  const text = q.toString();
  return text === '' ? base : `${base}?${text}`;
}

/**
 * A stable description of what is visited, stored in a checkpoint so that a checkpoint is never applied
 * to a different visit (another selection would make its continuation tokens meaningless).
 */
export function visitFingerprint(options: VisitOptions): string {
  const q = baseVisitQuery({
    ...options,
    stream: true,
    tracelevel: undefined,
    serviceTimeout: undefined,
    concurrency: undefined,
    wantedDocumentCount: undefined,
  });
  const clusters = clustersOf(options);
  // Each chain names its own cluster: the set of them is part of what is visited.
  if (clusters.length > 1) q.set('clusters', clusters.join(','));
  q.sort();
  return `${visitPath(options)}?${q.toString()}&slices=${slicesOf(options)}`;
}

/** Milliseconds of a server timeout string such as `60s` or `500ms`. */
export function timeoutMs(text: string | undefined, fallbackMs: number): number {
  if (text === undefined || !isServerDuration(text)) return fallbackMs;
  return parseDurationMs(text) ?? fallbackMs;
}
