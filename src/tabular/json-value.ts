/**
 * The values a row's fields become, and their JSON text. Pure: no I/O.
 *
 * A tree of plain JSON values, with two additions that `JSON.stringify` cannot write as Vespa needs them: a
 * long beyond 2^53 (`JsonNumber`, written digit for digit, never rounded through a double) and bigints.
 */

/** A number kept as its decimal text, so a long beyond 2^53 reaches Vespa exact. */
export class JsonNumber {
  constructor(readonly text: string) {}
}

/** A point in time as microseconds since the epoch (exact, as Parquet's and Arrow's timestamps are). */
export class EpochMicros {
  constructor(readonly micros: bigint) {}
}

/** What a timestamp becomes: a long counting seconds (`s`, the default), milliseconds or microseconds since the epoch. */
export type TimestampUnit = 's' | 'ms' | 'us';

const microsPer: Record<TimestampUnit, bigint> = { s: 1_000_000n, ms: 1000n, us: 1n };

/** The timestamp as a long in `unit`, rounded down (a time before 1970 to the earlier whole unit). */
export function epochIn(t: EpochMicros | Date, unit: TimestampUnit): JsonNumber | number {
  const micros = t instanceof Date ? BigInt(t.getTime()) * 1000n : t.micros;
  const per = microsPer[unit];
  let q = micros / per;
  if (micros < 0n && q * per !== micros) q -= 1n;
  return bigintValue(q);
}

const maxSafe = BigInt(Number.MAX_SAFE_INTEGER);

/** A bigint as a plain number when it is exact as one, else as its digits. */
export function bigintValue(n: bigint): JsonNumber | number {
  return n <= maxSafe && n >= -maxSafe ? Number(n) : new JsonNumber(n.toString());
}

/** The JSON text of a value tree (plain JSON values, `JsonNumber`s and bigints); undefined members are left out. */
export function jsonText(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return String(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return value.toString();
    case 'object': {
      if (value === null) return 'null';
      if (value instanceof JsonNumber) return value.text;
      if (Array.isArray(value)) {
        // A list of numbers (an embedding) is the common large value: written at once. JSON.stringify writes each
        // number as String() does (the callers pass finite ones), at about twice the rate of join(',').
        if (value.length > 0 && allNumbers(value)) return JSON.stringify(value);
        let s = '[';
        for (let i = 0; i < value.length; i++) s += (i > 0 ? ',' : '') + jsonText(value[i]);
        return `${s}]`;
      }
      let s = '{';
      let first = true;
      for (const key in value) {
        const v = (value as Record<string, unknown>)[key];
        if (v === undefined) continue;
        s += `${first ? '' : ','}${JSON.stringify(key)}:${jsonText(v)}`;
        first = false;
      }
      return `${s}}`;
    }
    default:
      return 'null';
  }
}

function allNumbers(list: unknown[]): boolean {
  for (let i = 0; i < list.length; i++) if (typeof list[i] !== 'number') return false;
  return true;
}
