import type { ConnectionOptions } from '../http/connection-options.js';
import type { Readable } from 'node:stream';
import type { RetryPolicy } from '../http/retry-delay.js';
import type { OperationResult } from './operation-result.js';
import type { Shard } from './shard.js';
import type { FeedCheckpoint } from './feed-checkpoint.js';
import type { TransformSpec } from '../transform/transform.js';
import type { InputFormat } from '../tabular/input-format.js';
import type { RowOptions } from '../tabular/row-operation.js';
import {
  OptionError,
  checkDuration,
  checkExclusive,
  checkFunction,
  checkInteger,
  checkOneOf,
  checkProtocol,
  checkString,
  checkUrl,
} from '../core/options-check.js';
import { checkRetryBound, checkRetryPolicy } from '../http/retry-delay.js';
import { checkInputFormat } from '../tabular/input-format.js';
import { checkRowOptions } from '../tabular/row-operation.js';

export type { OperationResult } from './operation-result.js';

/** Request body compression; see `FeedOptions.compression`. */
export type Compression = 'auto' | 'gzip' | 'none';

/**
 * Options of `feed()` and `Feeder`, in groups by what they concern. Every one has a default that needs no tuning.
 * The connection's (`headers`, `protocol`, `tls`, `proxy`, `transport`...) are `ConnectionOptions`; with `tls`,
 * `proxy` and `proxyTls` URL inputs are read too.
 */
export interface FeedOptions extends ConnectionOptions {
  // Where requests go and what they carry.
  /** Container endpoint. Default: the checkpoint's when resuming one that records it, else http://127.0.0.1:8080. */
  endpoint?: string;
  /** Route for every operation (`?route=`). */
  route?: string;
  /** Trace level 1-9 (`?tracelevel=`). */
  tracelevel?: number;
  /** `?dryRun=true`: the service validates and answers, but stores nothing. */
  dryRun?: boolean;
  /** `auto` (default): gzip bodies over 512 bytes unless the endpoint is loopback; `gzip`: always over 512 bytes; `none`. */
  compression?: Compression;
  /**
   * The cluster's request size limit in bytes (`maxDocumentOperationRequestSizeMib` in services.xml). An operation
   * whose body `{"fields":...}` is over it, before compression, is not sent: it fails at once with
   * VB_REQUEST_TOO_LARGE (the container would answer 413 after reading it all). Default 100 MiB, the container's default.
   */
  maxRequestBytes?: number;

  // The connections (and `ConnectionOptions`; the protocol spoken is `FeedSummary.protocol`).
  /**
   * Connections, opened as the operations in flight need them. HTTP/2: this many (default 16, or the in-flight limit
   * where smaller), the operations spread over them and each renewed every minute or so, so that a layer-4 load
   * balancer reaches every container node (docs/feed.md, Sending). HTTP/1.1: at most this many, one per operation in
   * flight (per `pipelining`), as the container serves a connection one request at a time (default: the in-flight
   * maximum).
   */
  connections?: number;
  /** HTTP/1.1: requests pipelined on one connection at once. Default 1 (the container serves one at a time). */
  pipelining?: number;
  /** HTTP/2: streams at once per connection at most (and the server's own limit, 512 on the container). Default 256. */
  maxStreams?: number;
  /** HTTP/1.1: gather the writes of one event-loop turn into one syscall. Default: when pipelining. */
  batchWrites?: boolean;

  // How much is in flight, and when.
  /** A fixed in-flight limit instead of the adaptive one. */
  inflight?: number;
  /** Upper bound of the adaptive in-flight limit. Default 1024. With `workers`, shared among them. */
  maxInflight?: number;
  /**
   * Open loop at this many operations per second: operation n (in input order, from 0) is due n/rate seconds
   * after the start and not sent before; its latency (`FeedSummary.operationLatency*`) counts from when it was due, not
   * from when it was sent, so a cluster that falls behind shows in the percentiles (as wrk2 and k6's
   * constant-arrival-rate do). The in-flight limit still applies. Default: none, each operation goes as
   * soon as the limit allows.
   */
  arrivalRate?: number;
  /**
   * Interleave operations through a buffer of `shuffleBuffer` operations, so consecutive operations go to
   * different buckets (an export comes grouped by bucket, and a feed in that order contends for one bucket's
   * lock on the content nodes). Operations on one document id keep their order. Default false (`migrate`: true).
   */
  shuffle?: boolean;
  /** Operations held by `shuffle` at most (its memory bound). Default 10000. */
  shuffleBuffer?: number;
  /**
   * Worker threads, each feeding its share of the operations (routed by a hash of the document id, so the
   * operations on one id stay in order) over its own connections and its share of the in-flight limit.
   * Default 1: feeds on the calling thread (see `resolveWorkers` for what was measured).
   */
  workers?: number;

