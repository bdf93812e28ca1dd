import { setTimeout as sleep } from 'node:timers/promises';
import { VespaBulkError } from '../core/errors.js';
import { checkDuration } from '../core/options-check.js';
import { configRequest, jsonObject } from './config-request.js';
import { applicationPath, resolveTarget, type DeployTarget } from './target.js';
import type { ConvergenceResult, SingleServiceConvergence } from './types.js';

/** What counts as converged for `getConvergence`. */
export interface ConvergenceQuery {
  /** Only converged when services run this engine version. */
  vespaVersion?: string;
}

/**
 * One look at serviceconverge: the wanted generation and what each service runs.
 * @example
 * ```ts
 * import { getConvergence } from 'vespa-bulk';
 *
 * const result = await getConvergence({ configUrl: 'http://127.0.0.1:19071' });
 * console.log(result.converged, result.wantedGeneration);
 * ```
 */
export async function getConvergence(target: DeployTarget, query: ConvergenceQuery = {}): Promise<ConvergenceResult> {
  const t = resolveTarget(target);
  const response = await configRequest(t, {
    step: 'converge',
    method: 'GET',
    path: `${applicationPath(t)}/serviceconverge`,
    query: { vespaVersion: query.vespaVersion },
  });
  return jsonObject<ConvergenceResult>('converge', response);
}

/**
 * Convergence of one service, `host:port` as listed by getConvergence. A service no longer in the application answers 410.
 * @example
 * ```ts
 * import { getServiceConvergence } from 'vespa-bulk';
 *
 * const service = await getServiceConvergence({ configUrl: 'http://127.0.0.1:19071' }, 'node1.example.com:19050');
 * console.log(service.converged);
 * ```
 */
export async function getServiceConvergence(target: DeployTarget, hostPort: string): Promise<SingleServiceConvergence> {
  const t = resolveTarget(target);
  const response = await configRequest(t, {
    step: 'converge',
    method: 'GET',
    path: `${applicationPath(t)}/serviceconverge/${encodeURIComponent(hostPort)}`,
  });
  return jsonObject<SingleServiceConvergence>('converge', response);
}

/** How long and how often `waitForConvergence` polls. */
export interface WaitForConvergenceOptions extends ConvergenceQuery {
  /** Give up after this long. */
  timeoutMs: number;
  /** Time between polls. Default 500 ms. */
  pollIntervalMs?: number;
  /** Also wait until the wanted generation is at least this (e.g. the one just activated). */
  generation?: number;
  /** Called with each poll's result (progress output). */
  onPoll?: (result: ConvergenceResult) => void;
  signal?: AbortSignal;
}

/**
 * Polls serviceconverge until every service runs the wanted generation. Throws VB_TIMEOUT with the last
 * generations seen when the time runs out; config server errors are thrown as they come.
 * @example
 * ```ts
 * import { activateSession, waitForConvergence } from 'vespa-bulk';
 *
 * const target = { configUrl: 'http://127.0.0.1:19071' };
 * const { application } = await activateSession(target, '42');
 * await waitForConvergence(target, { timeoutMs: 300_000, generation: application?.generation });
 * ```
 */
export async function waitForConvergence(
  target: DeployTarget,
  options: WaitForConvergenceOptions,
): Promise<ConvergenceResult> {
  checkDuration(options, 'timeoutMs');
  checkDuration(options, 'pollIntervalMs', true);
  const deadline = Date.now() + options.timeoutMs;
  const interval = options.pollIntervalMs ?? 500;
  for (;;) {
    const result = await getConvergence(target, options);
    options.onPoll?.(result);
    const done =
      result.converged && (options.generation === undefined || result.wantedGeneration >= options.generation);
    if (done) return result;
    const left = deadline - Date.now();
    if (left <= 0) {
      const behind = (result.services ?? [])
        .filter((s) => s.currentGeneration !== result.wantedGeneration)
        .map((s) => `${s.type} ${s.host}:${s.port} at ${s.currentGeneration}`);
      throw new VespaBulkError(
        'VB_TIMEOUT',
        `converge failed: services did not reach generation ${result.wantedGeneration} within ${Math.round(options.timeoutMs / 1000)} s (current generation ${result.currentGeneration}${behind.length > 0 ? `; behind: ${behind.join(', ')}` : ''})`,
      );
    }
    await sleep(Math.min(interval, left), undefined, { signal: options.signal });
  }
}

/**
 * Polls one service (`host:port`) until it runs the wanted generation. A service that left the application
 * (410) or any other refusal is thrown at once; running out of time is VB_TIMEOUT with the generations seen.
 * @example
 * ```ts
 * import { waitForServiceConvergence } from 'vespa-bulk';
 *
 * await waitForServiceConvergence({ configUrl: 'http://127.0.0.1:19071' }, 'node1.example.com:19050', { timeoutMs: 60_000 });
 * ```
 */
export async function waitForServiceConvergence(
  target: DeployTarget,
  hostPort: string,
  options: Omit<WaitForConvergenceOptions, 'onPoll' | 'vespaVersion'> & {
    onPoll?: (result: SingleServiceConvergence) => void;
  },
): Promise<SingleServiceConvergence> {
  checkDuration(options, 'timeoutMs');
  checkDuration(options, 'pollIntervalMs', true);
  const deadline = Date.now() + options.timeoutMs;
  const interval = options.pollIntervalMs ?? 500;
  for (;;) {
    const result = await getServiceConvergence(target, hostPort);
    options.onPoll?.(result);
    if (result.converged && (options.generation === undefined || result.wantedGeneration >= options.generation))
      return result;
    const left = deadline - Date.now();
    if (left <= 0) {
      throw new VespaBulkError(
        'VB_TIMEOUT',
        `converge failed: service ${result.host} did not reach generation ${result.wantedGeneration} within ${Math.round(options.timeoutMs / 1000)} s (it runs generation ${result.currentGeneration})`,
      );
    }
    await sleep(Math.min(interval, left), undefined, { signal: options.signal });
  }
}
