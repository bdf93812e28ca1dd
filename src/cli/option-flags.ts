import { VespaBulkError } from '../core/errors.js';
import { OptionError } from '../core/options-check.js';

/**
 * The one place library option names become flag names in messages: the library checks options
 * (src/core/options-check.ts) and names them as a library caller knows them; a CLI user should read the flag.
 * An option missing from a table is named by its kebab-case form (`maxRetries` → `--max-retries`).
 */
/** Names every command uses alike; main.ts names the options of any command's OptionError with these. */
export const commonFlags: Record<string, string> = {
  endpoint: '--target',
  waitSeconds: '--wait',
  timeoutSeconds: '--timeout',
};

export const feedFlags: Record<string, string> = {
  deadlineMs: '--timeout',
  tracelevel: '--trace',
};

export const visitFlags: Record<string, string> = {
  sliceIds: '--slice-id',
  destination: '--to-endpoint',
  serviceTimeout: '--timeout',
  outputDir: '--output-dir',
  fromTimestamp: '--from',
  toTimestamp: '--to',
};

/**
 * Runs `call` (a check, or a library call that checks its options first) and rethrows its OptionError, also
 * a rejection, with the flag names of `flags`.
 */
export function withFlagNames<T>(flags: Record<string, string>, call: () => T): T {
  const rename = (err: unknown): never => {
    if (!(err instanceof OptionError)) throw err;
    throw new VespaBulkError(
      'VB_USAGE',
      err.messageWith((option) => flagName(option, flags)),
      { cause: err },
    );
  };
  try {
    const result = call();
    return (result instanceof Promise ? result.catch(rename) : result) as T;
  } catch (err) {
    return rename(err);
  }
}

/** The flag of a library option: from `flags`, then `commonFlags`, else the option's kebab-case form. */
export function flagName(option: string, flags: Record<string, string> = commonFlags): string {
  return flags[option] ?? commonFlags[option] ?? `--${option.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}
