/**
 * How soon a restarted container node gets traffic again behind a layer-4 balancer: a feed with the defaults
 * through `../shared/lb-cluster` (HAProxy in TCP mode, round-robin per connection), node K killed (its sockets
 * closed as a killed process's) after `--kill` s and started again after `--start` s; prints each node's answered
 * count every second and the seconds from the node's start until it has answered 100 more.
 *
 * Usage: NODES=6 ../shared/lb-cluster/up.sh DIR && set -a && . DIR/env && set +a &&
 *        npx tsx benchmarks/pool/node-restart.ts --node 2 --kill 10 --start 25 [--max 300]; ../shared/lb-cluster/down.sh DIR
 * The official figures come from benchmarks/cluster/; this is the pool's own quick check.
 */
import { feed, type FeedOperationObject } from '../../src/index.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: number): number => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const node = flag('--node', 2);
const killS = flag('--kill', 10);
const startS = flag('--start', 25);
const maxS = flag('--max', 300);
const { LB_URL, CONTROL_URL, NODE_PORTS } = process.env;
if (LB_URL === undefined || CONTROL_URL === undefined || NODE_PORTS === undefined) {
  console.error('LB_URL, CONTROL_URL and NODE_PORTS from lb-cluster/up.sh DIR/env');
  process.exit(2);
}
const ports = NODE_PORTS.split(' ');
const count = async (port: string): Promise<number> => {
  try {
    return ((await (await fetch(`http://127.0.0.1:${port}/_stats`)).json()) as { count: number }).count;
  } catch {
    return -1;
  }
};
let stop = false;
async function* operations(): AsyncGenerator<FeedOperationObject> {
  for (let i = 0; !stop; i++) yield { put: `id:ns:music::d${i}`, fields: { n: i } };
}
const controller = new AbortController();
const t0 = performance.now();
const running = feed(operations(), { endpoint: LB_URL, signal: controller.signal, failures: false }).catch(
  (err: unknown) => err,
);
let started = false;
let killed = false;
let atStart = 0;
for (;;) {
  await new Promise((r) => setTimeout(r, 1000));
  const s = (performance.now() - t0) / 1000;
  if (!killed && s >= killS) {
    await fetch(`${CONTROL_URL}/kill?i=${node}`);
    killed = true;
    console.log(`${s.toFixed(0)} s: node ${node} killed`);
  }
  if (killed && !started && s >= startS) {
    await fetch(`${CONTROL_URL}/start?i=${node}`);
    started = true;
    await new Promise((r) => setTimeout(r, 300));
    atStart = await count(ports[node]);
    console.log(`${s.toFixed(0)} s: node ${node} started`);
  }
  const counts = await Promise.all(ports.map(count));
  console.log(`${s.toFixed(0)} s: answered ${counts.join(' ')}`);
  if (started && counts[node] > atStart + 100) {
    console.log(`node ${node} answered again ${(s - startS).toFixed(0)} s after its start`);
    break;
  }
  if (s > maxS) {
    console.log(`node ${node} got no traffic within ${maxS} s`);
    break;
  }
}
stop = true;
controller.abort();
await running;
