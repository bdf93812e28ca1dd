/**
 * Numbers compared by value, not by text: `1`, `1.0`, `1e0` and `10E-1` are one number. The comparison is done on
 * the decimal text, so a `long` beyond 2^53 is compared exactly rather than through a double. Pure.
 */

const decimal = /^(-?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/** The number's value as `<sign><digits>e<exponent>` with no leading or trailing zeros; undefined for no number. */
export function canonicalNumber(text: string): string | undefined {
  const m = decimal.exec(text);
  if (m === null || (m[2] === '' && (m[3] ?? '') === '')) return undefined;
  const frac = m[3] ?? '';
  let digits = (m[2] + frac).replace(/^0+/, '');
  if (digits === '') return '0';
  let exponent = Number(m[4] ?? '0') - frac.length;
  const trimmed = digits.replace(/0+$/, '');
  exponent += digits.length - trimmed.length;
  digits = trimmed;
  return `${m[1]}${digits}e${exponent}`;
}

/** Significant digits of a decimal text. */
function significantDigits(text: string): number {
  const c = canonicalNumber(text);
  if (c === undefined || c === '0') return 1;
  return c.replace(/^-/, '').indexOf('e');
}

/**
 * Whether two number texts are the same value. Besides exact decimal equality, a float (32-bit) value written out in
 * full (`0.10000000149011612`, as a reader widening a float column writes it) equals its shortest decimal (`0.1`, as
 * the service writes a `float` field): one side must be exactly a float, the other at most 9 significant digits
 * that round to it, and not both integers (a `long` is never a float).
 */
export function sameNumber(a: string, b: string): boolean {
  const ca = canonicalNumber(a);
  const cb = canonicalNumber(b);
  if (ca !== undefined && ca === cb) return true;
  if (ca === undefined || cb === undefined) return a === b;
  const x = Number(a);
  const y = Number(b);
  if (!Number.isFinite(x) || !Number.isFinite(y) || (Number.isInteger(x) && Number.isInteger(y))) return false;
  return floatOf(x, y, b) || floatOf(y, x, a);
}

/** `exact` is a float and `short` (text `shortText`) a float's short decimal that rounds to it. */
function floatOf(exact: number, short: number, shortText: string): boolean {
  return Math.fround(exact) === exact && Math.fround(short) === exact && significantDigits(shortText) <= 9;
}
