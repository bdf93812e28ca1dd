import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { onTeardown } from './teardown.js';

/**
 * The null endpoint (`null-endpoint/main.go`): a Go /document/v1 server that answers every operation at once,
 * over HTTP/1.1 and h2c on one port, or TLS with ALPN. It is what a client's own cost is measured against, beside
 * h2load. Built here with Go and Debian's golang-golang-x-net-dev (GOPATH mode: no module proxy is needed), into
 * a cache keyed by the source; `NULL_ENDPOINT=path` names a prebuilt binary instead (as on the device machine).
 */
const source = fileURLToPath(new URL('./null-endpoint/main.go', import.meta.url));
const gopath = '/usr/share/gocode';

/** Why the endpoint cannot be built here, or undefined when it can (or a prebuilt one is named). */
export function nullEndpointMissing(): string | undefined {
  if (process.env.NULL_ENDPOINT)
    return existsSync(process.env.NULL_ENDPOINT) ? undefined : `no ${process.env.NULL_ENDPOINT}`;
  if (spawnSync('go', ['version']).status !== 0) return 'no Go toolchain (apt-get install golang-go)';
  if (!existsSync(join(gopath, 'src/golang.org/x/net/http2/h2c')))
    return 'no golang.org/x/net (apt-get install golang-golang-x-net-dev)';
  return undefined;
}

/** The binary's path, built once per source text. */
export function nullEndpointBinary(): string {
  if (process.env.NULL_ENDPOINT) return process.env.NULL_ENDPOINT;
  const hash = createHash('sha256').update(readFileSync(source)).digest('hex').slice(0, 12);
  const binary = join(tmpdir(), `vespa-bulk-null-endpoint-${hash}`);
  if (existsSync(binary)) return binary;
  const missing = nullEndpointMissing();
  if (missing) throw new Error(`cannot build the null endpoint: ${missing}`);
  const r = spawnSync('go', ['build', '-o', binary, '.'], {
    cwd: join(source, '..'),
    env: { ...process.env, GO111MODULE: 'off', GOPATH: gopath, CGO_ENABLED: '0' },
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`go build of the null endpoint failed: ${r.stderr}`);
  return binary;
}

export interface NullEndpoint {
  /** http://127.0.0.1:PORT (h2c by prior knowledge, or HTTP/1.1) or https://127.0.0.1:PORT. */
  url: string;
  child: ChildProcess;
  /** Operations answered so far. */
  count(): Promise<number>;
  stop(): Promise<void>;
}

/** Starts the endpoint; `tls` serves HTTPS with a self-signed certificate (clients must not verify it). */
export async function startNullEndpoint(o: { tls?: boolean } = {}): Promise<NullEndpoint> {
  const child = spawn(nullEndpointBinary(), o.tls ? ['-tls'] : [], { stdio: ['ignore', 'pipe', 'inherit'] });
  const untrack = onTeardown(() => child.kill('SIGKILL'));
  let out = '';
  child.stdout.setEncoding('utf8');
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (d: string) => {
      out += d;
      const m = /listening (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`the null endpoint exited ${code}`)));
  });
  const url = `${o.tls ? 'https' : 'http'}://127.0.0.1:${port}`;
  return {
    url,
    child,
    async count() {
      const r = await fetch(`http://127.0.0.1:${port}/_count`).catch(() => undefined);
      return r ? Number(await r.text()) : Number.NaN;
    },
    async stop() {
      untrack();
      if (child.exitCode === null) {
        child.kill('SIGKILL');
        await once(child, 'exit');
      }
    },
  };
}
