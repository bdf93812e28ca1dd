/**
 * Soak: a long feed and a long sliced visit against a simulator that misbehaves about one request in five
 * (errors, cut connections, stalls, answers that are not JSON, responses cut short, cut streams) and is
 * killed and restarted with its data once per feed round. Checks after every round and every visit that
 * nothing was lost or duplicated, and prints what it tried.
 *
 *   npx tsx benchmarks/soak/run.ts [--seconds 120]
 *
 * Bounded: feed rounds for about 55% of --seconds, visits for the rest; a round or visit under way when the
 * time is up is finished. Loopback only; one process (the harness needs the simulator's store). Exit code 1
 * if anything was lost or duplicated.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { feed } from '../../src/feed/feeder.js';
import { type FeedSummary } from '../../src/feed/stats.js';
import {
  DocumentStore,
  startDocumentServer,
  type DocumentServer,
  type FaultSettings,
} from '../../src/simulator/document-api/document-server.js';
import { visit } from '../../src/visit/visit.js';
import { expectedDocuments, roundOperations, sameDocuments, type Op } from './corpus.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '120' },
    'round-operations': { type: 'string', default: '6000' },
  },
});
const seconds = Number(values.seconds);
const roundPuts = Number(values['round-operations']);
if (!(seconds > 0) || !(roundPuts > 0)) throw new Error('--seconds and --round-operations must be positive');

const quiet: Partial<FaultSettings> = {
  errorRate: 0,
  closeRate: 0,
  stallRate: 0,
  garbageRate: 0,
  truncateRate: 0,
  cutStreamAfterDocuments: 0,
  feedBlock: false,
};
/** About 20% of feed requests meet a fault. Stalls are few: each holds a pipelined connection until the request timeout. */
const feedFaults: Partial<FaultSettings> = {
  errorRate: 0.09,
  errorStatuses: [429, 502, 503, 504, 507],
  closeRate: 0.03,
  stallRate: 0.004,
  garbageRate: 0.04,
  truncateRate: 0.04,
};
/** About 20% of visit requests meet a fault, and every stream is cut after 500 documents. */
const visitFaults: Partial<FaultSettings> = {
  errorRate: 0.1,
  errorStatuses: [429, 502, 503, 504],
  stallRate: 0.03,
  garbageRate: 0.07,
  cutStreamAfterDocuments: 500,
};

const dir = mkdtempSync(join(tmpdir(), 'vb-soak-'));
const started = performance.now();
const elapsed = (): number => (performance.now() - started) / 1000;
const log = (line: string): void => void process.stderr.write(`[${elapsed().toFixed(1).padStart(6)} s] ${line}\n`);

const store = new DocumentStore(['content']);
let server: DocumentServer = await startDocumentServer({ port: 0, store, visitChunkDocuments: 200 });
const port = server.port;
const injected: Record<string, number> = {};
/** Faults injected by servers since killed, plus the live one's. */
function injectedNow(): Record<string, number> {
  const now = { ...injected };
  for (const [k, v] of Object.entries(server.faults.injected())) now[k] = (now[k] ?? 0) + v;
  return now;
}

let kills = 0;
/** Kills the simulator (every connection destroyed at once) and starts it again on its port with its store. */
async function killAndRestart(downMs: number): Promise<void> {
  const settings = server.faults.get();
  for (const [k, v] of Object.entries(server.faults.injected())) injected[k] = (injected[k] ?? 0) + v;
  await server.close();
  kills++;
  await new Promise((r) => setTimeout(r, downMs));
  server = await startDocumentServer({ port, store, visitChunkDocuments: 200, faults: settings });
}

interface Totals {
  operations: number;
  ok: number;
  failed: number;
  requests: number;
  retries: number;
  lost: number;
  wrong: number;
  extra: number;
  seconds: number;
}
const feedTotals: Totals = {
  operations: 0,
  ok: 0,
  failed: 0,
  requests: 0,
  retries: 0,
  lost: 0,
  wrong: 0,
  extra: 0,
  seconds: 0,
};