  // Retries, deadlines and the breaker.
  /**
   * Per-operation deadline across all its attempts and the waits between them, in ms (retries stop at it; see
   * {@link RetryPolicy}); when given, also sent to the service as its `?timeout=`. Default 600 s, not sent.
   */
  deadlineMs?: number;
  /**
   * Client-side bound for one attempt: the wait for the answer's headers and any gap in its body, in ms. An
   * attempt over it counts as a transport error (retried when safe, within the deadline). Default: the
   * deadline plus 5 s (at most 600 s), so only a deadline ends a silent request.
   */
  requestTimeoutMs?: number;
  /** Retries of one operation, as {@link RetryPolicy} counts them (429 and 507 are bounded by `deadlineMs` instead). Default 10. */
  maxRetries?: number;
  /** Fine-tuning of the backoff (tests). Its `maxRetries` is refused beside `maxRetries` above (VB_USAGE). */
  retryPolicy?: Partial<RetryPolicy>;
  /** Stop the feed (with a checkpoint) after this long with nothing but failures. Default 60; 0 never. */
  maxFailureSeconds?: number;
  /** One request at a time after this long with nothing but failures. Default 10. */
  halfOpenSeconds?: number;

  // The input.
  /** What `-` reads. Default process.stdin. */
  stdin?: Readable;
  /**
   * What the inputs hold: `jsonl` or `json` (operations), `csv`, `tsv` or `parquet` (rows, each becoming an
   * operation as `rows` says). Default: by each input's extension (`.csv`, `.tsv`, `.parquet`, looked at
   * after `.gz` or `.zst`), else JSON or JSONL as detected. A byte stream source is JSON unless this says so.
   */
  inputFormat?: InputFormat;
  /** How the rows of CSV, TSV and Parquet inputs become operations: the id, the operation, the schema that types the fields. */
  rows?: RowOptions;
  /**
   * A transform applied to every input operation before it is fed (docs/transform.md): the path or `file:` URL
   * of an ES module whose default export takes an operation object and returns an operation, an array of them,
   * or null/undefined to drop it; it may be async. A function works on one thread only (not with `workers`
   * above 1: each worker thread imports the module). A throw or a result that is not a valid operation sends
   * the input operation to the failure output with the reason (code VB_TRANSFORM). Each operation returned
   * counts as one in the summary (`operations`, `ok`, `errors`); one dropped counts in `dropped`.
   */
  transform?: TransformSpec;
  /** Feed only operations whose id hashes to this shard. */
  shard?: Shard;

  // What failed, and where to go on from.
  /**
   * Failure output: a path, created only when something fails (and `<path>.reasons.jsonl` beside it). Undefined
   * or false: none, failures only reach `onResult` (the CLI passes `vespa-bulk-failures-<time>.jsonl`).
   */
  failures?: string | false;
  /**
   * Called once per operation when it is finished (succeeded or finally failed). With `workers` above 1 the
   * results come from the worker threads in batches (a few per second), in no order across ids, and without
   * `body`.
   */
  onResult?: (result: OperationResult) => void;
  /** Call `onResult` only for failed operations: with workers, successes then never cross between threads. Default false. */
  onResultOnlyFailed?: boolean;
  /**
   * Where progress is saved: every `checkpointIntervalMs`, when the feed stops early, and at the end (as
   * finished, so running the same feed again sends nothing). When the file exists at the start, the feed
   * continues from it. A save never passes an operation that is not finished: succeeded, or in the failure
   * output and synced to disk. Undefined or false: none (the outcome's `stopped` still says why; the CLI
   * passes `vespa-bulk-checkpoint-<time>.json` with no periodic saves unless `--checkpoint` is given). With
   * `checkpointIntervalMs: 0`, a feed (not resumed) that stops before any operation finished writes none: it would
   * only say "from the start".
   */
  checkpoint?: string | false;
  /**
   * ms between saves of `checkpoint` while the feed runs, so a feed killed outright (SIGKILL, a lost machine)
   * loses at most this much progress. Default `defaultCheckpointIntervalMs` (1000); 0: saved only when the feed stops early (and at the end
   * of a resumed feed).
   */
  checkpointIntervalMs?: number;
  /**
   * Continue a stopped feed from this checkpoint (object or path). Refused (VB_USAGE) when it was written for
   * other inputs or another shard. Default: `checkpoint`, when that file exists. What the checkpoint recorded of
   * where the feed sent and what it sent (`endpoint`, `route`, `shard`, `dryRun`, `transform`, `inputFormat`,
   * `rows`) is taken for each of these options left out; one given that differs is refused (VB_USAGE), see
   * docs/guarantees.md#what-a-feed-checkpoint-records.
   */
  resume?: FeedCheckpoint | string;
  /**
   * With `resume`: feed the rest to this `endpoint` (and `route`) although the checkpoint records another (a
   * cluster moved, or a feed split across two). Default false: refused, so that a resume never silently feeds
   * the rest of a feed to a cluster other than the one that has its first part.
   */
  resumeToOtherTarget?: boolean;
  /**
   * With `resume`: go on although an input changed since the checkpoint (refused otherwise, VB_USAGE): operations
   * before its position are not sent again, and operations moved across it may be lost or sent twice. A finished
   * checkpoint feeds what was added to its inputs after the bytes it had read. Default false.
   */
  resumeChanged?: boolean;

