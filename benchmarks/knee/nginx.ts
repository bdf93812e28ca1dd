import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTeardown } from '../lib/teardown.js';
import { freePort } from '../jetty/endpoint.js';

/**
 * nginx from Debian as a TLS-terminating reverse proxy (issue 42, topology 5): a child process with its own
 * configuration and prefix in a temporary folder (`nginx -c CONF -p PREFIX -g 'daemon off;'`), ended by pid.
 *
 * Its settings are the defaults a user meets, with the issue's numbers: one worker (the compiled default;
 * Debian's nginx.conf says `auto`), 1,024 worker connections (nginx.org's packaged nginx.conf; the compiled
 * default is 512, Debian's 768), and the upstream as `proxy_pass` makes it without an upstream `keepalive`: one
 * new HTTP/1.1 connection per request in flight, each counted against the worker's connections beside the
 * clients'. HTTP/2 is on for the clients (ALPN), as in front of a feed endpoint; 128 streams per connection.
 */
export interface Nginx {
  url: string;
  /** The lines nginx wrote to its error log (`worker_connections are not enough` and the like). */
  errors(): string[];
  stop(): Promise<void>;
}

/** Installs Debian's nginx when missing (as lb-cluster's up.sh installs HAProxy); returns its version. */
export function ensureNginx(): string {
  const which = spawnSync('bash', ['-c', 'command -v nginx'], { encoding: 'utf8' });
  if (which.status !== 0) {
    console.log('installing nginx (apt-get)');
    const r = spawnSync(
      'bash',
      ['-c', 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null'],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    if (r.status !== 0) throw new Error('apt-get install nginx failed');
  }
  const v = spawnSync('nginx', ['-v'], { encoding: 'utf8' });
  return /nginx\/([\d.]+)/.exec(v.stderr)?.[1] ?? '?';
}

const atLeast = (version: string, want: number[]): boolean => {
  const have = version.split('.').map(Number);
  for (let i = 0; i < want.length; i++) if ((have[i] ?? 0) !== want[i]) return (have[i] ?? 0) > want[i];
  return true;
};

export async function startNginx(o: { upstream: string; cert: string; key: string; version: string }): Promise<Nginx> {
  const prefix = mkdtempSync(join(tmpdir(), 'vb-nginx-'));
  mkdirSync(join(prefix, 'logs'));
  const port = await freePort();
  // `http2 on` from 1.25.1; before it, a parameter of listen.
  const h2 = atLeast(o.version, [1, 25, 1]);
  const conf = join(prefix, 'nginx.conf');
  writeFileSync(
    conf,
    `worker_processes 1;
pid ${prefix}/nginx.pid;
error_log ${prefix}/logs/error.log warn;
events {
  worker_connections 1024;
}
http {
  access_log off;
  client_body_temp_path ${prefix}/body;
  proxy_temp_path ${prefix}/proxy;
  fastcgi_temp_path ${prefix}/fastcgi;
  uwsgi_temp_path ${prefix}/uwsgi;
  scgi_temp_path ${prefix}/scgi;
  server {
    listen 127.0.0.1:${port} ssl${h2 ? '' : ' http2'};
    ${h2 ? 'http2 on;' : ''}
    ssl_certificate ${o.cert};
    ssl_certificate_key ${o.key};
    location / {
      proxy_pass ${o.upstream};
      proxy_http_version 1.1;
    }
  }
}
`,
  );
  const child = spawn('nginx', ['-c', conf, '-p', prefix, '-g', 'daemon off;'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  let log = '';
  child.stderr.on('data', (d: Buffer) => (log += d.toString()));
  const untrack = onTeardown(() => {
    if (child.exitCode === null) process.kill(-child.pid!, 'SIGKILL');
  });
  const url = `https://127.0.0.1:${port}`;
  const errorLog = join(prefix, 'logs/error.log');
  const started = performance.now();
  // Up when its port takes a connection (the TLS handshake is the clients' business).
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited ${child.exitCode}: ${log}`);
    const open = await new Promise<boolean>((r) => {
      const s = connect(port, '127.0.0.1', () => {
        s.destroy();
        r(true);
      });
      s.once('error', () => r(false));
    });
    if (open) break;
    if (performance.now() - started > 10_000) throw new Error(`nginx did not listen in 10 s: ${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    errors: () => (existsSync(errorLog) ? readFileSync(errorLog, 'utf8').split('\n').filter(Boolean) : []),
    stop: async () => {
      untrack();
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        process.kill(-child.pid!, 'SIGQUIT');
        await exited;
      }
      rmSync(prefix, { recursive: true, force: true });
    },
  };
}
