import { VespaBulkError } from '../core/errors.js';
import type { VisitEntry } from '../document/visit-entry.js';
import type { VisitBatch } from './visit-batch.js';
import { toFeedOperation } from '../sinks/json-write.js';
import type { VisitOptions } from './options.js';
import { startVisit, type VisitReport, type VisitRun } from './visitor.js';
import { chainsOf, maxInflightOf } from './query.js';

/**
 * One visited document or tombstone.
 * @example
 * ```ts
 * import { visit } from 'vespa-bulk';
 *
 * for await (const doc of visit({ endpoint: 'http://127.0.0.1:8080', cluster: 'content', includeRemoves: true })) {
 *   if (doc.kind === 'remove') console.log('removed', doc.id);
 *   else console.log(doc.id, doc.fields?.title); // fields are parsed only when read; doc.raw holds the bytes
 * }
 * ```
 */
export class VisitedDocument {
  private parsed: Record<string, unknown> | undefined;

  /** @internal Made by the visit, not by a caller. */
  constructor(
    private readonly entry: VisitEntry,
    /** The slice it came from. */
    readonly slice: number,
  ) {}

  get kind(): 'put' | 'remove' {
    return this.entry.kind;
  }

  get id(): string {
    return this.entry.id;
  }

  /** The document's fields, parsed on first access; undefined for a tombstone. */
  get fields(): Record<string, unknown> | undefined {
    if (this.entry.kind === 'remove') return undefined;
    this.parsed ??= JSON.parse(this.raw.toString('utf8')) as Record<string, unknown>;
    return (this.parsed.fields as Record<string, unknown> | undefined) ?? {};
  }

  /** The bytes as the service sent them (a JSONL line, or one element of a plain JSON response). */
  get raw(): Buffer {
    return this.entry.buf.subarray(this.entry.start, this.entry.end);
  }

  /** The document as a feed operation line (`{"put":id,"fields":...}` or `{"remove":id}`), without newline. */
  toFeedLine(): Buffer {
    return toFeedOperation(this.entry);
  }
}

/** A visited document (not a tombstone): its `fields` are there, so strict TypeScript needs no check for undefined. */
export interface VisitedPut extends VisitedDocument {
  readonly kind: 'put';
  readonly fields: Record<string, unknown>;
}

/** A tombstone (`includeRemoves`): an id and no fields. */
export interface VisitedRemove extends VisitedDocument {
  readonly kind: 'remove';
  readonly fields: undefined;
}

/**
 * What `visit()` returns: the documents, then (after the loop) how each slice ended. Without `includeRemoves` every
 * item is a `VisitedPut`; with it, `kind` tells a tombstone from a document, and narrows `fields`.
 */
export interface VisitIterable<D extends VisitedDocument = VisitedPut | VisitedRemove> extends AsyncIterable<D> {
  /** Resolves when the visit is over: per-slice status, counts and the token of any failed slice. */
  readonly report: Promise<VisitReport>;
}

/**
 * Visits the documents of the requested slices (all at once, or as many at once as pay: see `inflightSlices`) and
 * yields each document (and tombstone, with `includeRemoves`) exactly once, resuming cut responses and retrying 429/503/504 with backoff. A slow
 * loop body slows the HTTP reads down; nothing piles up. Breaking out of the loop stops the requests.
 *
 * When some slice fails for good, the loop ends with a `VB_VISIT` error once the other slices are done;
 * its `report` (also on `.report`) holds each failed slice's continuation token for `resumeFrom`.
 * @example
 * ```ts
 * import { visit } from 'vespa-bulk';
 *
 * const ac = new AbortController();
 * for await (const doc of visit({ endpoint: 'http://127.0.0.1:8080', cluster: 'content', selection: 'music.year > 2000', slices: 4, signal: ac.signal })) {
 *   console.log(doc.id, doc.fields);
 * }
 * ```
 */