  // Stopping.
  /** Stops the feed cleanly (as Ctrl-C does): stop reading, let in-flight finish within `stopGraceMs`, checkpoint. */
  signal?: AbortSignal;
  /** How long in-flight operations may take to finish once the feed is stopped. Default 10 s. */
  stopGraceMs?: number;
}

/** Refuses bad FeedOptions with an OptionError naming the option; `new Feeder()` and `feed()` call it. */
export function checkFeedOptions(options: FeedOptions): void {
  checkUrl(options, 'endpoint', true);
  checkInteger(options, 'connections', 1);
  checkInteger(options, 'pipelining', 1);
  checkInteger(options, 'maxStreams', 1);
  checkProtocol(options);
  // Deprecated at 0.1.0, then removed: refused rather than ignored, so a caller who relied on it learns what replaces it.
  if ((options as { http2?: unknown }).http2 !== undefined)
    throw new OptionError(
      'http2',
      "left out (removed after 0.1.0: use `protocol: 'h2'`)",
      String((options as { http2?: unknown }).http2),
    );
  checkInteger(options, 'inflight', 1);
  checkInteger(options, 'maxInflight', 1);
  checkExclusive(options, 'inflight', 'maxInflight');
  checkDuration(options, 'deadlineMs', true);
  checkDuration(options, 'requestTimeoutMs', true);
  checkString(options, 'route');
  checkInteger(options, 'tracelevel', 0, 9);
  checkOneOf(options, 'compression', ['auto', 'gzip', 'none']);
  checkInteger(options, 'maxRetries', 0);
  checkRetryPolicy(options.retryPolicy);
  checkRetryBound(options);
  checkInteger(options, 'maxRequestBytes', 1);
  checkDuration(options, 'maxFailureSeconds');
  checkDuration(options, 'halfOpenSeconds');
  checkDuration(options, 'stopGraceMs');
  checkDuration(options, 'checkpointIntervalMs');
  for (const name of ['failures', 'checkpoint'] as const) if (options[name] !== false) checkString(options, name);
  const shard = options.shard;
  if (
    shard !== undefined &&
    !(
      Number.isInteger(shard.count) &&
      shard.count >= 1 &&
      Number.isInteger(shard.index) &&
      shard.index >= 0 &&
      shard.index < shard.count
    )
  ) {
    throw new OptionError('shard', '{index, count} with 0 <= index < count', `${shard.index}/${shard.count}`);
  }
  // The own transport's settings would be silently ignored with a caller's transport.
  checkExclusive(options, 'transport', 'tls');
  checkFunction(options, 'onResult');
  checkInteger(options, 'workers', 1, 64);
  // A caller's transport lives on the calling thread: worker threads cannot share it.
  if (options.transport !== undefined && options.workers !== undefined && options.workers > 1)
    throw new OptionError('workers', '1 with a transport', String(options.workers));
  const transform = options.transform;
  if (
    transform !== undefined &&
    typeof transform !== 'string' &&
    typeof transform !== 'function' &&
    !(transform instanceof URL)
  ) {
    throw new OptionError('transform', 'a module path, a file: URL or a function', String(transform));
  }
  // A function lives on the calling thread: worker threads import a module instead.
  if (typeof transform === 'function' && options.workers !== undefined && options.workers > 1)
    throw new OptionError('transform', 'a module path with workers', 'a function', 'workers');
  for (const name of ['shuffle', 'resumeToOtherTarget', 'resumeChanged'] as const) {
    const value = options[name];
    if (value !== undefined && typeof value !== 'boolean') throw new OptionError(name, 'true or false', String(value));
  }
  checkInteger(options, 'shuffleBuffer', 1, 10_000_000);
  checkInputFormat(options.inputFormat);
  if (options.rows !== undefined) checkRowOptions(options.rows);
  const rate = options.arrivalRate;
  if (rate !== undefined && !(typeof rate === 'number' && Number.isFinite(rate) && rate > 0))
    throw new OptionError('arrivalRate', 'a number > 0 (operations per second)', String(rate));
}
