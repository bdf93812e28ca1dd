import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { VespaBulkError } from '../core/errors.js';
import type { DeployTarget } from '../deploy/target.js';
import { Feeder } from '../feed/feeder.js';
import type { FeedOptions } from '../feed/options.js';
import type { FeedSummary } from '../feed/stats.js';
import type { DocumentModel } from '../schema/document-model.js';
import { modelFromConfigServer, modelFromPackage } from '../deploy/load-model.js';
import { highestHeldRate, isHeld, minAchievedShare } from './load-profile.js';
import {
  OperationGenerator,
  parseMix,
  schemaDocuments,
  templateDocuments,
  type DocumentMaker,
  type Mix,
} from './operations.js';
import { Random } from './random.js';

/** The transport and retry options of a bench, as `feed()` takes them. */
export type BenchFeedOptions = Pick<
  FeedOptions,
  | 'endpoint'
  | 'headers'
  | 'connections'
  | 'pipelining'
  | 'protocol'
  | 'maxStreams'
  | 'onProtocol'
  | 'inflight'
  | 'maxInflight'
  | 'deadlineMs'
  | 'requestTimeoutMs'
  | 'route'
  | 'compression'
  | 'maxRetries'
  | 'retryPolicy'
  | 'maxFailureSeconds'
  | 'dryRun'
  | 'tls'
  | 'proxy'
  | 'proxyTls'
  | 'signal'
  | 'failures'
  | 'onResult'
>;

/** Options of `bench()`. The documents come from exactly one of `app`, `configUrl`, `model` or `template`. */
export interface BenchOptions extends BenchFeedOptions {
  /** Application package (a directory, a .zip or a gzipped tar): documents are generated to its schemas. */
  app?: string;
  /** Config server: documents are generated to the schemas of its active application (`configTarget` names it). */
  configUrl?: string;
  /** Tenant, application and zone on the config server; with `configUrl`. */
  configTarget?: Omit<DeployTarget, 'configUrl'>;
  /** A document model already read (library callers; see `documentModelOf`). */
  model?: DocumentModel;
  /** A template put operation (`{"put": id, "fields": {...}}`) or the path of a JSON file holding one; varied per document. */
  template?: string | object;
  /** With a schema: only these document types (default: every type of the package, in turn). */
  documentTypes?: string[];
  /** Namespace of the generated ids with a schema. Default `bench`. */
  namespace?: string;
  /** How long to send, in seconds (per step with several rates: see `stepSeconds`). Default 60 unless `count` is given. */
  durationSeconds?: number;
  /** How many operations to send (per step with several rates). */
  count?: number;
  /** Puts, updates and removes by weight, e.g. `{put: 80, update: 15, remove: 5}` or `'put=80,update=15,remove=5'`. Default puts only. */
  mix?: Mix | string;
  /**
   * Load profile. Undefined: as fast as the cluster takes (the adaptive in-flight limit). One rate: a fixed
   * arrival rate, open loop, latency counted from each operation's due time (see `FeedOptions.arrivalRate`).
   * Several: steps at each rate in turn for `stepSeconds`, stopping at the first step not held (see `isHeld`).
   */
  rate?: number | number[];
  /** Length of each step with several rates, in seconds. Default 30. */
  stepSeconds?: number;
  /** p99 operation latency a step must stay under to be held, in ms. Default 100. */
  sloMs?: number;
  /** Share of answers (0..1) that may be 429 in a held step. Default 0.01. */
  max429Share?: number;
  /** Seed of the generated values: the same seed sends the same documents. Default: the clock. */
  seed?: number;
  /** Called when a step (the whole run, without steps) starts, with the feeder running it (for a progress line). */
  onStepStart?: (step: { index: number; name: string; targetRate?: number }, feeder: Feeder) => void;
  /** Called with each step's result as it ends. */
  onStepEnd?: (step: BenchStep) => void;
}

/** One step of a bench (the whole run, without steps), with what a report draws. */
export interface BenchStep {
  name: string;
  /** The asked rate, operations per second; absent for the adaptive profile. */
  targetRate?: number;
  /** ISO times. */
  startedAt: string;
  endedAt: string;
  seconds: number;
  operations: number;
  ok: number;
  failed: number;
  /** Operations finished per second of the step, drain included. */
  achievedRate: number;
  p50Ms: number;
  /** p99 of the operation latency (from the due time with a rate). */
  p99Ms: number;
  /** Share of the answers that were 429. */
  throttledShare: number;
  /** With a rate: whether the step held it (see `isHeld`). */
  held?: boolean;
  summary: FeedSummary;
}

