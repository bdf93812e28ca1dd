/**
 * The final summary of every command: its shape and where it is written, decided here once (docs/cli.md#output-progress-and-colour).
 *
 * - Names: the library returns camelCase summaries (`FeedSummary`, `VisitReport`); the CLI prints the established
 *   dotted names that `vespa feed` and vespa-feed-client print (`feeder.ok.count`, ...), so scripts and dashboards
 *   written for them read ours. Visit's, the bulk operations' and compare's figures follow the same dotted style
 *   (`visit.document.count`, `bulk.document.count`, `compare.only.in.a.count`, ...). This module is the one place
 *   those names are written.
 * - Size: one short object. Detail that grows with the run (a visit's slices) only when asked for (`--verbose`).
 * - Seconds to the millisecond, as `vespa feed` prints `feeder.seconds`.
 * - Where: stdout, unless stdout carries the command's data (an export to stdout, as `vespa visit` writes only
 *   documents there): then stderr, after the progress. `--quiet` leaves out the progress, never the summary.
 */
import type { ExportSummary } from '../visit/export/export-options.js';
import type { FeedSummary } from '../feed/stats.js';
import type { MigrateSummary } from '../migrate/migrate.js';
import type { VisitReport } from '../visit/visitor.js';
import type { BenchResult } from '../bench/bench.js';
import type { BulkSummary } from '../visit/bulk.js';
import type { CompareSideSummary, CompareSummary, TypeComparison } from '../compare/compare.js';

/** Writes a command's final summary (see the module's comment): `dataOnStdout` when stdout carries the command's data. */
export function writeSummary(summary: unknown, where: { dataOnStdout?: boolean } = {}): void {
  (where.dataOnStdout === true ? process.stderr : process.stdout).write(`${JSON.stringify(summary, null, 2)}\n`);
}

/** Seconds as every summary prints them: to the millisecond. */
export function roundSeconds(seconds: number): number {
  return Number(seconds.toFixed(3));
}

/** Each `FeedSummary` field's printed name. */
const feedNames = {
  operations: 'feeder.operation.count',
  seconds: 'feeder.seconds',
  ok: 'feeder.ok.count',
  okRate: 'feeder.ok.rate',
  errors: 'feeder.error.count',
  inflight: 'feeder.inflight.count',
  requests: 'http.request.count',
  requestBytes: 'http.request.bytes',
  requestMBps: 'http.request.MBps',
  exceptions: 'http.exception.count',
  responses: 'http.response.count',
  responseBytes: 'http.response.bytes',
  responseMBps: 'http.response.MBps',
  responseErrors: 'http.response.error.count',
  responseLatencyMinMs: 'http.response.latency.millis.min',
  responseLatencyAvgMs: 'http.response.latency.millis.avg',
  responseLatencyMaxMs: 'http.response.latency.millis.max',
  responseLatencyP50Ms: 'http.response.latency.millis.p50',
  responseLatencyP90Ms: 'http.response.latency.millis.p90',
  responseLatencyP99Ms: 'http.response.latency.millis.p99',
  responseLatencyP999Ms: 'http.response.latency.millis.p999',
  responseCodes: 'http.response.code.counts',
  retries: 'feeder.retry.count',
  throttled: 'feeder.throttled.count',
  parseErrors: 'feeder.parse.error.count',
  skipped: 'feeder.skipped.count',
  dropped: 'feeder.transform.dropped.count',
  proxyPages: 'http.response.proxy.page.count',
  feedBlockedSeconds: 'feeder.feed.blocked.seconds',
  inflightLimit: 'feeder.inflight.limit',
  protocol: 'http.protocol',
  proxy: 'http.proxy',
  abandoned: 'feeder.abandoned.count',
  responseLatencyByCode: 'http.response.latency.millis.by.code',
  operationLatencyMinMs: 'operation.latency.millis.min',
  operationLatencyAvgMs: 'operation.latency.millis.avg',
  operationLatencyP50Ms: 'operation.latency.millis.p50',
  operationLatencyP90Ms: 'operation.latency.millis.p90',
  operationLatencyP99Ms: 'operation.latency.millis.p99',
  operationLatencyMaxMs: 'operation.latency.millis.max',
  // A resumed feed's: this run's figures beside the whole feed's (docs/feed.md#the-summary).
  runOperations: 'feeder.run.operation.count',
  runOk: 'feeder.run.ok.count',
  runErrors: 'feeder.run.error.count',
  runSeconds: 'feeder.run.seconds',
  earlierCounts: 'feeder.earlier.counts',
} as const satisfies Record<keyof FeedSummary, string>;

