import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The real container's HTTP server (Jetty 12, set up as Vespa's connector) with a /document/v1 endpoint in
 * front of a simulated cluster: `shared/jetty-endpoint/start.sh` beside the repository, or the one
 * `JETTY_ENDPOINT` names. It is not part of this repository (it installs a JDK and Debian's Jetty on first use);
 * where it is missing the Jetty benchmarks say so and skip.
 */
const repo = fileURLToPath(new URL('../..', import.meta.url));

export function jettyScript(): string | undefined {
  const candidates = [process.env.JETTY_ENDPOINT, join(repo, '../shared/jetty-endpoint/start.sh')].filter((p): p is string => p !== undefined);
  return candidates.map((p) => resolve(p)).find((p) => existsSync(p));
}

export interface JettyEndpoint {
  url: string;
  /** Concurrency, 429s and connections seen since the last reset. */
  stats(): Promise<JettyStats>;
  reset(): Promise<void>;
  /** The endpoint's JVM, for its CPU time. */
  pid: number;
  stop(): Promise<void>;
}

export interface JettyStats {
  count: number;
  rejected429: number;
  connections: number;
  perConnectionMaxInProgress: number;
  overallMaxInProgress: number;
  requestsByProtocol: Record<string, number>;
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Starts an endpoint: each operation takes `delayMs` at the content nodes; `slots` > 0 bounds how many at once (capacity slots/delay). */
export async function startJetty(script: string, delayMs: number, slots = 0, queue = 256): Promise<JettyEndpoint> {
  const port = await freePort();
  const child: ChildProcess = spawn('bash', [script, String(port), String(delayMs), '512', String(slots), String(queue)], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let log = '';
  child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const started = performance.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the Jetty endpoint exited: ${log}`);
    try {
      const res = await fetch(`${url}/_count`);
      if (res.ok) break;
    } catch {
      // Not up yet.
    }
    if (performance.now() - started > 180_000) throw new Error(`the Jetty endpoint did not come up in 180 s: ${log}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    pid: child.pid!,
    stats: async () => (await (await fetch(`${url}/_stats`)).json()) as JettyStats,
    reset: async () => void (await fetch(`${url}/_reset`)).text(),
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      process.kill(-child.pid!, 'SIGTERM');
      await exited;
    },
  };
}
