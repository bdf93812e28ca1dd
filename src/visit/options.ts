import type { ConnectionOptions } from '../http/connection-options.js';
import type { RetryPolicy } from '../http/retry-delay.js';
import { OptionError, checkInteger } from '../core/options-check.js';
import type { TensorFormat } from '../document/tensor-format.js';
import type { DocumentModel } from '../schema/document-model.js';

/**
 * What to visit and how. Every field maps to one /document/v1 visit parameter or to one client behaviour;
 * nothing here does I/O.
 */
export interface VisitSelectionOptions {
  /** Namespace of the documents; with `documentType`, visits `/document/v1/<ns>/<type>/docid/`. */
  namespace?: string;
  /** Document type; omitted (with namespace) visits the whole cluster at `/document/v1/`. */
  documentType?: string;
  /** Document selection expression, ANDed by the service with the type and namespace of the path. */
  selection?: string;
  /**
   * The application's document model, when known: a `selection` naming a document type or field it lacks is refused
   * before anything is sent, with the near name (the service compares a missing field as matching nothing, so
   * `music.yeer > 2000` would visit nothing and succeed). An export to Parquet or CSV also types its columns by it.
   */
  model?: DocumentModel;
  /** Content cluster; required at the root path when the deployment has several. */
  cluster?: string;
  /**
   * Several content clusters, each visited (as `vespa visit` does when the deployment has several): every slice
   * has a chain per cluster, keyed `<cluster>/<slice>` in checkpoints and `resumeFrom`, and the report names each
   * chain's cluster. Not with `cluster`. One cluster here is the same as `cluster`.
   */
  clusters?: string[];
  /**
   * `default` or `global`. Unset with a document type: the type's own space. Unset without one (the whole
   * cluster): both spaces are visited, as `vespa visit` does, since the service visits only `default` then
   * and the documents of global types would be left out.
   */
  bucketSpace?: string;
  /** Fields to return: `[all]`, `[document]`, `[id]`, `<type>:f1,f2`... */
  fieldSet?: string;
  /** Lower bound of the last-modified time, microseconds since epoch (as a decimal string or bigint). */
  fromTimestamp?: bigint | string;
  /** Upper bound of the last-modified time, microseconds since epoch. */
  toTimestamp?: bigint | string;
  /** Return tombstones (`{"remove":id}`) of removed documents too. */
  includeRemoves?: boolean;
  /**
   * How tensor fields are written (`format.tensors`): `short` (the service's default), `long`, `short-value`,
   * `long-value`, `hex`, `hex-value`. The hex forms write dense cells as one hex string: far less JSON to write and
   * parse for embeddings, and a feed of the output reads them back unchanged.
   */
  tensorFormat?: TensorFormat;
}

/**
 * Options of `visit()` and the calls built on it: what to visit (`VisitSelectionOptions`), how to reach the service
 * (`ConnectionOptions`; the protocol spoken is the report's `protocol`), and how the slices go. Over HTTP/2 the
 * slices in flight are streams spread over up to 16 connections (one per slice in flight), renewed every minute or
 * so as the feed's are; over HTTP/1.1 each has a connection of its own, as the container serves a connection one
 * request at a time.
 */
