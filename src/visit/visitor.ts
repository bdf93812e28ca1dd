import { setMaxListeners } from 'node:events';
import { type Transport, type WireProtocol } from '../http/transport.js';
import { createChainTransport } from '../http/create-transport.js';
import { proxyShown } from '../http/proxy/proxy-route.js';
import { Reachability } from '../http/reachability.js';
import { ChainScheduler, type ChainSchedulerOptions, type InflightReport } from './chain-scheduler.js';
import type { VisitBatch } from './visit-batch.js';
import {
  defaultAdaptiveWindowDocuments,
  defaultAdaptiveWindowMs,
  resolveVisitRetry,
  type VisitOptions,
} from './options.js';
import {
  adaptiveStartOf,
  baseVisitQuery,
  chainsOf,
  inflightOf,
  maxInflightOf,
  slicesOf,
  timeoutMs,
  validateVisitOptions,
  visitPath,
} from './query.js';
import { SliceVisitor, type SliceReport, type SliceStatus } from './slice-visitor.js';

export type { InflightReport } from './chain-scheduler.js';

/**
 * Runs the slices of a visit over one transport, each slice following its own continuation chain, and hands
 * their documents to one consumer: all of them at once, at most a given number, or as many as the adaptive search
 * finds worth it (chain-scheduler.ts). The engine under `visit()` and the exporter.
 */
export interface VisitConsumer {
  /** New documents of a slice; a returned promise pauses that slice's reading until it settles. */
  deliver(batch: VisitBatch): void | Promise<void>;
  /** A slice's token advanced, it parked, or it ended. */
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
  /** How many slices were in flight: the limit (adaptive or fixed), its highest, the mean, the search's steps. */
  inflight: InflightReport;
  /** The HTTP spoken: `h2` or `http1.1` (absent with a caller's transport, whose protocol is its own, or when nothing answered). */
  protocol?: WireProtocol;
  /** The forward proxy gone through, without credentials (absent for a direct connection, or with a caller's transport). */
  proxy?: string;
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
  /**
   * Mean of the slices' percentFinished, a slice not started yet counting 0 and a finished one 100: the slices are
   * equal shares of the corpus, so this is the share visited.
   */
  percentFinished(): number;
  /** Documents (and tombstones) delivered so far, over all slices. */
  documents(): number;
  /** Slices running now and how many may (the adaptive search's level, or the fixed number). */
  inflight(): { running: number; limit: number; adaptive: boolean };
}