export function visit(
  options: VisitOptions & { includeRemoves?: false },
  hooks?: { onStart?: (run: VisitRun) => void },
): VisitIterable<VisitedPut>;
export function visit(options: VisitOptions, hooks?: { onStart?: (run: VisitRun) => void }): VisitIterable;
export function visit(options: VisitOptions, hooks: { onStart?: (run: VisitRun) => void } = {}): VisitIterable {
  const controller = new AbortController();
  const signal =
    options.signal === undefined ? controller.signal : AbortSignal.any([options.signal, controller.signal]);
  let reportResolve!: (r: VisitReport) => void;
  let reportReject!: (e: unknown) => void;
  const report = new Promise<VisitReport>((resolve, reject) => {
    reportResolve = resolve;
    reportReject = reject;
  });
  report.catch(() => {});
  let started = false;

  return {
    report,
    [Symbol.asyncIterator](): AsyncIterator<VisitedPut | VisitedRemove> {
      if (started) throw new VespaBulkError('VB_USAGE', 'a visit() result can be iterated once');
      started = true;
      const queue: VisitBatch[] = [];
      // Two batches for each chain that may be in flight.
      const maxQueued = 2 * maxInflightOf(options, Math.max(1, chainsOf(options).length));
      const waitingProducers: Array<() => void> = [];
      let wakeConsumer: (() => void) | undefined;
      let finished = false;
      let failure: { error: unknown } | undefined;
      let finalReport: VisitReport | undefined;

      const run = startVisit(
        { ...options, signal },
        {
          deliver(batch) {
            queue.push(batch);
            wakeConsumer?.();
            if (queue.length < maxQueued) return;
            return new Promise<void>((resolve) => waitingProducers.push(resolve));
          },
        },
      );
      hooks.onStart?.(run);
      run.done.then(
        (r) => {
          finalReport = r;
          finished = true;
          reportResolve(r);
          wakeConsumer?.();
        },
        (err: unknown) => {
          failure = { error: err };
          finished = true;
          reportReject(err);
          wakeConsumer?.();
        },
      );

      let current: VisitBatch | undefined;
      let index = 0;
      return {
        async next(): Promise<IteratorResult<VisitedPut | VisitedRemove>> {
          for (;;) {
            if (current !== undefined && index < current.entries.length) {
              // The class's getters answer by the entry's kind: `fields` is there exactly when `kind` is 'put'.
              const value = new VisitedDocument(current.entries[index++], current.slice) as VisitedPut | VisitedRemove;
              return { done: false, value };
            }
            current = queue.shift();
            index = 0;
            if (current !== undefined) {
              waitingProducers.shift()?.();
              continue;
            }
            if (finished) {
              if (failure !== undefined) throw failure.error;
              if (
                finalReport !== undefined &&
                !finalReport.ok &&
                !controller.signal.aborted &&
                !options.signal?.aborted
              ) {
                throw new VisitFailedError(finalReport);
              }
              return { done: true, value: undefined };
            }
            await new Promise<void>((resolve) => (wakeConsumer = resolve));
            wakeConsumer = undefined;
          }
        },
        async return(): Promise<IteratorResult<VisitedPut | VisitedRemove>> {
          controller.abort();
          for (const wake of waitingProducers.splice(0)) wake();
          await run.done.catch(() => {});
          return { done: true, value: undefined };
        },
      };
    },
  };
}

/**
 * A visit whose slices did not all finish (`VB_VISIT`), with the report of every slice.
 * @example
 * ```ts
 * import { visit, VisitFailedError } from 'vespa-bulk';
 *
 * try {
 *   for await (const doc of visit({ endpoint: 'http://127.0.0.1:8080', cluster: 'content' })) console.log(doc.id);
 * } catch (err) {
 *   // Every other slice was visited to its end; the report says where each failed one stopped.
 *   if (err instanceof VisitFailedError) for (const s of err.report.slices) if (s.status === 'failed') console.error(s.slice, s.error, s.continuation);
 *   else throw err;
 * }
 * ```
 */
export class VisitFailedError extends VespaBulkError {
  constructor(readonly report: VisitReport) {
    const failed = report.slices.filter((s) => s.status === 'failed');
    super(
      'VB_VISIT',
      `${failed.length} of ${report.slices.length} slices failed: ${failed
        .map(
          (s) =>
            `${s.cluster === undefined ? '' : `cluster '${s.cluster}' `}slice ${s.slice}${s.bucketSpace === undefined ? '' : ` of the ${s.bucketSpace} bucket space`} (${s.error ?? 'unknown error'}; continuation ${s.continuation ?? 'none: start over'})`,
        )
        .join('; ')}`,
    );
  }
}
