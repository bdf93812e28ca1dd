import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Waits `ms`, or less if `signal` aborts first (a retry wait of many seconds must not hold up a stop).
 * Resolves true when the whole wait passed, false when it was cut short: the retry loops stop on false.
 */
export async function sleepUnlessAborted(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  try {
    await sleep(ms, undefined, signal === undefined ? undefined : { signal });
    return true;
  } catch (err) {
    if (signal?.aborted) return false;
    throw err;
  }
}
