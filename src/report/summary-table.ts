import { escapeHtml, figure, valueText } from './format.js';

/**
 * The summary a command printed, as a reader wants it: in groups, each figure under a name in words with its
 * unit, the latency figures as one grid. The printed keys stay on the page, since users grep for them: on each
 * label (hover) and in a collapsed list of them all with their exact values.
 */

// The latency grid last: it takes a row of its own, under the groups that sit side by side.
const groups = [
  'Run',
  'Throughput',
  'Outcomes',
  'Transport',
  'Criteria of a held step',
  'Other',
  'Latency (ms)',
] as const;
type Group = (typeof groups)[number];
type Unit = 'count' | '/s' | 'ms' | 'bytes' | 'MB/s' | 's' | 'share' | 'time' | 'text';

/** The printed names (src/cli/summary-names.ts, the bench's result) and what they are called on the page. */
const named: Record<string, [Group, string, Unit?]> = {
  profile: ['Run', 'load profile', 'text'],
  startedAt: ['Run', 'started', 'time'],
  endedAt: ['Run', 'ended', 'time'],
  'visit.started': ['Run', 'started', 'time'],
  'visit.from.timestamp': ['Run', 'changes since', 'text'],
  'feeder.seconds': ['Run', 'feeding', 's'],
  'visit.seconds': ['Run', 'visiting', 's'],
  stoppedPastKnee: ['Run', 'stopped at a step not held', 'text'],
  'checkpoint.resumed': ['Run', 'resumed from a checkpoint', 'text'],
  'feeder.operation.count': ['Throughput', 'operations read'],
  'feeder.ok.count': ['Throughput', 'succeeded'],
  'feeder.ok.rate': ['Throughput', 'succeeded per second', '/s'],
  highestHeldRate: ['Throughput', 'highest asked rate held', '/s'],
  'visit.document.count': ['Throughput', 'documents'],
  'visit.remove.count': ['Throughput', 'removes'],
  'visit.document.rate': ['Throughput', 'documents and removes per second', '/s'],
  'output.bytes': ['Throughput', 'written to the output', 'bytes'],
  'visit.ok': ['Outcomes', 'every slice finished', 'text'],
  'visit.slice.count': ['Outcomes', 'slices'],
  'visit.slice.failed.count': ['Outcomes', 'slices failed'],
  'feeder.error.count': ['Outcomes', 'failed'],
  'feeder.parse.error.count': ['Outcomes', 'unreadable input (among the failed)'],
  'feeder.throttled.count': ['Outcomes', '429 answers (throttled)'],
  'http.response.proxy.page.count': ['Outcomes', "5xx pages from a proxy on the way (not the service's answers)"],
  'feeder.feed.blocked.seconds': ['Outcomes', 'cluster feed-blocked (507: resource limits)', 's'],
  'http.response.error.count': ['Outcomes', 'answers not 2xx (429s included)'],
  'http.response.code.counts': ['Outcomes', 'answers by status', 'text'],
  'feeder.retry.count': ['Outcomes', 'retries'],
  'visit.retry.count': ['Outcomes', 'retries'],
  'visit.repeat.skipped.count': ['Outcomes', 'documents sent again after a cut, skipped'],
  'feeder.skipped.count': ['Outcomes', 'skipped (other shards, before the checkpoint)'],
  'feeder.transform.dropped.count': ['Outcomes', 'dropped by the transform'],
  'feeder.abandoned.count': ['Outcomes', 'abandoned at a stop'],
  'feeder.inflight.count': ['Outcomes', 'in flight at the end'],
  'feeder.failures.file': ['Outcomes', 'failure output', 'text'],
  'http.protocol': ['Transport', 'protocol', 'text'],
  'http.proxy': ['Transport', 'through the proxy', 'text'],
  'http.request.count': ['Transport', 'requests'],
  'http.request.bytes': ['Transport', 'sent', 'bytes'],
  'http.request.MBps': ['Transport', 'sent per second', 'MB/s'],
  'http.response.count': ['Transport', 'answers'],
  'http.response.bytes': ['Transport', 'received', 'bytes'],
  'http.response.MBps': ['Transport', 'received per second', 'MB/s'],
  'http.exception.count': ['Transport', 'transport errors (no answer)'],
  'feeder.inflight.limit': ['Transport', 'in-flight limit at the end'],
  'visit.clusters': ['Transport', 'by content cluster', 'text'],
  'criteria.slo.ms': ['Criteria of a held step', 'operation p99 at most', 'ms'],
  'criteria.max.429.share': ['Criteria of a held step', '429 share at most', 'share'],
  'criteria.min.achieved.share': ['Criteria of a held step', 'achieved share of the asked rate at least', 'share'],
};

