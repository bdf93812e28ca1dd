import { VespaBulkError } from '../core/errors.js';

/**
 * The load profiles of `bench` and the judgement of a step. Pure: no I/O.
 *
 * A step is HELD when all three hold: the achieved rate (operations finished per second of the step, drain
 * included) is at least `minAchievedShare` (95 %) of the asked rate; the p99 operation latency, counted from
 * each operation's due time, is at most the SLO; and the share of answers that were 429 is at most the
 * allowed share. The knee is the first step not held.
 */
export const minAchievedShare = 0.95;

/** What a step is judged by. */
export interface HeldCriteria {
  /** p99 operation latency bound, in ms. */
  sloMs: number;
  /** Highest share of answers that may be 429 (0..1). */
  max429Share: number;
}

/** The figures of one step that the judgement reads. */
export interface StepFigures {
  targetRate: number;
  achievedRate: number;
  p99Ms: number;
  throttledShare: number;
}

/** Whether a step held its rate: see the module comment. */
export function isHeld(step: StepFigures, criteria: HeldCriteria): boolean {
  return (
    step.achievedRate >= minAchievedShare * step.targetRate &&
    step.p99Ms <= criteria.sloMs &&
    step.throttledShare <= criteria.max429Share
  );
}

/** The highest asked rate among held steps; undefined when none held. */
export function highestHeldRate(steps: readonly { targetRate?: number; held?: boolean }[]): number | undefined {
  let best: number | undefined;
  for (const s of steps)
    if (s.held === true && s.targetRate !== undefined && (best === undefined || s.targetRate > best))
      best = s.targetRate;
  return best;
}

/** `1000,2000,4000` → the rates, each a number > 0. */
export function parseRates(text: string): number[] {
  const rates = text.split(',').map((r) => r.trim());
  return rates.map((r) => {
    const n = Number(r);
    if (r === '' || !Number.isFinite(n) || n <= 0)
      throw new VespaBulkError('VB_USAGE', `--rate: '${r}' is not a rate (operations per second > 0) in '${text}'`);
    return n;
  });
}

/** `1000:8000:1000` (from:to:step) → 1000, 2000, ..., 8000. */
export function parseRamp(text: string): number[] {
  const parts = text.split(':').map(Number);
  const [from, to, step] = parts;
  if (parts.length !== 3 || !parts.every((n) => Number.isFinite(n) && n > 0) || from > to) {
    throw new VespaBulkError(
      'VB_USAGE',
      `--ramp: expected FROM:TO:STEP with 0 < FROM <= TO and STEP > 0, not '${text}'`,
    );
  }
  const rates: number[] = [];
  for (let r = from; r <= to + 1e-9; r += step) rates.push(r);
  if (rates.length > 1000)
    throw new VespaBulkError('VB_USAGE', `--ramp: ${text} makes ${rates.length} steps; at most 1000`);
  return rates;
}
