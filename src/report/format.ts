/**
 * A figure as a reader takes it in: thousands separated, as many decimals as its size is worth (2,362; 34.7;
 * 0.697). Three decimals on a 348 ms p99 are noise on a page; the stats file keeps them.
 */
export function figure(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (Number.isInteger(n)) return n.toLocaleString('en-US');
  const size = Math.abs(n);
  if (size < 1) return n.toLocaleString('en-US', { maximumSignificantDigits: 3 });
  return n.toLocaleString('en-US', { maximumFractionDigits: fractionDigits(size) });
}

/** Decimals worth showing of a figure of 1 or more: none from 100 on, one from 10, else two. */
function fractionDigits(size: number): number {
  if (size >= 100) return 0;
  return size >= 10 ? 1 : 2;
}

/**
 * Any summary value as text. A list is what a merge keeps of a text field the shards differ in (or agree on:
 * then it is said once); a map is `key: value` pairs.
 */
export function valueText(v: unknown): string {
  if (typeof v === 'number') return figure(v);
  if (Array.isArray(v)) return [...new Set(v.map(valueText))].join(', ');
  if (typeof v === 'object' && v !== null)
    return Object.entries(v)
      .map(([k, n]) => `${k}: ${valueText(n)}`)
      .join(', ');
  return String(v);
}

export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
