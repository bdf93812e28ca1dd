/**
 * Durations as the document API writes them in query parameters (`timeout`, `timeChunk`): a number with a unit.
 * Pure.
 */

const msPerUnit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

/** What the service reads: a number (`5`, `0.5`, `.5`) with an optional unit (ms, s, m, h; seconds when left out). */
const servicePattern = /^\s*(\d+(?:\.\d*)?|\.\d+)\s*(ms|s|m|h)?\s*$/i;

/**
 * What this client sends: a number with unit `s` or `ms` (`60s`, `500ms`), the form every Vespa version
 * documents, checked locally so a typo fails before a long visit starts rather than as a 400 from the service.
 */
const clientPattern = /^\d+(\.\d+)?(ms|s)$/;

/** Milliseconds of a duration as the service reads it (`5s`, `1000ms`, `1.5m`, `2h`, `30`), or undefined. */
export function parseDurationMs(text: string): number | undefined {
  const match = servicePattern.exec(text);
  if (!match) return undefined;
  const unit = (match[2] ?? 's').toLowerCase() as keyof typeof msPerUnit;
  return Math.round(Number(match[1]) * msPerUnit[unit]);
}

/** Whether `text` is a duration in the form this client sends (`60s`, `500ms`). */
export function isServerDuration(text: string): boolean {
  return clientPattern.test(text);
}
