/**
 * The Prometheus text exposition format (version 0.0.4), written by hand: a handful of counters, gauges and one
 * histogram made at scrape time need no client library (prom-client brought 4.7 MB with OpenTelemetry into every
 * install for this one endpoint).
 */

/** The Content-Type of a scrape's answer. */
export const prometheusContentType = 'text/plain; version=0.0.4; charset=utf-8';

/** One sample line: `name{labels} value`. */
export interface PrometheusSample {
  /** Defaults to the family's name (a histogram's `_bucket`, `_sum`, `_count` name their own). */
  name?: string;
  labels?: Readonly<Record<string, string>>;
  value: number;
}

/** A metric family: its HELP and TYPE lines, then its samples. */
export interface PrometheusFamily {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  samples: readonly PrometheusSample[];
}

/** The text of `families`, each with its HELP and TYPE lines, as a scrape expects it. */
export function prometheusText(families: readonly PrometheusFamily[]): string {
  const lines: string[] = [];
  for (const f of families) {
    lines.push(`# HELP ${f.name} ${f.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`, `# TYPE ${f.name} ${f.type}`);
    for (const s of f.samples) lines.push(`${s.name ?? f.name}${labelText(s.labels)} ${numberText(s.value)}`);
  }
  return `${lines.join('\n')}\n`;
}

function labelText(labels: Readonly<Record<string, string>> | undefined): string {
  if (labels === undefined) return '';
  const pairs = Object.entries(labels).map(
    ([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`,
  );
  return pairs.length === 0 ? '' : `{${pairs.join(',')}}`;
}

function numberText(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}