/** Feeds one round and checks it: successes plus failure output equal the input; the store equals what succeeded. */
async function feedRound(
  name: string,
  ops: Op[],
  withKill: boolean,
): Promise<{ summary: FeedSummary; seconds: number }> {
  const input = join(dir, `${name}.jsonl`);
  writeFileSync(input, `${ops.map((o) => JSON.stringify(o)).join('\n')}\n`);
  const failures = join(dir, `${name}.failures.jsonl`);
  let killing: Promise<void> | undefined;
  const killer = withKill
    ? setTimeout(() => void (killing = killAndRestart(1000)), 500 + Math.random() * 2500)
    : undefined;
  const t0 = performance.now();
  const summary = await feed(input, {
    endpoint: server.url,
    failures,
    requestTimeoutMs: 1000,
    halfOpenSeconds: 0.5,
    maxFailureSeconds: 60,
    retryPolicy: { maxDelayMs: 2000, feedBlockMaxDelayMs: 2000 },
  });
  const roundSeconds = (performance.now() - t0) / 1000;
  clearTimeout(killer);
  await killing;
  const failedLines = existsSync(failures)
    ? readFileSync(failures, 'utf8')
        .split('\n')
        .filter((l) => l !== '')
    : [];
  const failedSet = new Set(failedLines);
  const applied = ops.filter((o) => !failedSet.has(JSON.stringify(o)));
  const expected = expectedDocuments(applied);
  const actual = new Map<string, Record<string, unknown>>();
  for (const op of ops) {
    if (!('put' in op)) continue;
    const d = store.get(op.put);
    if (d !== undefined) actual.set(op.put, d.fields);
  }
  const diff = sameDocuments(expected, actual);
  const ok = summary.ok;
  feedTotals.operations += ops.length;
  feedTotals.ok += ok;
  feedTotals.failed += failedLines.length;
  feedTotals.requests += summary.requests;
  feedTotals.retries += summary.retries;
  feedTotals.lost += diff.missing + Math.max(0, ops.length - ok - failedLines.length);
  feedTotals.wrong += diff.different;
  feedTotals.extra += diff.extra;
  feedTotals.seconds += roundSeconds;
  log(
    `feed ${name}: ${ops.length} operations, ok ${ok}, in failure output ${failedLines.length}, ${summary.requests} requests, ` +
      `${summary.retries} retries, ${(ops.length / roundSeconds).toFixed(0)} ops/s; missing ${diff.missing}, wrong ${diff.different}, extra ${diff.extra}` +
      (summary.abandoned > 0 ? `, ABANDONED ${summary.abandoned}` : ''),
  );
  return { summary, seconds: roundSeconds };
}

// Baseline: the same kind of round with no faults, for the throughput ratio.
const baseline = await feedRound('baseline', roundOperations(roundPuts, 'baseline'), false);
const baselineRate = baseline.summary.operations / baseline.seconds;
const baselineTotals = { ...feedTotals };
for (const k of Object.keys(feedTotals) as (keyof Totals)[]) feedTotals[k] = 0;
for (const [k, v] of Object.entries(server.faults.injected())) injected[k] = (injected[k] ?? 0) - v; // none expected; keeps counts honest

server.faults.set(feedFaults);
const feedUntil = seconds * 0.55;
let round = 0;
while (elapsed() < feedUntil || round === 0) {
  await feedRound(`round-${round}`, roundOperations(roundPuts, `r${round}`), true);
  round++;
}
const feedInjected = injectedNow();

