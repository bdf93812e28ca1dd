/**
 * Exit codes: 0 all succeeded, 1 some failed (and is accounted for), 2 bad usage; after a stop by a signal,
 * 128 + its number, as shells report a process killed by it (130 Ctrl-C, 143 SIGTERM), so a script can tell
 * an interrupted run from a failed one.
 */
export const exitCodes = { ok: 0, failed: 1, usage: 2, interrupted: 130, terminated: 143 } as const;

export function exitCodeOfSignal(signal: NodeJS.Signals): number {
  return signal === 'SIGTERM' ? exitCodes.terminated : exitCodes.interrupted;
}

/** The `--help` epilog line of the commands that do not say more about their exit codes. */
export const exitCodesEpilog =
  'Exit codes: 0 all succeeded, 1 something failed (and is accounted for), 2 bad usage, 130 stopped by Ctrl-C (SIGINT), 143 by SIGTERM.';
