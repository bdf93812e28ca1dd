import { red, visibleLength, stripAnsi } from './color.js';

/**
 * The progress line of feed, visit and the bulk commands, one style for all: a pure function of a snapshot
 * and the terminal's width. It never wraps (a wrapped line cannot be redrawn in place: every redraw would
 * add a row), so when the width is short, fields are shortened or dropped, least useful first; the outcome
 * (time, how far, `failed`) stays at any width.
 */
export interface ProgressSnapshot {
  /** Command name, e.g. `feed`. */
  label: string;
  /** `stopping` and `stopped` (Ctrl-C) show no time left: it would be stale. */
  state: 'running' | 'stopping' | 'stopped' | 'done';
  seconds: number;
  /** Items finished: operations, documents; a resumed run's include those of the runs before it. */
  done: number;
  /** A resumed run's: of `done`, those this run finished (shown as `this run N`). */
  thisRun?: number;
  /** What `done` counts, e.g. `ops`, `docs`. */
  unit: string;
  /** Share finished, 0..100, when known. Not shown when a run ended with nothing done (it would say how far nothing got). */
  percent?: number;
  /** Input bytes read and in all, when the input size is known (shown as `12.3/45.6 MB`, in the unit the total reads best in). */
  bytes?: { read: number; total: number };
  /** Items per second, recent. */
  rate?: number;
  /** Megabytes per second, recent. */
  mbPerSecond?: number;
  ok?: number;
  /** Items failed: operations, or a visit's slices (shown beside `slices`). */
  failed?: number;
  retried?: number;
  /** Input operations a feed's transform dropped: neither ok nor failed, shown when there are any. */
  dropped?: number;
  /** A visit's slices: finished of all (one wording whether running, stopped or done). */
  slices?: { finished: number; total: number };
  /** In flight now and the current limit (requests, or a visit's running slices). */
  inflight?: { now: number; limit?: number };
  p99Ms?: number;
  etaSeconds?: number;
  /** What the cluster says of itself now (`cluster feed-blocked (507)`): shown after the time, kept long. */
  notice?: string;
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
  if (h > 0) return `${h}h${String(m).padStart(2, '0')}m`;
  return m > 0 ? `${m}m${String(r).padStart(2, '0')}s` : `${r}s`;
}

/** The units of a byte count above bytes, largest first: a count is shown in the first whose scale it reaches. */
const byteUnits: readonly (readonly [number, string])[] = [
  [1e9, 'GB'],
  [1e6, 'MB'],
  [1e3, 'kB'],
];

/** `read/total unit`, both in the unit the total reads best in (B, kB, MB, GB): a small input is not `0.0/0.0 MB`. */
export function formatBytesPair(read: number, total: number): string {
  const [scale, unit] = byteUnits.find(([s]) => total >= s) ?? [1, 'B'];
  const figure = (bytes: number): string => {
    const n = bytes / scale;
    return scale === 1 || n >= 100 ? formatCount(n) : n.toFixed(1);
  };
  return `${figure(read)}/${figure(total)} ${unit}`;
}

/**
 * Each field with its priority: 0 is never dropped (the label and time, and `failed`: the outcome a user must not
 * miss at any width); among the rest, higher goes first.
 */
function segments(p: ProgressSnapshot, color: boolean): Segment[] {
  const out: Segment[] = [];
  const state = p.state === 'running' ? '' : ` ${p.state}`;
  const ended = p.state === 'done' || p.state === 'stopped';
  out.push({ text: `${p.label}${state} ${formatDuration(p.seconds)}`, priority: 0 });
  if (p.notice !== undefined) out.push({ text: red(p.notice, color), priority: 1 });
  if (p.percent !== undefined && !(ended && p.done === 0)) {
    const percent = `${Math.min(100, Math.max(0, p.percent)).toFixed(p.percent >= 99.95 || p.percent < 10 ? 1 : 0)}%`;
    const text =
      p.bytes !== undefined && p.bytes.total > 0
        ? `${percent} of ${formatBytesPair(p.bytes.read, p.bytes.total)}`
        : percent;
    out.push({ text, short: percent, shortPriority: 6, priority: 1 });
  }
  out.push({ text: `${formatCount(p.done)} ${p.unit}`, priority: 3 });
  if (p.thisRun !== undefined) out.push({ text: `this run ${formatCount(p.thisRun)}`, priority: 7 });
  if (p.rate !== undefined)
    out.push({
      text: `${formatRate(p.rate)} ${p.unit}/s`,
      short: `${formatRate(p.rate)}/s`,
      shortPriority: 7,
      priority: 4,
    });
  if (p.mbPerSecond !== undefined) out.push({ text: `${formatRate(p.mbPerSecond)} MB/s`, priority: 9 });
  if (p.ok !== undefined) out.push({ text: `ok ${formatCount(p.ok)}`, priority: 6 });
  if (p.slices !== undefined)
    out.push({ text: `slices ${formatCount(p.slices.finished)}/${formatCount(p.slices.total)}`, priority: 5 });
  if (p.failed !== undefined) {
    const text = `failed ${formatCount(p.failed)}`;
    out.push({ text: p.failed > 0 ? red(text, color) : text, priority: 0 });
  }
  if (p.dropped !== undefined && p.dropped > 0) out.push({ text: `dropped ${formatCount(p.dropped)}`, priority: 5 });
  if (p.retried !== undefined) out.push({ text: `retried ${formatCount(p.retried)}`, priority: p.retried > 0 ? 5 : 9 });
  if (p.inflight !== undefined) {
    const now = formatCount(p.inflight.now);
    const pair = p.inflight.limit === undefined ? now : `${now}/${formatCount(p.inflight.limit)}`;
    out.push({ text: `in flight ${pair}`, priority: 8 });
  }
  if (p.p99Ms !== undefined)
    out.push({ text: `p99 ${p.p99Ms < 10 ? p.p99Ms.toFixed(1) : formatCount(p.p99Ms)} ms`, priority: 8 });
  if (p.etaSeconds !== undefined && p.state === 'running')
    out.push({ text: `eta ${formatDuration(p.etaSeconds)}`, priority: 2 });
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
  const length = (): number =>
    [...kept].reduce((n, s, i) => n + visibleLength(s.text) + (i === 0 ? 0 : separator.length), 0);
  // Shortening and dropping, least important first; among equals, the later field first.
  const steps: Array<{ priority: number; index: number; apply: () => void }> = [];
  segs.forEach((s, index) => {
    if (s.short !== undefined)
      steps.push({ priority: s.shortPriority ?? s.priority, index, apply: () => (s.text = s.short!) });
    if (s.priority > 0) steps.push({ priority: s.priority, index, apply: () => kept.delete(s) });
  });
  steps.sort((a, b) => b.priority - a.priority || b.index - a.index);
  for (const step of steps) {
    if (length() <= room) break;
    step.apply();
  }
  const line = segs
    .filter((s) => kept.has(s))
    .map((s) => s.text)
    .join(separator);
  return visibleLength(line) <= room ? line : stripAnsi(line).slice(0, room);
}
