import { join } from 'node:path';
import { startJetty } from '../jetty/endpoint.js';
import { lbClusterDir, spreadOf, startCluster } from '../lib/lb-cluster.js';
import { ensureNginx, startNginx } from './nginx.js';

/**
 * What a topology of benchmarks/knee feeds: its URL, the flags and environment the two clients need for it, what
 * its servers saw of a run, and its fault, if it has one.
 */
export interface Target {
  url: string;
  /** A line about it for the heading (the nginx version, the cluster's nominal capacity). */
  about: string;
  /** Our CLI's flags for it (the CA of a TLS proxy). */
  flags: string[];
  /** The official CLI's environment for it. */
  officialEnv: Record<string, string>;
  reset(): Promise<void>;
  /** What the servers saw of the run since the last reset. */
  observe(): Promise<Observed>;
  /** The fault: begun and ended at the topology's seconds into each run. */
  fault?: { begin(): Promise<void>; end(): Promise<void> };
  /** Lines for the closing note (what a proxy logged). */
  notes(): string[];
  /** The cluster's nominal capacity, where it has one (ops/s). */
  nominal?: number;
  stop(): Promise<void>;
}

export interface Observed {
  /** Nodes behind the balancer that got requests, of `nodes`. */
  fed?: number;
  nodes?: number;
  /** The smallest node's share of the requests (even: 1 / nodes). */
  minShare?: number;
  /** Requests the faulted node answered after it was started again. */
  restartedCount?: number;
  /** Lines a proxy wrote to its error log during the run. */
  proxyErrors?: number;
}

const none = async (): Promise<Observed> => ({});

/** One Jetty endpoint (topologies 1-3); with `stall`, its JVM stopped (SIGSTOP) for the fault's span (6b). */
export async function jettyTarget(
  script: string,
  delayMs: number,
  slots: number,
  queue: number,
  stall = false,
): Promise<Target> {
  const endpoint = await startJetty(script, delayMs, slots, queue);
  let stopped = false;
  return {
    url: endpoint.url,
    about: '',
    flags: [],
    officialEnv: {},
    reset: () => endpoint.reset(),
    observe: none,
    // DocServer has no stall of its own: the whole JVM stops, as in a long GC pause (accepted connections wait).
    ...(stall && {
      fault: {
        begin: async () => {
          process.kill(endpoint.pid, 'SIGSTOP');
          stopped = true;
        },
        end: async () => {
          process.kill(endpoint.pid, 'SIGCONT');
          stopped = false;
        },
      },
    }),
    notes: () => [],
    stop: async () => {
      if (stopped) process.kill(endpoint.pid, 'SIGCONT');
      await endpoint.stop();
    },
  };
}

/**
 * `shared/lb-cluster` behind HAProxy in TCP mode (L4, topology 4); with `kill`, node 0 is killed (its sockets
 * closed as a killed process's) for the fault's span and started again on its port (6a).
 */
export async function clusterTarget(
  nodes: number,
  delayMs: number,
  slots: number,
  queue: number,
  kill = false,
): Promise<Target | string> {
  const dir = lbClusterDir();
  if (dir === undefined) return 'no shared/lb-cluster beside the repository';
  const cluster = await startCluster(dir, { nodes, delayMs, slots, queue, l7: false });
  let started = true;
  return {
    url: cluster.lbUrl,
    about: `${nodes} nodes x ${slots} slots x ${delayMs} ms + queue ${queue} behind HAProxy (TCP), nominal ${cluster.nominal}/s`,
    flags: [],
    officialEnv: {},
    nominal: cluster.nominal,
    reset: () => cluster.reset(),
    observe: async () => {
      const stats = await cluster.stats();
      const spread = spreadOf(stats);
      return {
        fed: spread.fed,
        nodes,
        minShare: spread.minShare,
        // Its stats start afresh when it starts again.
        ...(kill && { restartedCount: spread.perNode[0] }),
      };
    },
    ...(kill && {
      fault: {
        begin: async () => {
          await cluster.kill(0);
          started = false;
        },
        end: async () => {
          await cluster.start(0);
          started = true;
        },
      },
    }),
    notes: () => [],
    stop: async () => {
      if (!started) await cluster.start(0).catch(() => undefined);
      cluster.down();
    },
  };
}

/**
 * nginx (TLS, HTTP/2 to the clients, its default connection handling: see nginx.ts) in front of one Jetty
 * endpoint, unlimited at `delayMs` (topology 5): nothing behind nginx stops a climb, so only nginx's own limits do.
 * The certificates are the endpoint's throwaway ones (start.sh makes them when TLS_PORT is set).
 */
export async function nginxTarget(script: string, delayMs: number): Promise<Target> {
  const version = ensureNginx();
  const endpoint = await startJetty(script, delayMs, 0, 256, { tls: 'tls' });
  const tls = endpoint.tlsDir!;
  let nginx;
  try {
    nginx = await startNginx({
      upstream: endpoint.url,
      cert: join(tls, 'server.pem'),
      key: join(tls, 'server.key'),
      version,
    });
  } catch (err) {
    await endpoint.stop();
    throw err;
  }
  const ca = join(tls, 'ca.pem');
  let logged = 0;
  return {
    url: nginx.url,
    about: `nginx ${version} (1 worker, worker_connections 1024, HTTP/2 to clients, a new HTTP/1.1 upstream connection per request) in front of Jetty unlimited at ${delayMs} ms`,
    flags: ['--ca', ca],
    officialEnv: { VESPA_CLI_DATA_PLANE_CA_CERT_FILE: ca },
    reset: async () => {
      logged = nginx.errors().length;
      await endpoint.reset();
    },
    observe: async () => ({ proxyErrors: nginx.errors().length - logged }),
    notes: () => {
      const lines = nginx.errors();
      if (lines.length === 0) return ['nginx error log: empty'];
      // The distinct messages, without their timestamps and connection numbers.
      const kinds = new Map<string, number>();
      for (const l of lines) {
        const kind = l
          .replace(/^\S+ \S+ /, '')
          .replace(/\d+#\d+: \*?\d*/, '')
          .replace(/, client:.*$/, '')
          .trim();
        kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
      }
      return [
        `nginx error log: ${lines.length} lines`,
        ...[...kinds].slice(0, 5).map(([k, n]) => `  ${n} x ${k.slice(0, 160)}`),
      ];
    },
    stop: async () => {
      await nginx.stop();
      await endpoint.stop();
    },
  };
}