/** A feed summary as the CLI prints it (`vespa-bulk feed` on stdout): each field under its dotted name. */
export type PrintedFeedSummary = { [K in keyof FeedSummary as (typeof feedNames)[K]]: FeedSummary[K] };

/** A feed summary under its printed names, in the summary's own order (the JSON printed stays the same). */
export function feedSummaryJson(summary: FeedSummary): PrintedFeedSummary {
  return renamed(summary, feedNames) as PrintedFeedSummary;
}

/** A migration's summary as printed: the visit's and the feed's figures each under their printed names. */
export function migrateSummaryJson(summary: MigrateSummary, detail: SummaryDetail = {}): Record<string, unknown> {
  const visit = 'error' in summary.visit ? summary.visit : exportSummaryJson(summary.visit, detail);
  return renamed(
    {
      ...summary,
      visit,
      feed: feedSummaryJson(summary.feed),
      ...(summary.verify !== undefined && { verify: compareSummaryJson(summary.verify) }),
    },
    migrateNames,
  );
}

/** Each `MigrateSummary` field's printed name: its own under `migrate.`, each side's figures grouped by side. */
const migrateNames = {
  ok: 'migrate.ok',
  visit: 'visit',
  feed: 'feed',
  failuresFile: 'migrate.failures.file',
  stopped: 'migrate.stopped',
  verify: 'verify',
} as const satisfies Record<keyof MigrateSummary, string>;

/** Each `BulkSummary` field's printed name (update-where, delete-where, copy): visit's style, under `bulk.`. */
const bulkNames = {
  kind: 'bulk.kind',
  ok: 'bulk.ok',
  dryRun: 'bulk.dry.run',
  documentCount: 'bulk.document.count',
  requests: 'http.request.count',
  retries: 'bulk.retry.count',
  seconds: 'bulk.seconds',
  continuation: 'bulk.continuation',
  error: 'bulk.error',
  protocol: 'http.protocol',
  proxy: 'http.proxy',
} as const satisfies Record<keyof BulkSummary, string>;

/** A bulk operation's summary (update-where, delete-where, copy) as printed: each field under its dotted name, seconds rounded. */
export function bulkSummaryJson(summary: BulkSummary): Record<string, unknown> {
  return renamed({ ...summary, seconds: roundSeconds(summary.seconds) }, bulkNames);
}

/** Each `CompareSummary` field's printed name; a side's fields (`a`, `b`) are printed flat under its prefix. */
const compareNames = {
  equal: 'compare.equal',
  a: 'compare.a',
  b: 'compare.b',
  onlyInA: 'compare.only.in.a.count',
  onlyInB: 'compare.only.in.b.count',
  differing: 'compare.differing.count',
  same: 'compare.same.count',
  types: 'compare.types',
  examples: 'compare.examples',
  diffFile: 'compare.diff.file',
  seconds: 'compare.seconds',
} as const satisfies Record<keyof CompareSummary, string>;

const compareSideNames = { source: 'source', documents: 'document.count' } as const satisfies Record<
  keyof CompareSideSummary,
  string
>;

/** The counts of one document type (`compare.types`), keyed as the summary's own. */
const typeComparisonNames = {
  a: 'a.document.count',
  b: 'b.document.count',
  onlyInA: 'only.in.a.count',
  onlyInB: 'only.in.b.count',
  differing: 'differing.count',
} as const satisfies Record<keyof TypeComparison, string>;

const exampleNames = { onlyInA: 'only.in.a', onlyInB: 'only.in.b', differing: 'differing' } as const satisfies Record<
  keyof CompareSummary['examples'],
  string
>;

