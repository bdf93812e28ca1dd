/**
 * A flag that may be given several times (`--header A --header B`). yargs' `array: true` would also swallow
 * the positionals that follow the flag (`--header 'A: b' music/song` would take music/song as a header), so
 * repeated flags are plain strings gathered into a list.
 */
export function repeatable(describe: string, extra: { group?: string } = {}) {
  return {
    type: 'string' as const,
    describe,
    ...extra,
    coerce: (value: unknown): string[] => (value === undefined ? [] : ([] as unknown[]).concat(value).map(String)),
  };
}
