/**
 * JSON parsed with integers beyond 2^53 kept exact, as bigint: a Vespa `long` must not pass through a double on its
 * way into an INT64 column or a JSON text cell. JSON.parse does the work; only a text holding such an integer is
 * first rewritten (outside strings) so that the integer reaches the reviver as a marked string. Pure: no I/O.
 */

/** A private-use character no document text is expected to start a string with. */
const MARK = '\uE000int:';
/** An integer token of 16 digits or more, anywhere (a float has a `.` or `e` that breaks the run before it). */
const longRun = /[-:[,\s]\d{16,}\s*[,\]}]/;

/** Parses `text`; integers that a double cannot hold exactly come back as bigint. */
export function parseExactJson(text: string): unknown {
  if (!longRun.test(text)) return JSON.parse(text);
  return JSON.parse(markLongIntegers(text), (_key, value: unknown) =>
    typeof value === 'string' && value.startsWith(MARK) ? BigInt(value.slice(MARK.length)) : value,
  );
}

/** The text with each integer token beyond 2^53 (outside strings) quoted behind the mark. */
function markLongIntegers(text: string): string {
  let out = '';
  let copied = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // Skip the string, escapes included.
      i++;
      while (i < n) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i += 2;
        else if (d === 0x22) break;
        else i++;
      }
      i++;
      continue;
    }
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      const start = i;
      i++;
      while (i < n) {
        const d = text.charCodeAt(i);
        if ((d >= 0x30 && d <= 0x39) || d === 0x2e || d === 0x65 || d === 0x45 || d === 0x2b || d === 0x2d) i++;
        else break;
      }
      const token = text.slice(start, i);
      if (/^-?\d+$/.test(token) && !Number.isSafeInteger(Number(token))) {
        out += `${text.slice(copied, start)}"${MARK}${token}"`;
        copied = i;
      }
      continue;
    }
    i++;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/** JSON text of a parsed value, bigints written as the integers they are. */
export function exactJsonText(value: unknown): string {
  if (!containsBigInt(value)) return JSON.stringify(value);
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? `${MARK}${v}` : v)).replace(
    new RegExp(`"${MARK}(-?\\d+)"`, 'g'),
    '$1',
  );
}

function containsBigInt(value: unknown): boolean {
  if (typeof value === 'bigint') return true;
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some(containsBigInt);
  for (const v of Object.values(value)) if (containsBigInt(v)) return true;
  return false;
}
