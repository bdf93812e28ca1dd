import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Gauge, Registry, type Metric } from 'prom-client';
import { VespaBulkError } from '../errors.js';
import { cumulativeCounts } from './histogram.js';
import type { RunSample, RunSampler } from './sample.js';

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
 * recorded values themselves are never touched twice, and prom-client's own Histogram (one observe() per value)
 * would mean a second record on the per-operation path.
 */
class LatencyMetric {
  readonly name = 'vespa_bulk_operation_latency_seconds';
  readonly help = 'Latency of HTTP responses (each attempt), seconds';
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  constructor(private readonly current: () => RunSample) {}
  get() {
    const h = this.current().latencyUs;
    const counts = cumulativeCounts(h, latencyBucketsSeconds.map((s) => s * 1e6));
    const values = latencyBucketsSeconds.map((le, i) => ({ metricName: `${this.name}_bucket`, labels: { le }, value: counts[i] }));
    values.push({ metricName: `${this.name}_bucket`, labels: { le: '+Inf' as unknown as number }, value: h.totalCount });
    values.push({ metricName: `${this.name}_sum`, labels: {} as { le: number }, value: (h.mean * h.totalCount) / 1e6 });
    values.push({ metricName: `${this.name}_count`, labels: {} as { le: number }, value: h.totalCount });
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
  reset(): void {}
}

/**
 * Serves the running counters and the latency histogram in the Prometheus text format at `/metrics`, for a load
 * of hours watched in Grafana. Every scrape reads the run afresh through `sample`.
 */
export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const registry = new Registry();
  let sample: RunSample | undefined;
  // One sample per scrape, shared by every metric of that scrape, so the figures agree with each other.
  const current = () => (sample ??= options.sample());
  const counter = (name: string, help: string, read: (s: RunSample) => number) =>
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(read(current()));
      },
    });
  const gauge = (name: string, help: string, read: (s: RunSample) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read(current()));
      },
    });
  new Counter({
    name: 'vespa_bulk_operations_total',
    help: 'Operations done, by result: ok or failed (finally, after retries)',
    labelNames: ['result'],
    registers: [registry],
    collect() {
      this.reset();
      this.inc({ result: 'ok' }, current().ok);
      this.inc({ result: 'failed' }, current().failed);
    },
  });
  new Counter({
    name: 'vespa_bulk_responses_total',
    help: 'HTTP responses by status code (429s and other retried answers included)',
    labelNames: ['status'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [status, n] of Object.entries(current().status)) this.inc({ status }, n);
    },
  });
  counter('vespa_bulk_retries_total', 'Requests sent again after a retryable answer or transport error', (s) => s.retries);
  counter('vespa_bulk_transport_errors_total', 'Requests that got no HTTP answer', (s) => s.exceptions);
  counter('vespa_bulk_sent_bytes_total', 'Request body bytes sent', (s) => s.sentBytes);
  counter('vespa_bulk_received_bytes_total', 'Response body bytes received', (s) => s.receivedBytes);
  gauge('vespa_bulk_inflight', 'Requests in flight now', (s) => s.inflight);
  gauge('vespa_bulk_inflight_limit', 'The in-flight limit now (adaptive unless fixed)', (s) => s.inflightLimit);
  registry.registerMetric(new LatencyMetric(current) as unknown as Metric);

  const server: Server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '/').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: the metrics are at /metrics\n');
      return;
    }
    sample = undefined;
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${(err as Error).message}\n`),
    );
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) => reject(new VespaBulkError('VB_USAGE', `--metrics-port ${options.port}: ${err.message}`, { cause: err })));
    server.listen(options.port, host, () => resolve());
  });
  // A scrape endpoint never keeps a finished run's process alive.
  server.unref();
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/metrics`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