/** The query of a chain of one of several content clusters. */
function withCluster(query: URLSearchParams, cluster: string | undefined): URLSearchParams {
  if (cluster === undefined) return query;
  const q = new URLSearchParams(query);
  q.set('cluster', cluster);
  return q;
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

/** The chains of a visit, none started, and what they share: the transport, the byte count, the stop. */
export interface ChainSet {
  readonly slices: readonly SliceVisitor[];
  readonly byKey: ReadonlyMap<string, SliceVisitor>;
  /** What the slices tell the scheduler: `throttled` once it exists (a slice answered 429 or 503). */
  readonly hooks: { throttled?: () => void };
  /** The most chains that may run at once (what the transport is sized for). */
  readonly maxInflight: number;
  /** The HTTP the own transport speaks, once known. */
  protocol(): WireProtocol | undefined;
  /** Aborted by `stop()`, or by the caller's signal. */
  readonly signal: AbortSignal;
  bytes(): number;
  /** Stops every chain (a consumer failure stops all of them, not only the one that met it). */
  stop(): void;
  /** Closes the own transport. */
  close(): Promise<void>;
}

/** Builds every chain of the visit, resumed where `resumeFrom` says, sharing one transport. */
export function createChains(options: VisitOptions, consumer: VisitConsumer): ChainSet {
  validateVisitOptions(options);
  const url = new URL(options.endpoint);
  const pathPrefix = url.pathname.replace(/\/+$/, '');
  const specs = chainsOf(options);
  const retry = resolveVisitRetry(options.retry);
  const controller = new AbortController();
  const signal =
    options.signal === undefined ? controller.signal : AbortSignal.any([options.signal, controller.signal]);
  // Every request in flight listens on it (the transport, the retry wait): one per chain, and there may be hundreds.
  setMaxListeners(0, signal);
  const unfinished = specs.filter((c) => options.resumeFrom?.[c.key]?.finished !== true).length;
  const maxInflight = maxInflightOf(options, Math.max(1, unfinished));
  // Room for each chain that may be in flight.
  let protocol: WireProtocol | undefined;
  const transport: Transport =
    options.transport ??
    createChainTransport(url.origin, maxInflight, {
      protocol: options.protocol,
      tls: options.tls,
      proxy: options.proxy,
      proxyTls: options.proxyTls,
      onProtocol: (p, why) => {
        protocol = p;
        options.onProtocol?.(p, why);
      },
    });
  const query = baseVisitQuery(options);
  const stream = options.stream ?? true;
  const requestTimeoutMs = options.requestTimeoutMs ?? timeoutMs(options.serviceTimeout, 180_000) + 30_000;
  let bytes = 0;
  const reach = new Reachability(options.endpoint);
  // Set once the scheduler exists: a slice told to stop (429, 503) tells it.
  const hooks: { throttled?: () => void } = {};
  const slices = specs.map(
    ({ key, sliceId, space, cluster }) =>
      new SliceVisitor({
        transport,
        endpoint: options.endpoint,
        pathPrefix,
        visitPath: visitPath(options),
        query: withCluster(withBucketSpace(query, space), cluster),
        ...(space !== undefined && { bucketSpace: space }),
        ...(cluster !== undefined && { cluster }),
        slices: slicesOf(options),
        sliceId,
        stream,
        headers: options.headers ?? {},
        requestTimeoutMs,
        retry,
        resume: options.resumeFrom?.[key],
        signal,
        deliver: (batch) => consumer.deliver(batch),
        onState: (s) => consumer.onSliceState?.(s),
        onMessage: options.onMessage,
        onThrottled: () => hooks.throttled?.(),
        onBytes: (n) => (bytes += n),
        reach,
      }),
  );
  return {
    slices,
    byKey: new Map(slices.map((s) => [s.key, s])),
    hooks,
    maxInflight,
    protocol: () => protocol,
    signal,
    bytes: () => bytes,
    stop: () => controller.abort(),
    close: async () => {
      if (options.transport === undefined) await transport.destroy().catch(() => {});
    },
  };
}

/**
 * The order chains start in: those with progress (resumed from a token, or with documents to skip) first, so that
 * what was begun is finished first; then the rest in slice order.
 */
export function startOrder(slices: readonly Pick<SliceVisitor, 'key' | 'isWaiting' | 'hasBegun'>[]): string[] {
  const waiting = slices.filter((s) => s.isWaiting());
  return [...waiting.filter((s) => s.hasBegun()), ...waiting.filter((s) => !s.hasBegun())].map((s) => s.key);
}

/** The scheduler's limit for a visit: fixed, or the adaptive search's bounds (starting at `start` if given). */
export function limitOf(options: VisitOptions, maxInflight: number): ChainSchedulerOptions['limit'] {
  const inflight = inflightOf(options);
  if (inflight !== 'adaptive') return maxInflight;
  return {
    // Momentum, as the feed's: a level far from the best (a start above it) is left in a few windows.
    adaptive: { start: adaptiveStartOf(options, maxInflight), max: maxInflight, momentum: true },
    windowMs: options.adaptiveSlices?.windowMs ?? defaultAdaptiveWindowMs,
    windowDocuments: options.adaptiveSlices?.windowDocuments ?? defaultAdaptiveWindowDocuments,
  };
}

/** Sums chain reports into a visit report. */
export function visitReportOf(
  reports: SliceReport[],
  bytes: number,
  seconds: number,
  inflight: InflightReport,
  protocol: WireProtocol | undefined,
  proxy: string | undefined,
): VisitReport {
  return {
    ok: reports.every((r) => r.status === 'finished'),
    documents: reports.reduce((n, r) => n + r.documents, 0),
    removes: reports.reduce((n, r) => n + r.removes, 0),
    bytes,
    seconds,
    slices: reports,
    inflight,
    ...(protocol !== undefined && { protocol }),
    ...(proxy !== undefined && { proxy }),
  };
}

/** Starts a visit that hands batches to `consumer`; the lower-level half of `visit()`. */
export function startVisit(options: VisitOptions, consumer: VisitConsumer): LocalVisitRun {
  const chains = createChains(options, consumer);
  const { slices } = chains;
  const startedAt = performance.now();
  const documents = (): number => slices.reduce((n, s) => n + s.delivered(), 0);
  const scheduler = new ChainScheduler({
    keys: startOrder(slices),
    limit: limitOf(options, chains.maxInflight),
    runner: {
      run: async (key) => {
        const s = chains.byKey.get(key)!;
        await s.run();
        return s.isWaiting() ? 'parked' : 'done';
      },
      park: (key, wanted) => chains.byKey.get(key)!.park(wanted),
      delivered: (key) => chains.byKey.get(key)!.delivered(),
    },
    documents,
    signal: chains.signal,
    onFailure: () => chains.stop(),
  });
  chains.hooks.throttled = () => scheduler.throttled();
  const done = (async (): Promise<VisitReport> => {
    try {
      await scheduler.done;
      return visitReportOf(
        slices.map((s) => s.report()),
        chains.bytes(),
        (performance.now() - startedAt) / 1000,
        scheduler.report(),
        chains.protocol(),
        options.transport === undefined ? proxyShown(options.proxy, options.endpoint) : undefined,
      );
    } finally {
      await chains.close();
    }
  })();
  return {
    slices,
    done,
    bytes: () => chains.bytes(),
    percentFinished: () =>
      slices.length === 0 ? 100 : slices.reduce((n, s) => n + s.percentFinished, 0) / slices.length,
    documents,
    inflight: () => scheduler.inflight(),
  };
}
