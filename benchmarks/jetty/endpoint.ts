import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { findShared } from '../lib/shared.js';
import { onTeardown } from '../lib/teardown.js';

/**
 * The real container's HTTP server (Jetty 12, set up as Vespa's connector) with a /document/v1 endpoint in
 * front of a simulated cluster: `shared/jetty-endpoint/start.sh` beside the repository (or beside a folder
 * above it: a worktree), or the one `JETTY_ENDPOINT` names. It is not part of this repository (it installs a JDK
 * and Debian's Jetty on first use); where it is missing the Jetty benchmarks say so and skip.
 */
export function jettyScript(): string | undefined {
  return findShared('jetty-endpoint/start.sh', process.env.JETTY_ENDPOINT);
}

export interface JettyEndpoint {
  url: string;
  /** With `tls`: the TLS connector (ALPN h2, then http/1.1), `https://127.0.0.1:PORT`. */
  tlsUrl?: string;
  /**
   * With `tls`: where start.sh keeps the throwaway CA and certificates (`$JETTY_ENDPOINT_CACHE/tls`): `ca.pem`
   * (trust it), `client.pem` and `client.key` (for mTLS).
   */
  tlsDir?: string;
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

/** A port free on 127.0.0.1 now (for a child server told its port). */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

export interface JettyOptions {
  /** Adds start.sh's TLS connector (TLS_PORT), with its throwaway CA; `'mtls'` demands client certificates (TLS_CLIENT_CA). */
  tls?: 'tls' | 'mtls';
}

/** Starts an endpoint: each operation takes `delayMs` at the content nodes; `slots` > 0 bounds how many at once (capacity slots/delay). */
export async function startJetty(
  script: string,
  delayMs: number,
  slots = 0,
  queue = 256,
  options: JettyOptions = {},
): Promise<JettyEndpoint> {
  const port = await freePort();
  const tlsPort = options.tls !== undefined ? await freePort() : undefined;
  const tlsDir = join(process.env.JETTY_ENDPOINT_CACHE ?? '/tmp/jetty-endpoint', 'tls');
  const env = { ...process.env };
  if (tlsPort !== undefined) env.TLS_PORT = String(tlsPort);
  if (options.tls === 'mtls') env.TLS_CLIENT_CA = join(tlsDir, 'ca.pem');
  const child: ChildProcess = spawn(
    'bash',
    [script, String(port), String(delayMs), '512', String(slots), String(queue)],
    { stdio: ['ignore', 'ignore', 'pipe'], detached: true, env },
  );
  // Its own process group (so a Ctrl-C meant for the benchmark reaches it only through this).
  const untrack = onTeardown(() => {
    if (child.exitCode === null) process.kill(-child.pid!, 'SIGKILL');
  });
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
    ...(tlsPort !== undefined && { tlsUrl: `https://127.0.0.1:${tlsPort}`, tlsDir }),
    pid: child.pid!,
    stats: async () => (await (await fetch(`${url}/_stats`)).json()) as JettyStats,
    reset: async () => void (await fetch(`${url}/_reset`)).text(),
    stop: async () => {
      untrack();
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      process.kill(-child.pid!, 'SIGTERM');
      await exited;
    },
  };
}