export interface VisitOptions extends VisitSelectionOptions, ConnectionOptions {
  /** Base URL of the container, e.g. http://127.0.0.1:8080. A path prefix is kept. */
  endpoint: string;
  /**
   * Number of slices the corpus is split in, each visited by its own chain of continuations. Not given: the corpus
   * is split in {@link defaultVisitSlices} and visited adaptively (see `inflightSlices`). Given: all of `sliceIds`
   * are visited at once, as before; 1 visits the corpus as one chain of requests (no `slices` parameter is sent).
   */
  slices?: number;
  /** Which slices this process visits; default all of 0..slices-1. Lets several machines split one export. Needs `slices`. */
  sliceIds?: number[];
  /**
   * How many slices are visited at once. A number: at most that many, the next unstarted one taking the place of a
   * finished one. `'adaptive'`: start with a few and keep as many in flight as raise the documents/s (see
   * {@link AdaptiveSliceOptions}). Default: `'adaptive'` when `slices` is not given, all of them when it is.
   */
  inflightSlices?: number | 'adaptive';
  /** Tuning of `inflightSlices: 'adaptive'`; the defaults suit a visit of more than a few seconds. */
  adaptiveSlices?: AdaptiveSliceOptions;
  /** Ask for a streamed response (`stream=true`, JSONL when the server offers it). Default true. */
  stream?: boolean;
  /** `wantedDocumentCount`; default unset when streaming, 1000 per page otherwise. */
  wantedDocumentCount?: number;
  /** The server-side `concurrency` parameter (visitors per request). */
  concurrency?: number;
  /** The service's time budget for one request, e.g. `60s`, `500ms`: its `timeout` query parameter. */
  serviceTimeout?: string;
  /** `tracelevel` 0-9; traces are passed to `onMessage`. */
  tracelevel?: number;
  /**
   * Continuation tokens to start from, per slice (from a checkpoint or a failed run's report): keyed by the
   * slice id, or `<id>@global` for the global bucket space's chain of a whole-cluster visit, after `<cluster>/` with
   * several `clusters` (see `chainKey`).
   */
  resumeFrom?: Record<string, SliceResumeState>;
  /** Retry policy for 429, 502, 503, 504 and cut streams; see {@link defaultVisitRetryPolicy}. */
  retry?: Partial<VisitRetryPolicy>;
  /** Client-side limit for one request to answer and for a silent body, in ms. Default: the server timeout + 30 s. */
  requestTimeoutMs?: number;
  /** Cancels the whole visit. */
  signal?: AbortSignal;
  /** Informational messages: server warnings, retries, traces. */
  onMessage?: (message: VisitMessage) => void;
}

/**
 * Slices the corpus is split in when `slices` is not given; they are then visited adaptively, a few at first and as
 * many at once as raise the documents/s. A chain of requests keeps about one visitor of one content node busy (with
 * the default `concurrency` of 1), so 256 leave room for a large cluster (twenty content nodes visiting a dozen
 * buckets at once each); a slice is then a small share of the corpus, so the last ones, running alone at the end,
 * are short. What a slice costs beyond its documents is a request or two more.
 * @example
 * ```ts
 * import { defaultVisitSlices, visit } from 'vespa-bulk';
 *
 * // This process visits the first half of the corpus; another one visits the rest.
 * const half = Array.from({ length: defaultVisitSlices / 2 }, (_, i) => i);
 * for await (const doc of visit({ endpoint: 'http://127.0.0.1:8080', cluster: 'content', slices: defaultVisitSlices, sliceIds: half })) console.log(doc.id);
 * ```
 */
export const defaultVisitSlices = 256;

/** How the adaptive visit (`inflightSlices: 'adaptive'`) searches for its number of slices in flight. */
export interface AdaptiveSliceOptions {
  /** Slices in flight at the start. Default {@link defaultAdaptiveStart}. */
  start?: number;
  /** Never more than this many in flight. Default: all the slices (and bucket spaces) of the visit. */
  max?: number;
  /**
   * One measurement of documents/s, in ms: the shortest window (a slow visit's last longer, see `windowDocuments`).
   * After each change the window is not measured until the slices it started sent their first documents and the
   * ones it parked stopped (at most this long), and the next one is; while the search doubles, its windows are 0.4
   * of this. Default 250.
   */
  windowMs?: number;
  /**
   * The fewest documents a measured window holds: a slow visit's windows last until this many came (at most 30
   * windows), since documents come in steps (a bucket at a time) and a rate read off a few steps is mostly noise.
   * Default 2048.
   */
  windowDocuments?: number;
}

/**
 * The adaptive visit's shortest window, in ms (`adaptiveSlices.windowMs`). A quarter of a second holds thousands of
 * documents of a visit fast enough for the level to matter, and some ten steps of each slice (a streamed slice sends
 * what its visitor iterated every few tens of ms); a slower one's windows stretch to span its slices' pauses and
 * `windowDocuments`. Longer windows made a short export end before the climb paid (docs/measurements.md, "Visit
 * slices").
 */
