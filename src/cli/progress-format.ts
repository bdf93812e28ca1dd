import { red, visibleLength, stripAnsi } from './color.js';

/**
 * The progress line of feed, visit and the bulk commands, one style for all: a pure function of a snapshot
 * and the terminal's width. It never wraps (a wrapped line cannot be redrawn in place: every redraw would
 * add a row), so when the width is short, fields are shortened or dropped, least useful first.
 */
export interface ProgressSnapshot {
  /** Command name, e.g. `feed`. */
  label: string;
  /** `stopping` and `stopped` (Ctrl-C) show no time left: it would be stale. */
  state: 'running' | 'stopping' | 'stopped' | 'done';
  seconds: number;
  /** Items finished: operations, documents. */
  done: number;
  /** What `done` counts, e.g. `ops`, `docs`. */
  unit: string;
  /** Share finished, 0..100, when known. */
  percent?: number;
  /** Input bytes read and in all, when the input size is known (shown as `12.3/45.6 MB`). */
  bytes?: { read: number; total: number };
  /** Items per second, recent. */
  rate?: number;
  /** Megabytes per second, recent. */
  mbPerSecond?: number;
  ok?: number;
  failed?: number;
  retried?: number;
  /** In flight and the current limit (requests, or running slices of all). */
  inflight?: { now: number; limit: number; what?: string };
  p99Ms?: number;
  etaSeconds?: number;
}

interface Segment {
  text: string;
  /** A shorter form, taken when fields of `shortPriority` and above are going. */
  short?: string;
  shortPriority?: number;
  /** Lower is kept longer; 0 is never dropped. */
  priority: number;
}

const separator = '  ';

/** `1,234,567`. */
export function formatCount(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** Rates: whole numbers with separators, one decimal below 10. */
export function formatRate(n: number): string {
  if (!Number.isFinite(n) || n < 0) return '0';
  return n < 10 ? n.toFixed(1) : formatCount(n);
}

export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '?';
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const r = s % 60;
  return h > 0 ? `${h}h${String(m).padStart(2, '0')}m` : m > 0 ? `${m}m${String(r).padStart(2, '0')}s` : `${r}s`;
}

function megabytes(bytes: number): string {
  const mb = bytes / 1e6;
  return mb >= 100 ? formatCount(mb) : mb.toFixed(1);
}

function segments(p: ProgressSnapshot, color: boolean): Segment[] {
  const out: Segment[] = [];
  const state = p.state === 'running' ? '' : ` ${p.state}`;
  out.push({ text: `${p.label}${state} ${formatDuration(p.seconds)}`, priority: 0 });
  if (p.percent !== undefined) {
    const percent = `${Math.min(100, Math.max(0, p.percent)).toFixed(p.percent >= 99.95 || p.percent < 10 ? 1 : 0)}%`;
    const text = p.bytes !== undefined ? `${percent} of ${megabytes(p.bytes.read)}/${megabytes(p.bytes.total)} MB` : percent;
    out.push({ text, short: percent, shortPriority: 4, priority: 1 });
  }
  out.push({ text: `${formatCount(p.done)} ${p.unit}`, priority: 4 });
  if (p.rate !== undefined) out.push({ text: `${formatRate(p.rate)} ${p.unit}/s`, short: `${formatRate(p.rate)}/s`, shortPriority: 5, priority: 3 });
  if (p.mbPerSecond !== undefined) out.push({ text: `${formatRate(p.mbPerSecond)} MB/s`, priority: 7 });
  if (p.ok !== undefined) out.push({ text: `ok ${formatCount(p.ok)}`, priority: 7 });
  if (p.failed !== undefined) {
    const text = `failed ${formatCount(p.failed)}`;
    // A failure is the one figure a user must not miss: it stays longest.
    out.push({ text: p.failed > 0 ? red(text, color) : text, priority: p.failed > 0 ? 1 : 9 });
  }
  if (p.retried !== undefined) out.push({ text: `retried ${formatCount(p.retried)}`, priority: p.retried > 0 ? 6 : 9 });
  if (p.inflight !== undefined) {
    const pair = `${formatCount(p.inflight.now)}/${formatCount(p.inflight.limit)}`;
    out.push({ text: `${p.inflight.what ?? 'in flight'} ${pair}`, short: pair, shortPriority: 8, priority: 8 });
  }
  if (p.p99Ms !== undefined) out.push({ text: `p99 ${p.p99Ms < 10 ? p.p99Ms.toFixed(1) : formatCount(p.p99Ms)} ms`, priority: 8 });
  if (p.etaSeconds !== undefined && p.state === 'running') out.push({ text: `eta ${formatDuration(p.etaSeconds)}`, priority: 2 });
  return out;
}

/**
 * The line for `width` columns: at most `width - 1` visible characters (writing the last column makes some
 * terminals wrap). `width` Infinity (not a terminal) keeps every field.
 */
export function formatProgress(p: ProgressSnapshot, width: number, color = false): string {
  const room = Math.max(1, width - 1);
  const segs = segments(p, color);
  const kept = new Set(segs);
  const length = (): number => [...kept].reduce((n, s, i) => n + visibleLength(s.text) + (i === 0 ? 0 : separator.length), 0);
  // Shortening and dropping, least important first; among equals, the later field first.
  const steps: Array<{ priority: number; index: number; apply: () => void }> = [];
  segs.forEach((s, index) => {
    if (s.short !== undefined) steps.push({ priority: s.shortPriority ?? s.priority, index, apply: () => (s.text = s.short!) });
    if (s.priority > 0) steps.push({ priority: s.priority, index, apply: () => kept.delete(s) });
  });
  steps.sort((a, b) => b.priority - a.priority || b.index - a.index);
  for (const step of steps) {
    if (length() <= room) break;
    step.apply();
  }
  const line = segs.filter((s) => kept.has(s)).map((s) => s.text).join(separator);
  return visibleLength(line) <= room ? line : stripAnsi(line).slice(0, room);
}