/** A comparison's summary (compare, migrate --verify) as printed: each field under its dotted name, seconds rounded. */
export function compareSummaryJson(summary: CompareSummary): Record<string, unknown> {
  const printed: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(summary) as [keyof CompareSummary, unknown][]) {
    const name = compareNames[key];
    if (key === 'a' || key === 'b') {
      const side = renamed(value as CompareSideSummary, compareSideNames);
      for (const [k, v] of Object.entries(side)) printed[`${name}.${k}`] = v;
    } else if (key === 'types') {
      const types: Record<string, unknown> = {};
      for (const [type, counts] of Object.entries(summary.types)) types[type] = renamed(counts, typeComparisonNames);
      printed[name] = types;
    } else if (key === 'examples') printed[name] = renamed(summary.examples, exampleNames);
    else if (key === 'seconds') printed[name] = roundSeconds(summary.seconds);
    else printed[name] = value;
  }
  return printed;
}

/** `value`'s fields under the names of `names`, in `value`'s order (a field without a name keeps its own). */
function renamed<T extends object>(value: T, names: { readonly [K in keyof T]-?: string }): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) out[(names as Record<string, string>)[key] ?? key] = v;
  return out;
}

/** A bench result as printed: each step's and the run's feed summary under their printed names. */
export function benchResultJson(result: BenchResult): Record<string, unknown> {
  return {
    ...result,
    steps: result.steps.map((step) => ({ ...step, summary: feedSummaryJson(step.summary) })),
    summary: feedSummaryJson(result.summary),
  };
}

/** What a summary holds beyond its figures: `slices`, every slice of a visit (`--verbose`). */
export interface SummaryDetail {
  slices?: boolean;
}

/**
 * An export's or a visit's summary under its printed names: the figures of this run, the slices counted (each one
 * listed only with `detail.slices`), and for a resumed export what the runs before it wrote.
 */
export function exportSummaryJson(
  summary: ExportSummary | VisitReport,
  detail: SummaryDetail = {},
): Record<string, unknown> {
  const seconds = Math.max(summary.seconds, 1e-9);
  return {
    'visit.ok': summary.ok,
    'visit.document.count': summary.documents,
    'visit.remove.count': summary.removes,
    'visit.seconds': roundSeconds(summary.seconds),
    'visit.document.rate': Math.round((summary.documents + summary.removes) / seconds),
    'visit.repeat.skipped.count': summary.slices.reduce((n, s) => n + s.repeatsSkipped, 0),
    'visit.retry.count': summary.slices.reduce((n, s) => n + s.retries, 0),
    'visit.slice.count': summary.slices.length,
    'visit.slice.failed.count': summary.slices.filter((s) => s.status === 'failed').length,
    'http.request.count': summary.slices.reduce((n, s) => n + s.requests, 0),
    'http.response.bytes': summary.bytes,
    'http.response.MBps': Number((summary.bytes / 1e6 / seconds).toFixed(2)),
    ...(summary.protocol !== undefined && { 'http.protocol': summary.protocol }),
    ...(summary.proxy !== undefined && { 'http.proxy': summary.proxy }),
    ...(summary.slices.some((s) => s.cluster !== undefined) && { 'visit.clusters': countsByCluster(summary.slices) }),
    ...('outputBytes' in summary && { 'output.bytes': summary.outputBytes, 'checkpoint.resumed': summary.resumed }),
    ...('documentsBefore' in summary &&
      summary.documentsBefore !== undefined && { 'checkpoint.document.count': summary.documentsBefore }),
    // What an increment (`--since` this summary) starts from, and where this one started.
    ...('startedAt' in summary && summary.startedAt !== undefined && { 'visit.started': summary.startedAt }),
    ...('fromTimestamp' in summary &&
      summary.fromTimestamp !== undefined && { 'visit.from.timestamp': summary.fromTimestamp }),
    ...(detail.slices === true && { slices: summary.slices }),
  };
}

/** Documents and removes per content cluster, of a visit that went through several (chains without a cluster are left out). */
export function countsByCluster(
  slices: ReadonlyArray<{ cluster?: string; documents: number; removes: number }>,
): Record<string, { documents: number; removes: number }> {
  const counts: Record<string, { documents: number; removes: number }> = {};
  for (const s of slices) {
    if (s.cluster === undefined) continue;
    const c = (counts[s.cluster] ??= { documents: 0, removes: 0 });
    c.documents += s.documents;
    c.removes += s.removes;
  }
  return counts;
}
