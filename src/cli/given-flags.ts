/**
 * Which flags a user gave, as opposed to those yargs filled in with their defaults: the run's parameters (stats
 * file, report) list what was asked for, not every default ("--speedtest-duration 60" on a plain feed).
 */
const defaulted = Symbol('flags that took their default');

type Marked = Record<string, unknown> & { [defaulted]?: ReadonlySet<string> };

/** Records, on argv itself (under a symbol: invisible to the commands' own reading of it), the flags that took their default. */
export function markDefaulted(argv: Record<string, unknown>, keys: Iterable<string>): void {
  Object.defineProperty(argv, defaulted, { value: new Set(keys), enumerable: false });
}

/** Whether a flag took its default (false when argv was not marked: then every flag counts as given). */
export function tookDefault(argv: Record<string, unknown>, key: string): boolean {
  return (argv as Marked)[defaulted]?.has(key) ?? false;
}