/** The latency figures, a row per kind of latency and a column per statistic. */
const latencyRows: [prefix: string, label: string][] = [
  ['http.response.latency.millis', 'answers'],
  ['operation.latency.millis', 'operations'],
];
const latencyColumns: [suffix: string, head: string][] = [
  ['min', 'min'],
  ['avg', 'avg'],
  ['p50', 'p50'],
  ['p90', 'p90'],
  ['p99', 'p99'],
  ['p999', 'p99.9'],
  ['max', 'max'],
];
const byCodeKey = 'http.response.latency.millis.by.code';
const latencyKey = /^(http\.response|operation)\.latency\.millis\.(min|avg|p50|p90|p99|p999|max)$/;

/** Whether `key` is one the page names (a test holds the CLI's summaries to this). */
export function isNamed(key: string): boolean {
  return key in named || key === byCodeKey || latencyKey.test(key);
}

/** The units of a byte count above bytes, largest first: a count is shown in the first whose scale it reaches. */
const byteUnits: readonly (readonly [number, string])[] = [
  [1e9, 'GB'],
  [1e6, 'MB'],
  [1e3, 'kB'],
];

function bytesText(n: number): string {
  const [scale, unit] = byteUnits.find(([s]) => n >= s) ?? [1, 'bytes'];
  return `${figure(n / scale)} ${unit}`;
}

function shown(v: unknown, unit: Unit = 'count'): string {
  // A merge keeps the shards' texts as a list: each shown as one would be, said once where they agree.
  if (Array.isArray(v)) return [...new Set(v.map((x) => shown(x, unit)))].join(', ');
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  // A map (answers by status) on one line, its pairs set apart: `200: 5,312 · 429: 21`.
  if (typeof v === 'object' && v !== null)
    return Object.entries(v)
      .map(([k, n]) => `${k}: ${valueText(n)}`)
      .join(' · ');
  if (typeof v !== 'number')
    return unit === 'time' && typeof v === 'string' ? v.replace('T', ' ').replace(/Z$/, ' UTC') : valueText(v);
  switch (unit) {
    case 'bytes':
      return bytesText(v);
    case 'share':
      return `${figure(v * 100)}%`;
    case '/s':
    case 'ms':
    case 'MB/s':
    case 's':
      return `${figure(v)} ${unit}`;
    default:
      return figure(v);
  }
}

const isEmpty = (v: unknown) =>
  v === undefined || v === '' || (typeof v === 'object' && v !== null && Object.keys(v).length === 0);

function latencyGrid(summary: Record<string, unknown>): string {
  const rows: { label: string; title: string; cells: [string, unknown][] }[] = [];
  for (const [prefix, label] of latencyRows) {
    const cells = latencyColumns.map(([suffix]): [string, unknown] => [
      `${prefix}.${suffix}`,
      summary[`${prefix}.${suffix}`],
    ]);
    if (cells.some(([, v]) => v !== undefined)) rows.push({ label, title: prefix, cells });
    // The answers of each status just under all answers: how slow the 429s are beside the 200s.
    if (prefix !== 'http.response.latency.millis') continue;
    const byCode = summary[byCodeKey];
    if (typeof byCode !== 'object' || byCode === null) continue;
    for (const [code, figures] of Object.entries(byCode as Record<string, Record<string, unknown>>)) {
      if (isEmpty(figures)) continue;
      const count = typeof figures.count === 'number' ? ` (${figure(figures.count)})` : '';
      rows.push({
        label: `${code} answers${count}`,
        title: `${byCodeKey}.${code}`,
        cells: latencyColumns.map(([suffix]): [string, unknown] => [`${byCodeKey}.${code}.${suffix}`, figures[suffix]]),
      });
    }
  }
  if (rows.length === 0) return '';
  const head = `<tr><th></th>${latencyColumns.map(([, h]) => `<th>${h}</th>`).join('')}</tr>`;
  const body = rows
    .map(
      (r) =>
        `<tr><th title="${escapeHtml(r.title)}">${escapeHtml(r.label)}</th>${r.cells.map(([key, v]) => (v === undefined ? '<td>–</td>' : `<td title="${escapeHtml(key)}">${escapeHtml(shown(v))}</td>`)).join('')}</tr>`,
    )
    .join('');
  return `<table class="grid" id="summary-latency">${head}${body}</table><p class="note">answers: each HTTP answer's own time; operations: from the first send (at a fixed rate, from when it was due) to the final answer, retries included.</p>`;
}

