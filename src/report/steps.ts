import { decodeHistogram, emptyLatencyHistogram, percentileMs } from './histogram.js';
import { escapeHtml, figure } from './format.js';
import type { RecordedRun, StepRecord } from './stats-format.js';

/** One column of the steps table: its head and each step's cell, undefined where the step has no such figure. */
interface Column {
  head: string;
  /** What a blank cell of this column means, shown on hover; the cell reads `–`. */
  none?: string;
  cell: (s: StepRecord, inside: Figures) => string | undefined;
}

/** Throughput, p99 and share of 429s of a step, from the points inside it. */
interface Figures {
  seconds: number;
  okRate: number;
  p99Ms: number;
  throttledShare: number;
}

function figuresOf(run: RecordedRun, s: StepRecord): Figures {
  const inside = run.points.filter((p) => p.t * 1000 > s.start && (p.t - p.dt) * 1000 < s.end);
  const h = emptyLatencyHistogram();
  for (const p of inside) if (p.histogram !== '') h.add(decodeHistogram(p.histogram));
  const seconds = inside.reduce((n, p) => n + p.dt, 0);
  const ok = inside.reduce((n, p) => n + p.ok, 0);
  const responses = inside.reduce((n, p) => n + Object.values(p.status).reduce((a, b) => a + b, 0), 0);
  const throttled = inside.reduce((n, p) => n + (p.status['429'] ?? 0), 0);
  return {
    seconds,
    okRate: seconds > 0 ? ok / seconds : 0,
    p99Ms: percentileMs(h, 99),
    throttledShare: responses === 0 ? 0 : throttled / responses,
  };
}

function heldCell(held: boolean | undefined): string | undefined {
  if (held === undefined) return undefined;
  return held ? 'yes' : '<b>no</b>';
}

const columns: Column[] = [
  { head: 'step', cell: (s) => s.name },
  // An adaptive step asks for no rate: as fast as the cluster takes.
  {
    head: 'asked /s',
    none: 'no asked rate: as fast as the cluster takes',
    cell: (s) => (s.targetRate === undefined ? undefined : figure(s.targetRate)),
  },
  // The bench's own verdict counts operation latency from when each was due; the answers' p99 beside it does not.
  {
    head: 'achieved /s',
    none: 'not judged',
    cell: (s) => (s.verdict === undefined ? undefined : figure(s.verdict.achievedRate)),
  },
  {
    head: 'operation p99 ms (from due)',
    none: 'not judged',
    cell: (s) => (s.verdict === undefined ? undefined : figure(s.verdict.p99Ms)),
  },
  { head: 'held', none: 'not judged: no asked rate', cell: (s) => heldCell(s.verdict?.held) },
  { head: 'seconds', cell: (_, f) => figure(Number(f.seconds.toFixed(1))) },
  { head: 'ok/s', cell: (_, f) => figure(f.okRate) },
  { head: 'answer p99 ms', cell: (_, f) => figure(f.p99Ms) },
  { head: '429 share', cell: (_, f) => `${(f.throttledShare * 100).toFixed(1)}%` },
];

/**
 * The table of a stepped run's steps, or '' without steps. A column no step has a figure for is left out (an
 * adaptive run has no asked rate and no held); in a column kept, a step without one reads `–`, its reason on hover.
 */
export function stepsTable(run: RecordedRun): string {
  if (run.steps.length === 0) return '';
  const rows = run.steps.map((s) => {
    const f = figuresOf(run, s);
    return columns.map((c) => c.cell(s, f));
  });
  const kept = columns.map((_, i) => i).filter((i) => rows.some((r) => r[i] !== undefined));
  const head = kept.map((i) => `<th>${escapeHtml(columns[i].head)}</th>`).join('');
  // Cells are figures or markup made here, the step's name is the one text from outside.
  const cell = (v: string | undefined, i: number) =>
    v === undefined
      ? `<td title="${escapeHtml(columns[i].none ?? '')}">–</td>`
      : `<td>${i === 0 ? escapeHtml(v) : v}</td>`;
  const body = rows.map((r) => `<tr>${kept.map((i) => cell(r[i], i)).join('')}</tr>`).join('');
  return `<h2>Steps</h2><table class="grid" id="steps"><tr>${head}</tr>${body}</table>`;
}
