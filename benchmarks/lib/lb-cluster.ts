import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findShared } from './shared.js';
import { onTeardown } from './teardown.js';

/**
 * A container cluster behind a load balancer: `shared/lb-cluster/` beside the repository (or the folder
 * `LB_CLUSTER` names): N Jetty 12 nodes set up as the Vespa container (one JVM), each bounded to SLOTS operations
 * of DELAY_MS at once, behind HAProxy in TCP mode (L4: each connection to the next node, `lbUrl`) and in HTTP
 * mode (L7: each request to the next node, `l7Url`). up.sh starts it; down.sh ends it by pid, also when the
 * benchmark is interrupted.
 */
export function lbClusterDir(): string | undefined {
  return findShared('lb-cluster', process.env.LB_CLUSTER);
}

export interface ClusterOptions {
  nodes: number;
  delayMs: number;
  slots: number;
  queue?: number;
  /** HAProxy's HTTP mode too (default true). */
  l7?: boolean;
}

/** One node's GET /_stats (since its last reset or start); `down` where it did not answer. */
export interface NodeStats {
  count: number;
  rejected429: number;
  connections: number;
  errors: number;
  down?: boolean;
}

export interface Cluster {
  lbUrl: string;
  l7Url: string;
  controlUrl: string;
  nodePorts: number[];
  /** NODES x SLOTS / DELAY_MS: what the content nodes take per second at most. */
  nominal: number;
  stats(): Promise<NodeStats[]>;
  reset(): Promise<void>;
  /** Node i as a kill -9 would: its sockets closed, nothing in flight answered. Returns its last stats. */
  kill(i: number): Promise<NodeStats>;
  /** Node i again, on its port, with fresh stats. */
  start(i: number): Promise<void>;
  down(): void;
}

const get = async (url: string): Promise<string> => {
  const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
  if (!res.ok) throw new Error(`${url}: ${res.status}`);
  return res.text();
};

export async function startCluster(dir: string, o: ClusterOptions): Promise<Cluster> {
  const state = mkdtempSync(join(tmpdir(), 'vb-lb-cluster-'));
  const env = {
    ...process.env,
    NODES: String(o.nodes),
    DELAY_MS: String(o.delayMs),
    SLOTS: String(o.slots),
    QUEUE: String(o.queue ?? 256),
    L7: o.l7 === false ? '0' : '1',
  };
  let downed = false;
  const down = (): void => {
    if (downed) return;
    downed = true;
    spawnSync('bash', [join(dir, 'down.sh'), state], { stdio: 'inherit' });
    rmSync(state, { recursive: true, force: true });
  };
  const untrack = onTeardown(down);
  const up = spawn('bash', [join(dir, 'up.sh'), state], {
    env,
    stdio: ['ignore', 'inherit', 'inherit'],
    detached: true,
  });
  const code = await new Promise<number | null>((r) => up.once('exit', r));
  if (code !== 0) {
    const log = existsSync(join(state, 'nodes.log')) ? readFileSync(join(state, 'nodes.log'), 'utf8').slice(-600) : '';
    untrack();
    down();
    throw new Error(`lb-cluster up.sh exited ${code} ${log}`);
  }
  // DIR/env: KEY=value lines (NODE_PORTS quoted; the last line holds several).
  const vars = new Map<string, string>();
  for (const m of readFileSync(join(state, 'env'), 'utf8').matchAll(/(\w+)=("[^"]*"|\S+)/g))
    vars.set(m[1], m[2].replace(/"/g, ''));
  const nodePorts = vars.get('NODE_PORTS')!.split(/\s+/).filter(Boolean).map(Number);
  const controlUrl = vars.get('CONTROL_URL')!;
  const node = (p: number): string => `http://127.0.0.1:${p}`;
  return {
    lbUrl: vars.get('LB_URL')!,
    l7Url: vars.get('L7_URL') ?? '',
    controlUrl,
    nodePorts,
    nominal: (o.nodes * o.slots * 1000) / o.delayMs,
    stats: () =>
      Promise.all(
        nodePorts.map(async (p) => {
          try {
            return JSON.parse(await get(`${node(p)}/_stats`)) as NodeStats;
          } catch {
            return { count: 0, rejected429: 0, connections: 0, errors: 0, down: true };
          }
        }),
      ),
    reset: async () => void (await Promise.all(nodePorts.map((p) => get(`${node(p)}/_reset`).catch(() => '')))),
    kill: async (i) => JSON.parse((await get(`${controlUrl}/kill?i=${i}`)) || '{}') as NodeStats,
    start: async (i) => void (await get(`${controlUrl}/start?i=${i}`)),
    down: () => {
      untrack();
      down();
    },
  };
}

/** How evenly a run's requests (answers 200 and 429) fell on the nodes. */
export interface Spread {
  /** Requests (200 + 429) per node. */
  perNode: number[];
  /** Nodes that got any. */
  fed: number;
  minShare: number;
  maxShare: number;
  connections: number[];
}

export function spreadOf(stats: NodeStats[]): Spread {
  const perNode = stats.map((s) => s.count + s.rejected429);
  const total = perNode.reduce((a, b) => a + b, 0) || 1;
  const shares = perNode.map((n) => n / total);
  return {
    perNode,
    fed: perNode.filter((n) => n > 0).length,
    minShare: Math.min(...shares),
    maxShare: Math.max(...shares),
    connections: stats.map((s) => s.connections),
  };
}
