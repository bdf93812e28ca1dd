import { createPool } from '../http/transport.js';
import type { VisitBatch } from './entries.js';
import { resolveVisitRetry, type VisitOptions } from './options.js';
import { baseVisitQuery, bucketSpacesOf, chainKey, sliceIdsOf, slicesOf, timeoutMs, validateVisitOptions, visitPath } from './query.js';
import { SliceVisitor, type SliceReport, type SliceStatus } from './slice-visitor.js';

/**
 * Runs every requested slice of a visit at once over one connection pool, each slice following its own
 * continuation chain, and hands their documents to one consumer. The engine under `visit()` and the
 * exporter.
 */
export interface VisitConsumer {
  /** New documents of a slice; a returned promise pauses that slice's reading until it settles. */
  deliver(batch: VisitBatch): void | Promise<void>;
  /** A slice's token advanced, or it ended. */
  onSliceState?(slice: SliceVisitor): void;
}

/** How a visit ended: documents per slice, failures with their continuation tokens. */
export interface VisitReport {
  /** Every slice finished. */
  ok: boolean;
  documents: number;
  removes: number;
  bytes: number;
  seconds: number;
  slices: SliceReport[];
}

/** What a running visit shows of one chain (a slice, or a slice of one bucket space). */
export interface SliceView {
  readonly key: string;
  readonly sliceId: number;
  readonly status: SliceStatus;
  readonly documents: number;
  readonly removes: number;
  readonly retries: number;
  readonly percentFinished: number;
}

/** A running visit: its slices and its report to come. */
export interface VisitRun {
  /** The chains as last seen: live in this thread, or as last reported by visit workers. */
  readonly slices: readonly SliceView[];
  readonly done: Promise<VisitReport>;
  /** Bytes received so far. */
  bytes(): number;
  /** Mean of the slices' percentFinished. */
  percentFinished(): number;
  /** Documents (and tombstones) delivered so far, over all slices. */
  documents(): number;
}

function withBucketSpace(query: URLSearchParams, space: string | undefined): URLSearchParams {
  if (space === undefined) return query;
  const q = new URLSearchParams(query);
  q.set('bucketSpace', space);
  return q;
}

/** A visit running in this thread, with its slice visitors themselves (their resume state, for checkpoints). */
export interface LocalVisitRun extends VisitRun {
  readonly slices: readonly SliceVisitor[];
}

/** Starts a visit that hands batches to `consumer`; the lower-level half of `visit()`. */
export function startVisit(options: VisitOptions, consumer: VisitConsumer): LocalVisitRun {
  validateVisitOptions(options);
  const url = new URL(options.endpoint);
  const pathPrefix = url.pathname.replace(/\/+$/, '');
  const ids = sliceIdsOf(options);
  const spaces = bucketSpacesOf(options);
  // Each slice of each space is a chain of its own: a token of one space means nothing in the other.
  const chains = spaces.flatMap((space) => ids.map((sliceId) => ({ sliceId, space: spaces.length > 1 ? space : undefined })));
  const retry = resolveVisitRetry(options.retry);
  // A consumer failure stops every slice, not only the one that met it.
  const controller = new AbortController();
  const signal = options.signal === undefined ? controller.signal : AbortSignal.any([options.signal, controller.signal]);
  // One connection per chain: each has at most one request in flight, so there is no write to batch.
  const pool = options.dispatcher ?? createPool({ origin: url.origin, connections: chains.length, pipelining: 1, tls: options.tls, batchWrites: false });
  const query = baseVisitQuery(options);
  const stream = options.stream ?? true;
  const requestTimeoutMs = options.requestTimeoutMs ?? timeoutMs(options.timeout, 180_000) + 30_000;
  let bytes = 0;
  const reach = { answered: false };
  const startedAt = performance.now();
  const slices = chains.map(
    ({ sliceId, space }) =>
      new SliceVisitor({
        dispatcher: pool,
        origin: url.origin,
        pathPrefix,
        visitPath: visitPath(options),
        query: withBucketSpace(query, space),
        ...(space !== undefined && { bucketSpace: space }),
        slices: slicesOf(options),
        sliceId,
        stream,
        headers: options.headers ?? {},
        requestTimeoutMs,
        retry,
        resume: options.resumeFrom?.[chainKey(sliceId, space)],
        signal,
        deliver: (batch) => consumer.deliver(batch),
        onState: (s) => consumer.onSliceState?.(s),
        onMessage: options.onMessage,
        onBytes: (n) => (bytes += n),
        reach,
      }),
  );
  const done = (async (): Promise<VisitReport> => {
    try {
      const reports = await Promise.all(
        slices.map((s) =>
          s.run().catch((err: unknown) => {
            controller.abort();
            throw err;
          }),
        ),
      );
      return {
        ok: reports.every((r) => r.status === 'finished'),
        documents: reports.reduce((n, r) => n + r.documents, 0),
        removes: reports.reduce((n, r) => n + r.removes, 0),
        bytes,
        seconds: (performance.now() - startedAt) / 1000,
        slices: reports,
      };
    } finally {
      if (options.dispatcher === undefined) await pool.destroy().catch(() => {});
    }
  })();
  return {
    slices,
    done,
    bytes: () => bytes,
    percentFinished: () => (slices.length === 0 ? 100 : slices.reduce((n, s) => n + s.percentFinished, 0) / slices.length),
    documents: () => slices.reduce((n, s) => n + s.documents + s.removes, 0),
  };
}
