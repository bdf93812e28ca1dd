import { VespaBulkError } from '../core/errors.js';

/**
 * `--from`/`--to` values into the microseconds since epoch that `fromTimestamp`/`toTimestamp` take. Accepts
 * epoch seconds (with a fraction), `<n>ms`/`<n>us` epoch values, and ISO 8601 dates (a date without a zone is
 * UTC, so one command gives the same range on every machine). Pure.
 */
export function parseTimeBound(text: string, flag = '--from'): bigint {
  const t = text.trim();
  // µs written as an escape: the single executable carries its bundle in ASCII (src/cli/sea-main.ts).
  const unit = /^(\d+)(ms|us|\u00b5s)$/.exec(t);
  if (unit) return unit[2] === 'ms' ? BigInt(unit[1]) * 1000n : BigInt(unit[1]);
  const seconds = /^(\d+)(?:\.(\d{1,6}))?$/.exec(t);
  if (seconds) {
    const fraction = (seconds[2] ?? '').padEnd(6, '0');
    return BigInt(seconds[1]) * 1_000_000n + BigInt(fraction === '' ? '0' : fraction);
  }
  const iso = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.(\d{1,6}))?)?)(Z|[+-]\d{2}:?\d{2})?)?$/.exec(t);
  if (iso) {
    const [, date, time, fraction, zone] = iso;
    const withSeconds = wholeSeconds(time);
    const ms = Date.parse(`${date}T${withSeconds}${zone ?? 'Z'}`);
    if (!Number.isNaN(ms)) {
      const micros = BigInt((fraction ?? '').padEnd(6, '0') || '0');
      return BigInt(ms) * 1000n + micros;
    }
  }
  throw new VespaBulkError(
    'VB_USAGE',
    `${flag} '${text}': expected epoch seconds (e.g. 1700000000 or 1700000000.5), '<n>ms', or an ISO date (2024-01-31 or 2024-01-31T12:00:00Z)`,
  );
}

/** A time of day to the second: none is midnight, `HH:MM` gains `:00`, a fraction is cut off (it is added as micros). */
function wholeSeconds(time: string | undefined): string {
  if (time === undefined) return '00:00:00';
  return time.length === 5 ? `${time}:00` : time.replace(/\.\d+$/, '');
}

/** Both bounds, refusing an empty range locally (the service would answer 400). */
export function parseTimeRange(
  from: string | undefined,
  to: string | undefined,
): { fromTimestamp?: bigint; toTimestamp?: bigint } {
  const fromTimestamp = from === undefined ? undefined : parseTimeBound(from, '--from');
  const toTimestamp = to === undefined ? undefined : parseTimeBound(to, '--to');
  if (fromTimestamp !== undefined && toTimestamp !== undefined && fromTimestamp > toTimestamp) {
    throw new VespaBulkError('VB_USAGE', `--from ${from} is after --to ${to}`);
  }
  return { ...(fromTimestamp !== undefined && { fromTimestamp }), ...(toTimestamp !== undefined && { toTimestamp }) };
}
