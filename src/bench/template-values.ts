import type { Random } from './random.js';

/**
 * A template document's value varied for the next document, keeping its shape and size: strings keep their
 * length with other letters and digits (spaces and punctuation stay), numbers keep their sign, integer-ness
 * and decimals and move within their order of magnitude but never above the template's (so a value that fits
 * its field's type still fits), booleans are drawn. Keys of objects stay: they may be field or struct names.
 * Pure: no I/O.
 */
export function vary(value: unknown, random: Random): unknown {
  if (typeof value === 'string') return varyString(value, random);
  if (typeof value === 'number') return varyNumber(value, random);
  if (typeof value === 'boolean') return random.next() < 0.5;
  if (Array.isArray(value)) return value.map((v) => vary(v, random));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = vary(v, random);
    return out;
  }
  return value;
}

function varyString(s: string, random: Random): string {
  // Ids and URLs keep their scheme and structure: only letters and digits change.
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 97 && c <= 122) out += String.fromCharCode(97 + random.int(0, 25));
    else if (c >= 65 && c <= 90) out += String.fromCharCode(65 + random.int(0, 25));
    else if (c >= 48 && c <= 57) out += String.fromCharCode(48 + random.int(0, 9));
    else out += s[i];
  }
  return out;
}

function varyNumber(n: number, random: Random): number {
  if (n === 0 || !Number.isFinite(n)) return n;
  const sign = n < 0 ? -1 : 1;
  const abs = Math.abs(n);
  const floor = 10 ** Math.floor(Math.log10(abs));
  if (Number.isInteger(n)) {
    const low = Math.min(abs, Math.max(1, floor));
    return sign * (low + Math.floor(random.next() * (abs - low + 1)));
  }
  const decimals = Math.min(10, (String(abs).split('.')[1] ?? '').length);
  const v = floor + random.next() * (abs - floor);
  return sign * Number(v.toFixed(decimals));
}
