/**
 * JSON whose numbers can keep their exact text: a Vespa `long` beyond 2^53 must not pass through a double. JSON.parse
 * and JSON.stringify do the work; a caller says which numbers it keeps and as what value (`parseJsonWith`, and
 * `jsonTextWith` to write them back). The client keeps integers beyond 2^53 as bigint (`parseExactJson`,
 * `exactJsonText`: an INT64 column, a transform's document); the simulator keeps every number a double does not
 * reproduce (simulator/document-api/exact-json.ts). Pure: no I/O.
 */

/** The value that stands for a number token, or undefined to leave the token to JSON.parse (a double). */
export type NumberReader = (token: string) => unknown;
/** The text written for a value that stands for a number, or undefined for any other value. */
export type NumberWriter = (value: unknown) => string | undefined;

/**
 * Parses `text`; each number token for which `read` gives a value comes back as that value. Such a token is first
 * rewritten to a string holding a private-use mark and an index, the mark chosen so that it appears nowhere in the
 * text (raw or escaped): no document string can be taken for one.
 */
export function parseJsonWith(text: string, read: NumberReader): unknown {
  const values: unknown[] = [];
  // Chosen once a token is kept: most texts keep none, and the search reads the whole text twice.
  let mark: string | undefined;
  const marked = markNumbers(text, read, () => (mark ??= unusedMark(text)), values);
  if (mark === undefined) return JSON.parse(text);
  const code = mark.charCodeAt(0);
  return JSON.parse(marked, (_key, value: unknown) =>
    typeof value === 'string' && value.charCodeAt(0) === code ? values[Number(value.slice(1))] : value,
  );
}

/** JSON.stringify of `value`, each value for which `write` gives a text written as that text (an unquoted number). */
export function jsonTextWith(value: unknown, write: NumberWriter): string {
  if (!contains(value, write)) return JSON.stringify(value);
  for (let code = 0xe000; ; code++) {
    // A key or string starting with the mark would be taken for one: then the next mark is tried.
    const mark = String.fromCharCode(code);
    const texts: string[] = [];
    let clash = false;
    const json = JSON.stringify(value, function (this: Record<string, unknown>, key, v: unknown) {
      // `this[key]` is the value before its toJSON (an ExactNumber's gives a double).
      const text = write(this[key]) ?? write(v);
      if (text !== undefined) return `${mark}${texts.push(text) - 1}`;
      if (key.startsWith(mark) || (typeof v === 'string' && v.startsWith(mark))) clash = true;
      return v;
    });
    if (!clash) return json.replace(new RegExp(`"${mark}(\\d+)"`, 'g'), (_m, i: string) => texts[Number(i)]);
  }
}

/** A private-use character that `text` holds neither raw nor as a `\u` escape. */
function unusedMark(text: string): string {
  for (let code = 0xe000; ; code++) {
    const mark = String.fromCharCode(code);
    if (!text.includes(mark) && !new RegExp(`\\\\u${code.toString(16)}`, 'i').test(text)) return mark;
  }
}

/** The text with each number token (outside strings) that `read` keeps replaced by `"<mark><index in values>"`. */
function markNumbers(text: string, read: NumberReader, markOf: () => string, values: unknown[]): string {
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
      const value = read(text.slice(start, i));
      if (value !== undefined) {
        out += `${text.slice(copied, start)}"${markOf()}${values.push(value) - 1}"`;
        copied = i;
      }
      continue;
    }
    i++;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

function contains(value: unknown, write: NumberWriter): boolean {
  if (write(value) !== undefined) return true;
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some((v) => contains(v, write));
  for (const v of Object.values(value)) if (contains(v, write)) return true;
  return false;
}

/** An integer token of 16 digits or more, anywhere (a float has a `.` or `e` that breaks the run before it). */
const longRun = /[-:[,\s]\d{16,}\s*[,\]}]/;

/** Parses `text`; integers that a double cannot hold exactly come back as bigint. */
export function parseExactJson(text: string): unknown {
  if (!longRun.test(text)) return JSON.parse(text);
  return parseJsonWith(text, (token) =>
    /^-?\d+$/.test(token) && !Number.isSafeInteger(Number(token)) ? BigInt(token) : undefined,
  );
}

/** JSON text of a parsed value, bigints written as the integers they are. */
export function exactJsonText(value: unknown): string {
  return jsonTextWith(value, (v) => (typeof v === 'bigint' ? String(v) : undefined));
}