/** What `bench()` resolves with. */
export interface BenchResult {
  profile: 'adaptive' | 'rate' | 'steps';
  startedAt: string;
  endedAt: string;
  /** One per step run; one in all without steps. */
  steps: BenchStep[];
  /** With steps: the highest asked rate held; absent when none held. */
  highestHeldRate?: number;
  /** With a rate: what "held" was judged by. */
  criteria?: { sloMs: number; max429Share: number; minAchievedShare: number };
  /** Whether the steps stopped at one not held (past the knee) rather than at the last rate. */
  stoppedPastKnee?: boolean;
  /** The run's summary (the last step's with steps). */
  summary: FeedSummary;
  /**
   * Where the documents this run wrote stay (absent with `dryRun`): a bench does not delete them, as
   * vespa-feed-client's and `vespa feed`'s benchmarks do not, since a delete is load of its own after the
   * measurement; its ids are `id:<namespace>:<documentType>::<runTag>-<n>`.
   */
  written?: { runTag: string; places: Array<{ namespace: string; documentType: string }> };
}

/** Operations per chunk handed to the feeder. */
const chunkOperations = 64;

/**
 * Benchmarks a cluster with generated operations shaped like the application's schemas or a template
 * document, under one of three load profiles (see `BenchOptions.rate`), and resolves with each step's
 * throughput and latency. Real writes unless `dryRun`. Every generated document is one the package's
 * document parser accepts.
 * @example
 * ```ts
 * import { bench } from 'vespa-bulk/bench';
 *
 * const result = await bench({ endpoint: 'http://127.0.0.1:8080', app: 'app/', rate: [1000, 2000, 4000], stepSeconds: 30, sloMs: 50 });
 * console.log(result.highestHeldRate, result.steps.map((s) => [s.targetRate, s.p99Ms, s.held]));
 * ```
 */
export async function bench(options: BenchOptions): Promise<BenchResult> {
  const sources = [options.app, options.configUrl, options.model, options.template].filter(
    (s) => s !== undefined,
  ).length;
  if (sources !== 1)
    throw new VespaBulkError(
      'VB_USAGE',
      'bench needs exactly one of an application package (--app), a config server (--config-url) or a template document (--template)',
    );
  const rates = askedRates(options.rate);
  for (const r of rates)
    if (!(typeof r === 'number' && Number.isFinite(r) && r > 0))
      throw new VespaBulkError('VB_USAGE', `rate must be a number > 0 (operations per second), not ${String(r)}`);
  for (const [name, v] of [
    ['durationSeconds', options.durationSeconds],
    ['stepSeconds', options.stepSeconds],
    ['sloMs', options.sloMs],
  ] as const) {
    if (v !== undefined && !(Number.isFinite(v) && v > 0))
      throw new VespaBulkError('VB_USAGE', `${name} must be a number > 0, not ${v}`);
  }
  if (options.count !== undefined && !(Number.isInteger(options.count) && options.count >= 1))
    throw new VespaBulkError('VB_USAGE', `count must be an integer >= 1, not ${options.count}`);
  const max429Share = options.max429Share ?? 0.01;
  if (!(max429Share >= 0 && max429Share <= 1))
    throw new VespaBulkError('VB_USAGE', `max429Share must be between 0 and 1, not ${max429Share}`);
  const mix = typeof options.mix === 'string' ? parseMix(options.mix) : options.mix;
  const random = new Random(options.seed);
  const runTag = random.letters(6);
  const maker = await documentMaker(options, random, runTag);
  const generator = new OperationGenerator(maker, random, mix);
  const criteria = { sloMs: options.sloMs ?? 100, max429Share, minAchievedShare };
  const profile = profileOf(rates);
  const startedAt = new Date().toISOString();
  const steps: BenchStep[] = [];
  let stoppedPastKnee = false;
  const plan = rates.length === 0 ? [undefined] : rates;
  for (let index = 0; index < plan.length; index++) {
    const rate = plan[index];
    const seconds =
      profile === 'steps' ? (options.stepSeconds ?? options.durationSeconds ?? 30) : options.durationSeconds;
    const name = stepName(profile, index, rate);
    const step = await runStep(options, generator, { index, name, rate, seconds, count: options.count });
    if (rate !== undefined)
      step.held = isHeld(
        { targetRate: rate, achievedRate: step.achievedRate, p99Ms: step.p99Ms, throttledShare: step.throttledShare },
        criteria,
      );
    steps.push(step);
    options.onStepEnd?.(step);
    if (options.signal?.aborted) break;
    if (profile === 'steps' && step.held === false) {
      stoppedPastKnee = true;
      break;
    }
  }
  const result: BenchResult = {
    profile,
    startedAt,
    endedAt: new Date().toISOString(),
    steps,
    summary: steps[steps.length - 1].summary,
  };
  if (options.dryRun !== true) result.written = { runTag, places: maker.places.map((p) => ({ ...p })) };
  if (profile !== 'adaptive') result.criteria = criteria;
  if (profile === 'steps') {
    const best = highestHeldRate(steps);
    if (best !== undefined) result.highestHeldRate = best;
    result.stoppedPastKnee = stoppedPastKnee;
  }
  return result;
}