export const defaultAdaptiveWindowMs = 250;

/** The fewest documents in a measured window of the adaptive visit (`adaptiveSlices.windowDocuments`). */
export const defaultAdaptiveWindowDocuments = 2048;

/**
 * Slices in flight at the start of an adaptive visit. High enough that a short export is not over before the climb
 * pays (a visit whose every slice streams at its own pace is fastest with as many as the CPU serves: 32 to 128 on the
 * 2-core development VM), and low enough for a small cluster: where fewer do as well, the search steps down within a
 * few windows, and slices beyond a content node's visitor threads only wait in its queue. It was 4 (the fixed
 * default before the search existed) until the figures in docs/measurements.md, "Visit slices".
 * @example
 * ```ts
 * import { defaultAdaptiveStart, exportDocuments } from 'vespa-bulk';
 *
 * await exportDocuments({ endpoint: 'http://127.0.0.1:8080', cluster: 'content', output: 'all.jsonl', adaptiveSlices: { start: defaultAdaptiveStart / 4 } });
 * ```
 */
export const defaultAdaptiveStart = 32;

/**
 * The retry policy of a visit or bulk operation. `maxRetries` bounds failed requests in a row of every kind
 * (429 and 507 too), without any progress in between: progress (a document or a new continuation) resets the
 * count, so a long visit survives any number of spread-out cuts but not a server that keeps failing. The rule
 * of every `maxRetries`: {@link RetryPolicy}.
 */
export type VisitRetryPolicy = RetryPolicy;

/**
 * Like the established CLI: 200 ms growing 1.5x to 10 s, half of it random.
 * @example
 * ```ts
 * import { defaultVisitRetryPolicy, exportDocuments } from 'vespa-bulk';
 *
 * await exportDocuments({ endpoint: 'http://127.0.0.1:8080', cluster: 'content', output: 'all.jsonl', retry: { maxRetries: 4 * defaultVisitRetryPolicy.maxRetries } });
 * ```
 */
export const defaultVisitRetryPolicy: VisitRetryPolicy = {
  maxRetries: 10,
  baseDelayMs: 200,
  maxDelayMs: 10_000,
  feedBlockBaseDelayMs: 1_000,
  feedBlockMaxDelayMs: 30_000,
  factor: 1.5,
  jitter: 0.5,
};

/**
 * Refuses a bound that is not a count, and `maxAttempts`, a name no release took: a caller still giving it (a
 * JavaScript caller, unchecked by types) learns the bound is `maxRetries` instead of having it ignored.
 */
export function checkVisitRetry(retry: Partial<VisitRetryPolicy> | undefined): void {
  if (retry === undefined) return;
  if ('maxAttempts' in retry)
    throw new OptionError(
      'maxAttempts',
      'left out (the bound is maxRetries)',
      (retry as { maxAttempts?: unknown }).maxAttempts,
    );
  checkInteger(retry, 'maxRetries', 0);
}

/** The policy a visit runs with: the defaults, then the caller's fields. */
export function resolveVisitRetry(retry: Partial<VisitRetryPolicy> | undefined): RetryPolicy {
  return { ...defaultVisitRetryPolicy, ...retry };
}

/** Where a slice stands: the token to continue from and the documents already delivered after it. */
export interface SliceResumeState {
  /** Continuation token; undefined starts from the beginning. */
  continuation?: string;
  /** The slice is done: nothing is requested for it. */
  finished?: boolean;
  /**
   * Ids delivered after `continuation`: the server sends them again when the visit continues from that
   * token, and the visitor skips them so that each document is delivered once.
   */
  deliveredIds?: string[];
}

/** An informational message of a visit: a server warning, a retry, a trace. */
export interface VisitMessage {
  slice: number;
  severity: 'info' | 'warning' | 'error';
  text: string;
}