/** A list of records is a table of its own (a visit's slices), not part of the summary's groups. */
export function isRecordList(v: unknown): v is Record<string, unknown>[] {
  return Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'object' && x !== null && !Array.isArray(x));
}

/** A field name as words: `bucketSpace` is "bucket space", `percentFinished` "% finished". */
const words = (key: string) => key.replace(/^percent(?=[A-Z])/, '% ').replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`);

/** Lists of records longer than this are folded under a line that counts them by status. */
const foldAbove = 16;

/**
 * Each list of records in the summary (a visit's slices) as a table, a row per record and a column per field.
 * A long one is folded under a line saying how many ended how: hundreds of slices are not what a reader (or a
 * printed page) wants first, the failed ones are.
 */
export function recordTables(summary: Record<string, unknown>): string {
  return Object.entries(summary)
    .filter((e): e is [string, Record<string, unknown>[]] => isRecordList(e[1]))
    .map(([key, list]) => {
      const columns = [...new Set(list.flatMap((r) => Object.keys(r)))];
      const head = columns.map((c) => `<th>${escapeHtml(words(c))}</th>`).join('');
      const body = list
        .map(
          (r) =>
            `<tr>${columns.map((c) => `<td>${r[c] === undefined ? '' : escapeHtml(valueText(r[c]))}</td>`).join('')}</tr>`,
        )
        .join('');
      const table = `<table class="grid" id="summary-${escapeHtml(key)}"><tr>${head}</tr>${body}</table>`;
      const title = `<h2>${escapeHtml(words(key).replace(/^./, (c) => c.toUpperCase()))}</h2>`;
      if (list.length <= foldAbove) return title + table;
      const byStatus = new Map<string, number>();
      for (const r of list) if (typeof r.status === 'string') byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + 1);
      const counts = [...byStatus]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([status, n]) => `${figure(n)} ${status}`);
      const line = `${figure(list.length)} ${escapeHtml(words(key))}${counts.length === 0 ? '' : `: ${escapeHtml(counts.join(', '))}`}`;
      return `${title}<details><summary>${line}</summary>${table}</details>`;
    })
    .join('');
}

/** A group's rows as a table; nothing for a group without any. */
function kvTable(rows: string[]): string {
  return rows.length === 0 ? '' : `<table class="kv">${rows.join('')}</table>`;
}

/** The summary section: the groups, the latency grid, and every printed key with its exact value, collapsed. */
export function summaryHtml(summary: Record<string, unknown>): string {
  const rows = new Map<Group, string[]>(groups.map((g) => [g, []]));
  // Within a group, in the order of the names above (started before ended), whatever order the command printed.
  const order = Object.keys(named);
  const rank = (key: string) => (key in named ? order.indexOf(key) : order.length);
  const keys = Object.keys(summary).sort((a, b) => rank(a) - rank(b));
  for (const key of keys) {
    const v = summary[key];
    if (isRecordList(v) || key === byCodeKey || latencyKey.test(key) || isEmpty(v)) continue;
    const [group, label, unit] = named[key] ?? ['Other', key];
    rows
      .get(group)!
      .push(`<tr><th title="${escapeHtml(key)}">${escapeHtml(label)}</th><td>${escapeHtml(shown(v, unit))}</td></tr>`);
  }
  const sections = groups.map((g) => {
    const body = g === 'Latency (ms)' ? latencyGrid(summary) : kvTable(rows.get(g)!);
    // The latency grid is wider than a column: a row of its own.
    return body === ''
      ? ''
      : `<section class="group${g === 'Latency (ms)' ? ' wide' : ''}"><h3>${escapeHtml(g)}</h3>${body}</section>`;
  });
  const raw = Object.entries(summary)
    .filter(([, v]) => !isRecordList(v))
    .map(([k, v]) => `<tr><th>${escapeHtml(k)}</th><td>${escapeHtml(JSON.stringify(v))}</td></tr>`)
    .join('');
  return `<div id="summary">${sections.join('')}</div><details id="summary-raw"><summary>The summary as printed (its keys and exact values)</summary><table class="kv">${raw}</table></details>`;
}