/** The rates `rate` asks for, in order: none for the adaptive profile. */
function askedRates(rate: BenchOptions['rate']): number[] {
  if (rate === undefined) return [];
  return Array.isArray(rate) ? rate : [rate];
}

/** No asked rate is the adaptive profile, one a fixed rate, more a series of steps. */
function profileOf(rates: readonly number[]): BenchResult['profile'] {
  if (rates.length === 0) return 'adaptive';
  return rates.length === 1 ? 'rate' : 'steps';
}

function stepName(profile: BenchResult['profile'], index: number, rate: number | undefined): string {
  switch (profile) {
    case 'steps':
      return `step ${index + 1} at ${rate}/s`;
    case 'rate':
      return `${rate}/s`;
    case 'adaptive':
      return 'adaptive';
  }
}

async function documentMaker(options: BenchOptions, random: Random, runTag: string): Promise<DocumentMaker> {
  if (options.template !== undefined) {
    let template: unknown = options.template;
    if (typeof template === 'string') {
      const path = template;
      try {
        template = JSON.parse(readFileSync(path, 'utf8'));
      } catch (err) {
        throw new VespaBulkError('VB_USAGE', `cannot read the template '${path}': ${(err as Error).message}`, {
          cause: err,
        });
      }
    }
    return templateDocuments(template, random, runTag);
  }
  const model =
    options.model ??
    (options.app !== undefined
      ? await modelFromPackage(options.app)
      : await modelFromConfigServer({ ...options.configTarget, configUrl: options.configUrl }));
  return schemaDocuments(model, random, {
    namespace: options.namespace ?? 'bench',
    ...(options.documentTypes !== undefined && { documentTypes: options.documentTypes }),
    runTag,
  });
}

interface StepPlan {
  index: number;
  name: string;
  rate: number | undefined;
  seconds: number | undefined;
  count: number | undefined;
}

async function runStep(options: BenchOptions, generator: OperationGenerator, plan: StepPlan): Promise<BenchStep> {
  const { rate } = plan;
  // A rate with a duration asks for rate x duration operations; the duration also bounds how long they are
  // generated, so a cluster that cannot keep up ends the step on time (what it did not take is missing
  // from the achieved rate) instead of stretching it.
  const seconds = plan.seconds ?? (plan.count === undefined ? 60 : undefined);
  let count = plan.count;
  if (rate !== undefined && seconds !== undefined)
    count = Math.min(count ?? Number.POSITIVE_INFINITY, Math.max(1, Math.round(rate * seconds)));
  const {
    onStepStart,
    onStepEnd: _end,
    app: _a,
    configUrl: _c,
    configTarget: _t,
    model: _m,
    template: _tp,
    documentTypes: _d,
    namespace: _n,
    durationSeconds: _s,
    count: _k,
    mix: _x,
    rate: _r,
    stepSeconds: _ss,
    sloMs: _slo,
    max429Share: _max,
    seed: _seed,
    ...feedOptions
  } = options;
  const feeder = new Feeder({
    ...feedOptions,
    failures: options.failures ?? false,
    checkpoint: false,
    ...(rate !== undefined && { arrivalRate: rate }),
  });
  onStepStart?.({ index: plan.index, name: plan.name, ...(rate !== undefined && { targetRate: rate }) }, feeder);
  const started = new Date();
  let endAt = Number.POSITIVE_INFINITY;
  function* chunks(): Generator<Buffer> {
    if (seconds !== undefined) endAt = performance.now() + seconds * 1000;
    let sent = 0;
    while (sent < (count ?? Number.POSITIVE_INFINITY) && performance.now() < endAt) {
      let lines = '';
      const n = Math.min(chunkOperations, (count ?? Number.POSITIVE_INFINITY) - sent);
      for (let i = 0; i < n; i++) lines += `${generator.next()}\n`;
      sent += n;
      yield Buffer.from(lines);
    }
  }
  const outcome = await feeder.run(Readable.from(chunks(), { objectMode: false }));
  if (outcome.unreachable !== undefined) throw outcome.unreachable;
  const s = outcome.summary;
  const finished = s.ok + s.errors;
  const responses = s.responses;
  return {
    name: plan.name,
    ...(rate !== undefined && { targetRate: rate }),
    startedAt: started.toISOString(),
    endedAt: new Date().toISOString(),
    seconds: s.seconds,
    operations: s.operations,
    ok: s.ok,
    failed: s.errors,
    achievedRate: Number((finished / Math.max(1e-6, s.seconds)).toFixed(3)),
    p50Ms: s.operationLatencyP50Ms,
    p99Ms: s.operationLatencyP99Ms,
    throttledShare: responses === 0 ? 0 : Number((s.throttled / responses).toFixed(5)),
    summary: s,
  };
}
