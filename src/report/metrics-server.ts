import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { VespaBulkError } from '../core/errors.js';
import { cumulativeCounts } from './histogram.js';
import type { RunSample, RunSampler } from './sample.js';
import {
  prometheusContentType,
  prometheusText,
  type PrometheusFamily,
  type PrometheusSample,
} from './prometheus-text.js';

/** Options of {@link startMetricsServer}. */
export interface MetricsServerOptions {
  /** What to expose: read at every scrape. */
  sample: RunSampler;
  /** Port; 0 picks a free one (see `port` of the result). */
  port: number;
  /** Address to listen on; default 127.0.0.1 (this machine only: the figures name the target). */
  host?: string;
}

/** A running metrics endpoint. */
export interface MetricsServer {
  /** The port it listens on. */
  port: number;
  /** `http://host:port/metrics`. */
  url: string;
  /** Stops listening. */
  close(): Promise<void>;
}

/** Bucket bounds of the latency histogram, seconds: 1 ms to a minute, as Prometheus' defaults stretched for retries. */
const latencyBucketsSeconds = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * The latency histogram as Prometheus expects it, made at scrape time from the run's own HDR histogram: the
 * recorded values themselves are never touched twice, and a second record per operation is kept off its path.
 */
function latencyFamily(s: RunSample): PrometheusFamily {
  const name = 'vespa_bulk_operation_latency_seconds';
  const h = s.latencyUs;
  const counts = cumulativeCounts(
    h,
    latencyBucketsSeconds.map((b) => b * 1e6),
  );
  const samples: PrometheusSample[] = latencyBucketsSeconds.map((le, i) => ({
    name: `${name}_bucket`,
    labels: { le: String(le) },
    value: counts[i],
  }));
  samples.push({ name: `${name}_bucket`, labels: { le: '+Inf' }, value: h.totalCount });
  samples.push({ name: `${name}_sum`, value: (h.mean * h.totalCount) / 1e6 });
  samples.push({ name: `${name}_count`, value: h.totalCount });
  return { name, help: 'Latency of HTTP responses (each attempt), seconds', type: 'histogram', samples };
}

/** Every metric of one sample, so that the figures of a scrape agree with each other. */
function families(s: RunSample): PrometheusFamily[] {
  const one = (name: string, type: 'counter' | 'gauge', help: string, value: number): PrometheusFamily => ({
    name,
    help,
    type,
    samples: [{ value }],
  });
  return [
    {
      name: 'vespa_bulk_operations_total',
      help: 'Operations done, by result: ok or failed (finally, after retries)',
      type: 'counter',
      samples: [
        { labels: { result: 'ok' }, value: s.ok },
        { labels: { result: 'failed' }, value: s.failed },
      ],
    },
    {
      name: 'vespa_bulk_responses_total',
      help: 'HTTP responses by status code (429s and other retried answers included)',
      type: 'counter',
      samples: Object.entries(s.status).map(([status, n]) => ({ labels: { status }, value: n })),
    },
    one(
      'vespa_bulk_retries_total',
      'counter',
      'Requests sent again after a retryable answer or transport error',
      s.retries,
    ),
    one('vespa_bulk_transport_errors_total', 'counter', 'Requests that got no HTTP answer', s.exceptions),
    one('vespa_bulk_sent_bytes_total', 'counter', 'Request body bytes sent', s.sentBytes),
    one('vespa_bulk_received_bytes_total', 'counter', 'Response body bytes received', s.receivedBytes),
    one('vespa_bulk_inflight', 'gauge', 'Requests in flight now', s.inflight),
    one('vespa_bulk_inflight_limit', 'gauge', 'The in-flight limit now (adaptive unless fixed)', s.inflightLimit),
    latencyFamily(s),
  ];
}

/**
 * Serves the running counters and the latency histogram in the Prometheus text format at `/metrics`, for a load
 * of hours watched in Grafana. Every scrape reads the run afresh through `sample`.
 * @example
 * ```ts
 * import { Feeder } from 'vespa-bulk';
 * import { feedSampler, startMetricsServer } from 'vespa-bulk/report';
 *
 * const feeder = new Feeder({ endpoint: 'http://127.0.0.1:8080' });
 * const metrics = await startMetricsServer({ port: 0, sample: feedSampler(feeder) });
 * console.log(`Prometheus may scrape ${metrics.url}`);
 * await feeder.run('corpus.jsonl');
 * await metrics.close();
 * ```
 */
export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '/').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: the metrics are at /metrics\n');
      return;
    }
    let text: string;
    try {
      text = prometheusText(families(options.sample()));
    } catch (err) {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(`${(err as Error).message}\n`);
      return;
    }
    res.writeHead(200, { 'content-type': prometheusContentType }).end(text);
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) =>
      reject(new VespaBulkError('VB_USAGE', `--metrics-port ${options.port}: ${err.message}`, { cause: err })),
    );
    server.listen(options.port, host, () => resolve());
  });
  // A scrape endpoint never keeps a finished run's process alive.
  server.unref();
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