// Visits of everything stored, sliced, streamed and paged in turn, under visit faults.
server.faults.set({ ...quiet, ...visitFaults });
const expectedIds = new Set(store.all().map((d) => d.id));
const visitTotals = {
  visits: 0,
  documents: 0,
  lost: 0,
  duplicates: 0,
  requests: 0,
  retries: 0,
  failedSlices: 0,
  seconds: 0,
};
let visitRound = 0;
while (elapsed() < seconds || visitRound === 0) {
  const stream = visitRound % 2 === 0;
  const slices = visitRound % 3 === 0 ? 8 : 4;
  const t0 = performance.now();
  const v = visit({
    endpoint: server.url,
    namespace: 'soak',
    documentType: 'music',
    slices,
    stream,
    ...(stream ? {} : { wantedDocumentCount: 500 }),
    requestTimeoutMs: 1000,
    retry: { baseDelayMs: 20, maxDelayMs: 500, maxRetries: 30 },
  });
  const seen = new Set<string>();
  let duplicates = 0;
  let documents = 0;
  try {
    for await (const d of v) {
      documents++;
      if (seen.has(d.id)) duplicates++;
      else seen.add(d.id);
    }
  } catch (err) {
    log(`visit ${visitRound}: ${(err as Error).message}`);
  }
  const report = await v.report.catch(() => undefined);
  let lost = 0;
  for (const id of expectedIds) if (!seen.has(id)) lost++;
  const visitSeconds = (performance.now() - t0) / 1000;
  visitTotals.visits++;
  visitTotals.documents += documents;
  visitTotals.lost += lost;
  visitTotals.duplicates += duplicates;
  visitTotals.requests += report?.slices.reduce((n, s) => n + s.requests, 0) ?? 0;
  visitTotals.retries += report?.slices.reduce((n, s) => n + s.retries, 0) ?? 0;
  visitTotals.failedSlices += report?.slices.filter((s) => s.status !== 'finished').length ?? slices;
  visitTotals.seconds += visitSeconds;
  log(
    `visit ${visitRound} (${slices} slices, ${stream ? 'streamed' : 'paged'}): ${documents} documents, lost ${lost}, duplicates ${duplicates}, ${(documents / visitSeconds).toFixed(0)} docs/s`,
  );
  visitRound++;
}
const allInjected = injectedNow();
const visitInjected: Record<string, number> = {};
for (const [k, v] of Object.entries(allInjected))
  if (v - (feedInjected[k] ?? 0) > 0) visitInjected[k] = v - (feedInjected[k] ?? 0);
await server.close();
rmSync(dir, { recursive: true, force: true });

const sum = (o: Record<string, number>): number => Object.values(o).reduce((a, b) => a + b, 0);
const feedLost = feedTotals.lost + feedTotals.wrong + feedTotals.extra;
const result = {
  seconds: Number(elapsed().toFixed(1)),
  feed: {
    rounds: round,
    operations: feedTotals.operations,
    ok: feedTotals.ok,
    inFailureOutput: feedTotals.failed,
    requests: feedTotals.requests,
    retries: feedTotals.retries,
    simulatorKills: kills,
    faultsInjected: feedInjected,
    faultsInjectedTotal: sum(feedInjected),
    faultShareOfRequests: Number((sum(feedInjected) / Math.max(1, feedTotals.requests)).toFixed(3)),
    opsPerSecond: Math.round(feedTotals.operations / Math.max(feedTotals.seconds, 1e-9)),
    baselineOpsPerSecond: Math.round(baselineRate),
    throughputRatioToBaseline: Number(
      (feedTotals.operations / Math.max(feedTotals.seconds, 1e-9) / baselineRate).toFixed(3),
    ),
    baselineLost: baselineTotals.lost + baselineTotals.wrong + baselineTotals.extra,
    lost: feedTotals.lost,
    wrongContent: feedTotals.wrong,
    unexpected: feedTotals.extra,
  },
  visit: {
    visits: visitTotals.visits,
    documentsInStore: expectedIds.size,
    documentsVisited: visitTotals.documents,
    requests: visitTotals.requests,
    retries: visitTotals.retries,
    failedSlices: visitTotals.failedSlices,
    faultsInjected: visitInjected,
    faultsInjectedTotal: sum(visitInjected),
    faultShareOfRequests: Number((sum(visitInjected) / Math.max(1, visitTotals.requests)).toFixed(3)),
    lost: visitTotals.lost,
    duplicates: visitTotals.duplicates,
  },
  nothingLost: feedLost === 0 && visitTotals.lost === 0 && visitTotals.duplicates === 0,
};
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
process.stdout.write(
  `soak: feed ${feedTotals.operations} operations (${sum(feedInjected)} faults injected, ${kills} kills), ` +
    `visit ${visitTotals.documents} documents in ${visitTotals.visits} visits (${sum(visitInjected)} faults injected): ` +
    `lost = ${feedLost + visitTotals.lost}, duplicates = ${visitTotals.duplicates}\n`,
);
if (!result.nothingLost) process.exitCode = 1;
